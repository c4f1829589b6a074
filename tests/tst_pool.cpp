// The worker pool with real workers: a worker that faults, hangs, or is killed mid-request is
// restarted, the request gets a verdict naming what happened, and later requests still run. Hostile
// workers are real processes too (a shell script that says hello and then misbehaves): whatever they
// send, the pool does not throw, and the verdict says what happened. Workers get a scrubbed
// environment, and what a dead worker said is stored with its secrets redacted.
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>
#include <csignal>
#include <fcntl.h>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <set>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "ops/operator_card.h"
#include "pool/compile_ahead.h"
#include "pool/worker_pool.h"
#include "test_support.h"
#include "util/error.h"
#include "util/redact.h"
#include "util/text.h"

using namespace kforge;

namespace {

// A worker that speaks the protocol's hello, then misbehaves as its first argument says.
const char *kHostileWorker = R"SH(#!/bin/sh
mode=$1
if [ "$mode" = env ]; then env > "$2/env.txt"; ls -l /proc/$$/fd > "$2/fds.txt" 2>&1; fi
IFS= read -r hello
case "$mode" in
  hello-array) echo '[]'; sleep 5; exit 0;;
  hello-binary) printf '\377\376\001\n'; sleep 5; exit 0;;
  hello-protocol) echo '{"id":0,"type":"hello","ok":true,"protocol":"one"}'; sleep 5; exit 0;;
esac
printf '{"id":0,"type":"hello","ok":true,"protocol":1,"worker":"hostile-%s","backends":["cpu"],"devices":[]}\n' "$mode"
while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in *'"type":"shutdown"'*) printf '{"id":%s,"type":"bye","ok":true}\n' "$id"; exit 0;; esac
  case "$mode" in
    array) echo '[]';;
    number) echo '42';;
    status) printf '{"id":%s,"type":"result","ok":true,"verdict":{"status":"splendid"}}\n' "$id";;
    failure) printf '{"id":%s,"type":"failure","status":"splendid","code":7,"message":"boom"}\n' "$id";;
    verdict-array) printf '{"id":%s,"type":"result","ok":true,"verdict":[1,2]}\n' "$id";;
    type) printf '{"id":%s,"type":"bogus"}\n' "$id";;
    wrong-id) printf '{"id":99999,"type":"result","ok":true,"verdict":{}}\n';;
    invalid-utf8) printf '{"id":%s,"type":"result","verdict":"\377\376"}\n' "$id";;
    binary) printf 'ok\377\000\033[2J\n';;
    huge) head -c 2000000 /dev/zero | tr '\0' x; echo;;
    no-newline) head -c 2000000 /dev/zero | tr '\0' x; sleep 30;;
    noisy) head -c 3000000 /dev/zero | tr '\0' y >&2; echo >&2; echo "the end of the noise" >&2; exit 3;;
    leak) echo "config: OPENAI_API_KEY=$2" >&2
          echo "curl -H 'Authorization: Bearer abcdefghijklmnop123'" >&2
          echo "retrying with api_key=hunter2hunter2 and the key $2" >&2
          echo "fell over" >&2; exit 3;;
    env) printf '{"id":%s,"type":"failure","status":"error","code":"bad_request","message":"env written"}\n' "$id";;
  esac
done
)SH";

// A worker that compiles ahead for cpu ($2: its prepare_threads): it logs each prepare hint and each
// evaluation by the job number in the candidate's source to $1/hints.log, and fails each evaluation
// after a moment, so the pool's queue is full while it works.
const char *kHintWorker = R"SH(#!/bin/sh
IFS= read -r hello
printf '{"id":0,"type":"hello","ok":true,"protocol":1,"worker":"hints","backends":["cpu"],"devices":[],"prepares":["cpu"],"prepare_threads":%s}\n' "$2"
while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in *'"type":"shutdown"'*) printf '{"id":%s,"type":"bye","ok":true}\n' "$id"; exit 0;; esac
  job=$(printf '%s\n' "$line" | sed -n 's/.*kf-job-\([0-9][0-9]*\).*/\1/p')
  case "$line" in
    *'"type":"prepare"'*) echo "prepare $job" >> "$1/hints.log";;
    *) echo "evaluate $job" >> "$1/hints.log"; sleep 0.2
       printf '{"id":%s,"type":"failure","status":"error","code":"bad_request","message":"logged"}\n' "$id";;
  esac
done
)SH";

// What CompileAhead builds in the tests: which key, on which thread.
struct Built {
    std::string key;
    std::thread::id by;
};

// A gate a compile waits at until the test opens it.
struct Gate {
    std::promise<void> open;
    std::shared_future<void> opened = open.get_future().share();
};

template<class Pred>
bool eventually(Pred pred, int ms = 5000)
{
    QElapsedTimer t;
    t.start();
    while (!pred()) {
        if (t.elapsed() > ms)
            return false;
        QThread::msleep(5);
    }
    return true;
}

} // namespace

class TestPool : public QObject {
    Q_OBJECT
private:
    static EvalOptions quick(int deadlineMs = 60000)
    {
        EvalOptions o;
        o.benchSamples = 5;
        o.warmup = 1;
        o.deadlineMs = deadlineMs;
        return o;
    }
    const OperatorCard m_card = makeSoftmaxCard(64, 256);
    QTemporaryDir m_dir;

    std::string hostile(const std::string &mode, const std::string &arg = {}) const
    {
        return "sh '" + m_dir.filePath(QStringLiteral("hostile.sh")).toStdString() + "' " + mode + (arg.empty() ? "" : " '" + arg + "'");
    }

    static PoolOptions hostileOptions(std::string command)
    {
        PoolOptions po(std::move(command), 1);
        po.helloTimeoutMs = 10000;
        po.limits.maxLineBytes = size_t(1) << 20;
        return po;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QFile f(m_dir.filePath(QStringLiteral("hostile.sh")));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(kHostileWorker);
    }

    void faultIsContainedInTheSandbox()
    {
        // A candidate that faults dies in its own sandboxed process: the verdict names the signal and
        // the worker serves the next request without a restart.
        WorkerPool pool({test::workerCommand(), 1});
        std::vector<PoolEvent> events;
        std::mutex mu;
        pool.setEventSink([&](const PoolEvent &e) { std::lock_guard l(mu); events.push_back(e); });
        pool.start();
        const Verdict crashed = pool.evaluate(m_card, test::cpuKernel("crash.cpp"), quick());
        QCOMPARE(crashed.status, VerdictStatus::Crashed);
        QCOMPARE(crashed.reasons.front().code, std::string(reason::Crashed));
        QVERIFY2(crashed.reasons.front().message.find("SIGSEGV (11)") != std::string::npos, crashed.reasons.front().message.c_str());
        const Verdict after = pool.evaluate(m_card, test::cpuKernel("good_softmax.cpp"), quick());
        QVERIFY2(after.correct(), after.summaryLine().c_str());
        QCOMPARE(pool.restarts(), 0);
        std::lock_guard l(mu);
        QVERIFY(std::none_of(events.begin(), events.end(), [](auto &e) { return e.kind == "crashed"; }));
    }

    void hangIsStoppedByTheDeadline()
    {
        WorkerPool pool({test::workerCommand(), 1});
        pool.start();
        QElapsedTimer timer;
        timer.start();
        const Verdict hung = pool.evaluate(m_card, test::cpuKernel("hang.cpp"), quick(3000));
        QCOMPARE(hung.status, VerdictStatus::Timeout);
        QVERIFY(hung.reasons.front().message.find("3000 ms") != std::string::npos);
        QVERIFY(timer.elapsed() < 20000);
        const Verdict after = pool.evaluate(m_card, test::cpuKernel("good_softmax.cpp"), quick());
        QVERIFY2(after.correct(), after.summaryLine().c_str());
    }

    void workerKilledMidRequest()
    {
        WorkerPool pool({test::workerCommand(), 1});
        pool.start();
        const auto pids = pool.pids();
        QCOMPARE(pids.size(), size_t(1));
        auto pending = std::async(std::launch::async, [&] { return pool.evaluate(m_card, test::cpuKernel("slow_correct.cpp"), quick()); });
        // Queue more work behind it: it must run on the restarted worker.
        auto queued = std::async(std::launch::async, [&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            return pool.evaluate(m_card, test::cpuKernel("good_softmax.cpp"), quick());
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(1200)); // compiled, now sleeping inside the kernel
        QCOMPARE(::kill(pids[0], SIGKILL), 0);
        const Verdict killed = pending.get();
        QCOMPARE(killed.status, VerdictStatus::Crashed);
        // A crash the pool reports still says where it ran.
        QCOMPARE(killed.device, deviceLabel(helloDevice(pool.hellos().front(), "cpu")));
        QVERIFY(!killed.device.empty());
        QVERIFY2(killed.reasons.front().message.find("signal 9") != std::string::npos, killed.reasons.front().message.c_str());
        const Verdict next = queued.get();
        QVERIFY2(next.correct(), next.summaryLine().c_str());
        QVERIFY(pool.pids().front() != pids[0]);
    }

    void severalWorkersRunAtOnce()
    {
        WorkerPool pool({test::workerCommand(), 2});
        pool.start();
        QCOMPARE(pool.size(), 2);
        std::vector<std::future<Verdict>> results;
        for (int i = 0; i < 4; ++i)
            results.push_back(std::async(std::launch::async, [&] { return pool.evaluate(m_card, test::cpuKernel("good_softmax.cpp"), quick()); }));
        // Each verdict names its worker and the device that worker announced: where both sides ran.
        std::map<std::string, std::string> deviceOf;
        for (const auto &h : pool.hellos())
            deviceOf[h.value("worker", "")] = deviceLabel(helloDevice(h, "cpu"));
        QCOMPARE(deviceOf.size(), size_t(2));
        std::set<std::string> workers;
        for (auto &r : results) {
            const auto v = r.get();
            QVERIFY(v.correct());
            workers.insert(v.worker);
            QVERIFY2(deviceOf.count(v.worker), v.worker.c_str());
            QCOMPARE(v.device, deviceOf[v.worker]);
            QVERIFY2(v.device.rfind("cpu ", 0) == 0, v.device.c_str());
        }
        QCOMPARE(workers.size(), size_t(2));
    }

    void badCommandFailsClearly()
    {
        WorkerPool pool({"/nonexistent/kforge-worker", 1});
        try {
            pool.start();
            QFAIL("a pool with no worker started");
        } catch (const Error &e) {
            QVERIFY2(std::string(e.what()).find("no worker could be started") != std::string::npos, e.what());
            QVERIFY2(std::string(e.what()).find("exited with status 127") != std::string::npos, e.what());
        }
    }

    // Whatever a worker answers, the request gets a verdict that says what happened, and the pool
    // keeps serving: a worker that broke the protocol is replaced, one that sent a bad verdict is kept.
    void hostileRepliesBecomeVerdicts_data()
    {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("status");
        QTest::addColumn<QString>("message");
        QTest::addColumn<bool>("replaced");
        QTest::newRow("an array") << QStringLiteral("array") << QStringLiteral("crashed") << QStringLiteral("not a JSON object (array: [])") << true;
        QTest::newRow("a number") << QStringLiteral("number") << QStringLiteral("crashed") << QStringLiteral("not a JSON object (number: 42)") << true;
        QTest::newRow("a verdict with an unknown status")
            << QStringLiteral("status") << QStringLiteral("error") << QStringLiteral("verdict was malformed: unknown verdict status 'splendid'") << false;
        QTest::newRow("a failure with an unknown status and a numeric code")
            << QStringLiteral("failure") << QStringLiteral("error") << QStringLiteral("unknown verdict status 'splendid'") << false;
        QTest::newRow("a verdict that is an array") << QStringLiteral("verdict-array") << QStringLiteral("error") << QStringLiteral("verdict was malformed")
                                                   << false;
        QTest::newRow("a reply of an unknown type") << QStringLiteral("type") << QStringLiteral("error") << QStringLiteral("reply of type 'bogus'")
                                                   << false;
        QTest::newRow("a reply to another request") << QStringLiteral("wrong-id") << QStringLiteral("crashed") << QStringLiteral("a reply with id 99999")
                                                   << true;
        QTest::newRow("JSON with invalid UTF-8") << QStringLiteral("invalid-utf8") << QStringLiteral("crashed") << QStringLiteral("not JSON") << true;
        QTest::newRow("binary bytes") << QStringLiteral("binary") << QStringLiteral("crashed") << QStringLiteral("not JSON (8 bytes: ok\\xFF\\x00\\x1B[2J)")
                                      << true;
        QTest::newRow("a line over the cap") << QStringLiteral("huge") << QStringLiteral("crashed")
                                            << QStringLiteral("a reply line over the 1048576-byte limit") << true;
        QTest::newRow("bytes with no newline") << QStringLiteral("no-newline") << QStringLiteral("crashed")
                                              << QStringLiteral("bytes and no end of line yet)") << true;
    }

    void hostileRepliesBecomeVerdicts()
    {
        QFETCH(QString, mode);
        QFETCH(QString, status);
        QFETCH(QString, message);
        QFETCH(bool, replaced);
        WorkerPool pool(hostileOptions(hostile(mode.toStdString())));
        std::vector<PoolEvent> events;
        std::mutex mu;
        pool.setEventSink([&](const PoolEvent &e) { std::lock_guard l(mu); events.push_back(e); });
        pool.start();
        const auto first = pool.pids();
        for (int round = 0; round < 2; ++round) {
            QElapsedTimer timer;
            timer.start();
            const Verdict v = pool.evaluate(m_card, test::cpuKernel("good_softmax.cpp"), quick(20000));
            QVERIFY2(timer.elapsed() < 15000, "the verdict waited for the deadline");
            QCOMPARE(QString::fromStdString(statusName(v.status)), status);
            QVERIFY(!v.reasons.empty());
            const auto &msg = v.reasons.front().message;
            QVERIFY2(QString::fromStdString(msg).contains(message), msg.c_str());
            QVERIFY2(isValidUtf8(msg), "the message must be storable and printable as JSON");
            QCOMPARE(v.worker, "hostile-" + mode.toStdString());
        }
        // The second request ran on a replacement when the first broke the protocol.
        QCOMPARE(pool.restarts(), replaced ? 1 : 0);
        QCOMPARE(pool.pids() != first, replaced);
        std::lock_guard l(mu);
        QCOMPARE(std::count_if(events.begin(), events.end(), [](auto &e) { return e.kind == "protocol_violation"; }), replaced ? 2L : 0L);
    }

    void hostileHelloFailsTheStartClearly_data()
    {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("message");
        QTest::newRow("an array") << QStringLiteral("hello-array") << QStringLiteral("expected a hello object, got []");
        QTest::newRow("binary bytes") << QStringLiteral("hello-binary") << QStringLiteral("hello was not understood");
        QTest::newRow("a protocol that is a string") << QStringLiteral("hello-protocol") << QStringLiteral("it speaks protocol \"one\"");
    }

    void hostileHelloFailsTheStartClearly()
    {
        QFETCH(QString, mode);
        QFETCH(QString, message);
        WorkerPool pool(hostileOptions(hostile(mode.toStdString())));
        try {
            pool.start();
            QFAIL("a pool whose worker said no proper hello started");
        } catch (const Error &e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(message), e.what());
            QVERIFY(isValidUtf8(e.what()));
        }
    }

    // A worker that floods stderr is not blocked by it, and neither the log file nor what the pool
    // keeps in memory grows past its cap; the verdict quotes the end.
    void stderrIsDrainedAndCapped()
    {
        auto po = hostileOptions(hostile("noisy"));
        po.limits.maxLogBytes = 256 << 10;
        WorkerPool pool(po);
        pool.start();
        const Verdict v = pool.evaluate(m_card, test::cpuKernel("good_softmax.cpp"), quick(20000));
        QCOMPARE(v.status, VerdictStatus::Crashed);
        const auto &msg = v.reasons.front().message;
        QVERIFY2(msg.find("exited with status 3") != std::string::npos, msg.c_str());
        QVERIFY2(msg.find("the end of the noise") != std::string::npos, msg.c_str());
        QVERIFY2(msg.size() < po.lastWordsBytes + 200, "the last words are capped");
        const auto log = std::filesystem::path(pool.logDir()) / "worker-0.log";
        const auto size = std::filesystem::file_size(log);
        QVERIFY2(size >= po.limits.maxLogBytes && size < po.limits.maxLogBytes + po.limits.tailBytes + 400, std::to_string(size).c_str());
        const auto text = test::readAll(QString::fromStdString(log.string()));
        QVERIFY(text.contains("the worker wrote 3000022 bytes to stderr"));
        QVERIFY(text.trimmed().endsWith("the end of the noise"));
    }

    // The worker's environment is an allow-list, and nothing secret-looking passes even when allowed.
    void workerEnvironmentIsScrubbed()
    {
        const std::vector<std::pair<const char *, const char *>> secrets = {
            {"OPENAI_API_KEY", "sk-test-0123456789abcdef"}, {"KFORGE_SECRET", "kforge-secret-value"},
            {"GITHUB_TOKEN", "ghp_0123456789abcdefghij"},   {"DB_PASSWORD", "correct-horse-battery"},
            {"AWS_SECRET_ACCESS_KEY", "aws-secret-value-42"}, {"GOOGLE_APPLICATION_CREDENTIALS", "/home/me/creds.json"},
            {"CUDA_TOKEN_FILE", "/run/cuda-token"}};
        for (const auto &[k, v] : secrets)
            qputenv(k, v);
        qputenv("KFORGE_UNRELATED_SETTING", "kept");
        qputenv("SOME_RANDOM_VARIABLE", "dropped");
        // A descriptor we leave inheritable must not reach the worker either.
        QTemporaryDir out;
        const auto marker = out.filePath(QStringLiteral("inheritable-marker")).toStdString();
        const int fd = ::open(marker.c_str(), O_CREAT | O_WRONLY, 0600);
        QVERIFY(fd >= 0);
        {
            WorkerPool pool(hostileOptions(hostile("env", out.path().toStdString())));
            pool.start();
            const Verdict v = pool.evaluate(m_card, test::cpuKernel("good_softmax.cpp"), quick(20000));
            QVERIFY2(v.reasons.front().message == "env written", v.summaryLine().c_str());
        }
        ::close(fd);
        for (const auto &[k, v] : secrets)
            qunsetenv(k);
        qunsetenv("KFORGE_UNRELATED_SETTING");
        qunsetenv("SOME_RANDOM_VARIABLE");
        const auto env = QString::fromUtf8(test::readAll(out.filePath(QStringLiteral("env.txt"))));
        QVERIFY2(env.contains(QStringLiteral("PATH=")), qPrintable(env));
        QVERIFY(env.contains(QStringLiteral("KFORGE_WORKER_SLOT=0")));
        QVERIFY(env.contains(QStringLiteral("KFORGE_UNRELATED_SETTING=kept")));
        QVERIFY(!env.contains(QStringLiteral("SOME_RANDOM_VARIABLE")));
        for (const auto &[k, v] : secrets) {
            QVERIFY2(!env.contains(QString::fromLatin1(k)), k);
            QVERIFY2(!env.contains(QString::fromLatin1(v)), v);
        }
        const auto fds = QString::fromUtf8(test::readAll(out.filePath(QStringLiteral("fds.txt"))));
        QVERIFY2(!fds.isEmpty(), "the worker listed its descriptors");
        QVERIFY2(!fds.contains(QString::fromStdString(marker)), qPrintable(fds));
    }

    void environmentRule_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("passes");
        QTest::newRow("PATH") << QStringLiteral("PATH") << true;
        QTest::newRow("LC_ALL") << QStringLiteral("LC_ALL") << true;
        QTest::newRow("CUDA_VISIBLE_DEVICES") << QStringLiteral("CUDA_VISIBLE_DEVICES") << true;
        QTest::newRow("SLURM_JOB_ID") << QStringLiteral("SLURM_JOB_ID") << true;
        QTest::newRow("SSH_AUTH_SOCK") << QStringLiteral("SSH_AUTH_SOCK") << true;
        QTest::newRow("OMP_NUM_THREADS") << QStringLiteral("OMP_NUM_THREADS") << true;
        QTest::newRow("a bare prefix") << QStringLiteral("CUDA_") << false;
        QTest::newRow("not listed") << QStringLiteral("DISPLAY") << false;
        QTest::newRow("PATHX") << QStringLiteral("PATHX") << false;
        QTest::newRow("an API key") << QStringLiteral("ANTHROPIC_API_KEY") << false;
        QTest::newRow("an allowed prefix with a token") << QStringLiteral("KFORGE_HF_TOKEN") << false;
        QTest::newRow("a secret in lower case") << QStringLiteral("slurm_secret") << false;
        QTest::newRow("a password") << QStringLiteral("TORCH_PASSWORD") << false;
        QTest::newRow("credentials") << QStringLiteral("NVIDIA_CREDENTIALS") << false;
    }

    void environmentRule()
    {
        QFETCH(QString, name);
        QFETCH(bool, passes);
        QCOMPARE(allowedInWorkerEnvironment(name.toStdString()), passes);
        const std::string entry = name.toStdString() + "=v";
        char *envp[] = {const_cast<char *>(entry.c_str()), nullptr};
        const auto env = workerEnvironment({}, envp);
        QCOMPARE(std::find(env.begin(), env.end(), entry) != env.end(), passes);
        // What the pool adds passes the same secret test.
        const auto extra = workerEnvironment({{name.toStdString(), "v"}}, envp);
        QCOMPARE(std::find(extra.begin(), extra.end(), entry) != extra.end(), !looksLikeSecretName(name.toStdString()));
    }

    // A dead worker's stderr is stored in the session: the values of our secret variables and the
    // shapes of secrets are redacted.
    void lastWordsAreRedacted()
    {
        const std::string key = "sk-proj-abcdefghijklmnopqrstuvwx";
        qputenv("OPENAI_API_KEY", QByteArray::fromStdString(key));
        WorkerPool pool(hostileOptions(hostile("leak", key)));
        pool.start();
        const Verdict v = pool.evaluate(m_card, test::cpuKernel("good_softmax.cpp"), quick(20000));
        qunsetenv("OPENAI_API_KEY");
        QCOMPARE(v.status, VerdictStatus::Crashed);
        const auto &msg = v.reasons.front().message;
        QVERIFY2(msg.find("its last words") != std::string::npos, msg.c_str());
        QVERIFY2(msg.find("fell over") != std::string::npos, msg.c_str());
        QVERIFY2(msg.find(key) == std::string::npos, msg.c_str());
        QVERIFY2(msg.find("abcdefghijklmnop123") == std::string::npos, msg.c_str());
        QVERIFY2(msg.find("hunter2hunter2") == std::string::npos, msg.c_str());
        QVERIFY2(msg.find("Bearer [redacted]") != std::string::npos, msg.c_str());
        QVERIFY2(msg.find("api_key=[redacted]") != std::string::npos, msg.c_str());
    }

    void redaction_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        QTest::newRow("a known value") << QStringLiteral("using s3cr3t-value-xyz now") << QStringLiteral("using [redacted] now");
        QTest::newRow("an OpenAI key") << QStringLiteral("key sk-abcdefghijklmnop1234 failed") << QStringLiteral("key [redacted] failed");
        QTest::newRow("an Anthropic key") << QStringLiteral("x-api-key: sk-ant-api03-abcdefgh_ijkl") << QStringLiteral("x-api-key: [redacted]");
        QTest::newRow("not a key: a word ending in sk") << QStringLiteral("task-manager-running") << QStringLiteral("task-manager-running");
        QTest::newRow("a bearer token") << QStringLiteral("Authorization: Bearer eyJhbGciOi.J9.abc") << QStringLiteral("Authorization: Bearer [redacted]");
        QTest::newRow("an assignment") << QStringLiteral("api_key=abc123def, next") << QStringLiteral("api_key=[redacted], next");
        QTest::newRow("a JSON member") << QStringLiteral(R"({"access_token": "abc def", "n": 1})") << QStringLiteral(R"({"access_token": "[redacted]", "n": 1})");
        QTest::newRow("an environment line") << QStringLiteral("HF_TOKEN=hf_abc") << QStringLiteral("HF_TOKEN=[redacted]");
        QTest::newRow("a password option") << QStringLiteral("--password: hunter2") << QStringLiteral("--password: [redacted]");
        QTest::newRow("a GitHub token") << QStringLiteral("ghp_abcdefghijklmnopqrstuvwxyz") << QStringLiteral("[redacted]");
        QTest::newRow("a private key")
            << QStringLiteral("a\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\nb")
            << QStringLiteral("a\n[redacted private key]\nb");
        QTest::newRow("ordinary text") << QStringLiteral("cuda_fault: an illegal memory access; key=3 rows") << QStringLiteral("cuda_fault: an illegal memory access; key=3 rows");
    }

    void redaction()
    {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        Redactor r;
        r.addSecret("s3cr3t-value-xyz");
        r.addSecret("abc"); // too short to mean anything
        QCOMPARE(QString::fromStdString(r.redact(text.toStdString())), expected);
    }

    // Workers are forked by the pool's own threads: a pool started from a thread that then ends still
    // has its workers (they die with the thread that forked them).
    void workersOutliveTheThreadThatStartedThePool()
    {
        WorkerPool pool({test::workerCommand(), 1});
        std::thread([&] { pool.start(); }).join();
        const auto pids = pool.pids();
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        const Verdict v = pool.evaluate(m_card, test::cpuKernel("good_softmax.cpp"), quick());
        QVERIFY2(v.correct(), v.summaryLine().c_str());
        QCOMPARE(pool.restarts(), 0);
        QCOMPARE(pool.pids(), pids);
    }

    // The pool tells a worker that compiles ahead of the next K queued evaluations before each one it
    // sends (K: PoolOptions::compileAhead, capped by the worker's prepare_threads), each only once, and
    // keeps K more than its workers queued for that backend (lookahead); K = 0 sends no hint.
    void hintsTheNextQueuedEvaluations_data()
    {
        QTest::addColumn<int>("ahead");   // PoolOptions::compileAhead
        QTest::addColumn<int>("threads"); // the worker's prepare_threads
        QTest::addColumn<int>("k");       // the window the pool keeps hinted
        QTest::newRow("two ahead") << 2 << 3 << 2;
        QTest::newRow("three ahead") << 3 << 3 << 3;
        QTest::newRow("one, as before") << 1 << 3 << 1;
        QTest::newRow("capped by the worker") << 3 << 1 << 1;
        QTest::newRow("no hints") << 0 << 3 << 0;
    }

    void hintsTheNextQueuedEvaluations()
    {
        QFETCH(int, ahead);
        QFETCH(int, threads);
        QFETCH(int, k);
        QTemporaryDir dir;
        {
            QFile f(dir.filePath(QStringLiteral("hints.sh")));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(kHintWorker);
        }
        auto po = hostileOptions("sh '" + dir.filePath(QStringLiteral("hints.sh")).toStdString() + "' '" + dir.path().toStdString() + "' "
                                 + std::to_string(threads));
        po.compileAhead = ahead;
        WorkerPool pool(po);
        pool.start();
        QCOMPARE(pool.lookahead("cpu"), k);
        QCOMPARE(pool.lookahead("cuda"), 0);
        constexpr int n = 6;
        std::vector<std::promise<Verdict>> verdicts(n);
        for (int j = 1; j <= n; ++j) // queued in job order
            pool.submit(m_card, Candidate{"cpu", "// kf-job-" + std::to_string(j) + "\n", nlohmann::json::object()}, quick(),
                        [&verdicts, j](Verdict v) { verdicts[size_t(j - 1)].set_value(std::move(v)); });
        for (auto &v : verdicts)
            QCOMPARE(v.get_future().get().status, VerdictStatus::Error);
        pool.shutdown();

        std::ifstream log(dir.filePath(QStringLiteral("hints.log")).toStdString());
        std::string what;
        int job = 0, evaluated = 0;
        std::set<int> hinted, done;
        std::vector<int> order;
        while (log >> what >> job) {
            if (what == "prepare") {
                QVERIFY2(hinted.insert(job).second, qPrintable(QStringLiteral("job %1 hinted twice").arg(job)));
                QVERIFY2(!done.count(job), qPrintable(QStringLiteral("job %1 hinted after its evaluation").arg(job)));
                continue;
            }
            QCOMPARE(what, std::string("evaluate"));
            order.push_back(job);
            done.insert(job);
            ++evaluated;
            // From the second on the queue is full (the first takes a moment): the hints sent so far and
            // not yet evaluated are exactly the next k queued.
            if (evaluated >= 2) {
                std::set<int> outstanding, expected;
                for (int h : hinted)
                    if (!done.count(h))
                        outstanding.insert(h);
                for (int j = job + 1; j <= std::min(n, job + k); ++j)
                    expected.insert(j);
                const auto text = [](const std::set<int> &jobs) {
                    QString t;
                    for (int j : jobs)
                        t += QString::number(j) + QLatin1Char(' ');
                    return t;
                };
                QCOMPARE(text(outstanding), text(expected));
            }
        }
        QCOMPARE(evaluated, n);
        QCOMPARE(int(std::set<int>(order.begin(), order.end()).size()), n);
        for (int j = 3; j <= n; ++j) // hinted while the one before it was in the worker
            QCOMPARE(hinted.count(j), size_t(k > 0));
    }

    // The worker's builds compiled ahead (pool/compile_ahead.h): on its own threads, claimed by the same
    // key once, never compiled twice.
    void compileAheadBuildsOnItsThreadsAndIsClaimedOnce()
    {
        CompileAhead<Built> ahead(2, 4);
        std::atomic<int> calls{0};
        auto compile = [&](std::string key) {
            return [&calls, key] {
                ++calls;
                return Built{key, std::this_thread::get_id()};
            };
        };
        QVERIFY(ahead.hint("a", compile("a")));
        QVERIFY(ahead.hint("a", compile("a"))); // held already: nothing more
        QVERIFY(eventually([&] { return calls == 1; }));
        const auto c = ahead.claim("a", [&]() -> Built { throw Error("compiled again"); });
        QVERIFY(c.ahead);
        QVERIFY(c.waitedMs >= 0);
        QCOMPARE(c.build.key, std::string("a"));
        QVERIFY(c.build.by != std::this_thread::get_id());
        QCOMPARE(ahead.held(), size_t(0));
        const auto unhinted = ahead.claim("b", compile("b")); // not hinted: compiled here and now
        QVERIFY(!unhinted.ahead);
        QCOMPARE(unhinted.waitedMs, -1.0);
        QVERIFY(unhinted.build.by == std::this_thread::get_id());
        QCOMPARE(int(calls), 2);
        QCOMPARE(ahead.threads(), 2);
        QCOMPARE(CompileAhead<Built>::keyOf("src", {"-arch=sm_90"}), CompileAhead<Built>::keyOf("src", {"-arch=sm_90"}));
        QVERIFY(CompileAhead<Built>::keyOf("src", {"-arch=sm_90"}) != CompileAhead<Built>::keyOf("src", {"-arch=sm_80"}));
        QVERIFY(CompileAhead<Built>::keyOf("src", {}) != CompileAhead<Built>::keyOf("src2", {}));
    }

    // A claim of a build still compiling waits for it rather than compiling it again; one still queued
    // behind a busy thread is compiled by the claimer at once, and by no thread after, even when hinted
    // again meanwhile.
    void aClaimWaitsForACompileInFlight()
    {
        CompileAhead<Built> ahead(1, 4);
        Gate gate;
        std::atomic<int> callsA{0}, callsB{0};
        std::atomic<bool> started{false};
        QVERIFY(ahead.hint("a", [&] {
            started = true;
            ++callsA;
            gate.opened.wait();
            return Built{"a", std::this_thread::get_id()};
        }));
        QVERIFY(ahead.hint("b", [&] {
            ++callsB;
            return Built{"b", std::this_thread::get_id()};
        }));
        QVERIFY(eventually([&] { return started.load(); }));
        // b is queued behind a: its claim compiles it here, at once.
        const auto b = ahead.claim("b", [&] {
            ++callsB;
            return Built{"b", std::this_thread::get_id()};
        });
        QVERIFY(!b.ahead);
        QVERIFY(b.build.by == std::this_thread::get_id());
        auto a = std::async(std::launch::async, [&] { return ahead.claim("a", [&]() -> Built { throw Error("compiled again"); }); });
        QVERIFY(a.wait_for(std::chrono::milliseconds(150)) == std::future_status::timeout); // waits for the thread
        gate.open.set_value();
        const auto got = a.get();
        QVERIFY(got.ahead);
        QVERIFY2(got.waitedMs >= 100, qPrintable(QString::number(got.waitedMs)));
        QCOMPARE(int(callsA), 1);
        QThread::msleep(50); // the thread is free now: b must not be compiled by it after all
        QCOMPARE(int(callsB), 1);
        QCOMPARE(ahead.held(), size_t(0));
        // A hint for what a claim is compiling in line is not compiled again.
        Gate inLine;
        std::atomic<int> callsC{0};
        auto c = std::async(std::launch::async, [&] {
            return ahead.claim("c", [&] {
                ++callsC;
                inLine.opened.wait();
                return Built{"c", std::this_thread::get_id()};
            });
        });
        QVERIFY(eventually([&] { return callsC == 1; }));
        QVERIFY(ahead.hint("c", [&] {
            ++callsC;
            return Built{"c", std::this_thread::get_id()};
        }));
        QCOMPARE(ahead.held(), size_t(0));
        inLine.open.set_value();
        QVERIFY(!c.get().ahead);
        QThread::msleep(20);
        QCOMPARE(int(callsC), 1);
    }

    // Bounded: past maxBuilds a hint pushes out the oldest build no thread is compiling, or is refused
    // when every held one is compiling; a claim drops what was hinted before it (hints for evaluations
    // another worker took); a compile that throws rethrows in its claim.
    void compileAheadIsBounded()
    {
        Gate gate;
        auto blocked = [&] {
            gate.opened.wait();
            return Built{"slow", std::this_thread::get_id()};
        };
        auto quickBuild = [](std::string key) { return [key] { return Built{key, std::this_thread::get_id()}; }; };
        {
            CompileAhead<Built> ahead(1, 2);
            std::atomic<bool> started{false};
            QVERIFY(ahead.hint("slow", [&] {
                started = true;
                return blocked();
            }));
            QVERIFY(eventually([&] { return started.load(); }));
            QVERIFY(ahead.hint("b", quickBuild("b")));
            QVERIFY(ahead.hint("c", quickBuild("c"))); // full: b, queued, goes
            QCOMPARE(ahead.held(), size_t(2));
            QCOMPARE(ahead.dropped(), size_t(1));
            gate.open.set_value();
        }
        {
            Gate again;
            CompileAhead<Built> ahead(1, 1);
            std::atomic<bool> started{false};
            QVERIFY(ahead.hint("slow", [&] {
                started = true;
                again.opened.wait();
                return Built{"slow", std::this_thread::get_id()};
            }));
            QVERIFY(eventually([&] { return started.load(); }));
            QVERIFY(!ahead.hint("b", quickBuild("b"))); // the one held is compiling: this hint is dropped
            QCOMPARE(ahead.held(), size_t(1));
            again.open.set_value();
        }
        {
            CompileAhead<Built> ahead(2, 8);
            std::atomic<int> calls{0};
            for (const char *k : {"x", "y", "z"})
                QVERIFY(ahead.hint(k, [&calls, k] {
                    ++calls;
                    return Built{k, std::this_thread::get_id()};
                }));
            QVERIFY(eventually([&] { return calls == 3; }));
            QThread::msleep(20);
            QVERIFY(!ahead.claim("w", quickBuild("w")).ahead); // not hinted: the hints stay
            QCOMPARE(ahead.held(), size_t(3));
            QVERIFY(ahead.claim("z", quickBuild("z")).ahead);
            QCOMPARE(ahead.held(), size_t(0)); // x and y: never to be claimed here
            QCOMPARE(ahead.dropped(), size_t(2));
            std::atomic<bool> threw{false};
            QVERIFY(ahead.hint("bad", [&]() -> Built {
                threw = true;
                throw Error("nvrtc said no");
            }));
            QVERIFY(eventually([&] { return threw.load(); }));
            QThread::msleep(20);
            try {
                ahead.claim("bad", quickBuild("bad"));
                QFAIL("the compile's error was lost");
            } catch (const Error &e) {
                QCOMPARE(std::string(e.what()), std::string("nvrtc said no"));
            }
        }
    }

    // The log folder the pool makes is private and goes with the pool; one the user chose stays.
    void logFolderIsPrivateAndRemoved()
    {
        std::string dir;
        {
            WorkerPool pool({test::workerCommand(), 1});
            dir = pool.logDir();
            struct stat st {};
            QCOMPARE(::stat(dir.c_str(), &st), 0);
            QCOMPARE(int(st.st_mode & 0777), 0700);
            pool.start();
            QVERIFY(std::filesystem::exists(std::filesystem::path(dir) / "worker-0.log"));
        }
        QVERIFY2(!std::filesystem::exists(dir), dir.c_str());
        QTemporaryDir chosen;
        {
            PoolOptions po(test::workerCommand(), 1);
            po.logDir = chosen.path().toStdString();
            WorkerPool pool(po);
            pool.start();
        }
        QVERIFY(QFile::exists(chosen.filePath(QStringLiteral("worker-0.log"))));
    }
};

QTEST_GUILESS_MAIN(TestPool)
#include "tst_pool.moc"
