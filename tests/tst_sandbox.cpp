// The CPU candidate's jail, for real: adversarial candidates (tests/kernels/cpu/sandbox_*.cpp) are
// compiled by the sandboxed compiler and run by kforge-cpu-runner under bubblewrap and seccomp, each
// rejected or contained with its specific reason, and the test process (standing in for the worker)
// is untouched by all of them.
#include <QtTest>

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "worker/cpu/cpu_compiler.h"
#include "worker/sandbox/jail.h"
#include "util/sha256.h"

using namespace kforge;
using namespace kforge::sandbox;
using Kind = CallOutcome::Kind;
namespace fs = std::filesystem;

Q_DECLARE_METATYPE(kforge::sandbox::CallOutcome::Kind)

namespace {

constexpr int64_t kMemory = int64_t(1) << 30; // the candidates' memory limit in these tests
constexpr int64_t kRows = 8, kCols = 256;

std::string kernelSource(const QString &name)
{
    QFile f(QStringLiteral(KFORGE_TEST_KERNELS "/cpu/") + name);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll().toStdString();
}

const char *kindName(Kind k)
{
    switch (k) {
    case Kind::Ok: return "ok";
    case Kind::Failed: return "failed";
    case Kind::Crashed: return "crashed";
    case Kind::Timeout: return "timeout";
    case Kind::Violation: return "violation";
    }
    return "?";
}

// Processes on this host running the runner's executable (a fork of the runner keeps its image).
int runnerProcesses(const std::string &runner)
{
    int n = 0;
    if (DIR *d = opendir("/proc")) {
        while (dirent *e = readdir(d)) {
            if (e->d_name[0] < '0' || e->d_name[0] > '9')
                continue;
            std::error_code ec;
            const auto exe = fs::read_symlink(std::string("/proc/") + e->d_name + "/exe", ec);
            if (!ec && exe.string().rfind(runner, 0) == 0) {
                // A zombie awaiting its parent no longer runs anything; count only live ones.
                std::ifstream st(std::string("/proc/") + e->d_name + "/stat");
                std::string line;
                std::getline(st, line);
                const auto close = line.rfind(')');
                if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z')
                    continue;
                ++n;
            }
        }
        closedir(d);
    }
    return n;
}

// Polls for a while: a killed namespace takes a moment to be reaped.
bool runnersGone(const std::string &runner)
{
    for (int i = 0; i < 200; ++i) {
        if (runnerProcesses(runner) == 0)
            return true;
        ::usleep(10000);
    }
    return false;
}

} // namespace

class TestSandbox : public QObject {
    Q_OBJECT
private:
    worker::CpuCompiler m_compiler;
    std::unique_ptr<Arena> m_arena;
    std::string m_runner;

    // User and system CPU time of every thread a process has had, live or ended (/proc/PID/stat).
    static double processCpuMillis(pid_t pid)
    {
        std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
        std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const auto close = stat.rfind(')');
        if (close == std::string::npos)
            return -1;
        std::istringstream fields(stat.substr(close + 2));
        std::string f;
        long long utime = 0, stime = 0;
        for (int i = 3; i <= 15 && fields >> f; ++i) { // fields 14 and 15, after the name's ')'
            if (i == 14)
                utime = std::stoll(f);
            if (i == 15)
                stime = std::stoll(f);
        }
        return double(utime + stime) * 1000.0 / double(::sysconf(_SC_CLK_TCK));
    }

    std::string build(const QString &kernel, const std::string &prefix = {})
    {
        const auto b = m_compiler.compile(prefix + kernelSource(kernel));
        if (!b.report.ok)
            qWarning("%s did not compile:\n%s", qPrintable(kernel), b.report.log.c_str());
        return b.report.ok ? b.sharedObject : std::string();
    }

    StartResult start(const std::string &so, int64_t memory = kMemory)
    {
        JailOptions o;
        o.sharedObject = so;
        o.memoryBytes = memory;
        o.fileBytes = int64_t(16) << 20;
        return Jail::start(o, *m_arena);
    }

    // A softmax call on the arena: rows x cols float32 input at 0, output after it.
    CallOutcome softmaxCall(Jail &jail, int timeoutMs = 20000)
    {
        wire::Tensor in{}, out{};
        in.offset = 0;
        in.bytes = out.bytes = uint64_t(kRows * kCols * 4);
        out.offset = in.bytes;
        for (auto *t : {&in, &out}) {
            t->dtype = 0;
            t->ndim = 2;
            t->sizes[0] = kRows;
            t->sizes[1] = kCols;
            t->strides[0] = kCols;
            t->strides[1] = 1;
        }
        auto *x = reinterpret_cast<float *>(m_arena->base());
        for (int64_t i = 0; i < kRows * kCols; ++i)
            x[i] = float(std::sin(double(i) * 0.37) * 3);
        auto *y = x + kRows * kCols;
        for (int64_t i = 0; i < kRows * kCols; ++i)
            y[i] = std::nanf("");
        return jail.call({in}, {out}, {{"rows", kRows}, {"cols", kCols}}, timeoutMs);
    }

    void verifySoftmaxOutput()
    {
        const auto *x = reinterpret_cast<const float *>(m_arena->base());
        const auto *y = x + kRows * kCols;
        for (int64_t r = 0; r < kRows; ++r) {
            double m = -INFINITY, s = 0;
            for (int64_t c = 0; c < kCols; ++c)
                m = std::max(m, double(x[r * kCols + c]));
            for (int64_t c = 0; c < kCols; ++c)
                s += std::exp(double(x[r * kCols + c]) - m);
            for (int64_t c = 0; c < kCols; ++c) {
                const double want = std::exp(double(x[r * kCols + c]) - m) / s;
                QVERIFY2(std::abs(double(y[r * kCols + c]) - want) < 1e-5, qPrintable(QStringLiteral("row %1 col %2").arg(r).arg(c)));
            }
        }
    }

    // Runs one adversarial kernel's call; the jail it used is gone afterwards, with every process in it.
    CallOutcome runKernel(const QString &kernel, int timeoutMs = 20000, const std::string &prefix = {})
    {
        const std::string so = build(kernel, prefix);
        if (so.empty())
            return {Kind::Failed, -1, -1, -1, "did not compile"};
        auto started = start(so);
        if (!started.jail)
            return {Kind::Failed, -1, -1, -1, "did not start: " + started.detail};
        auto outcome = softmaxCall(*started.jail, timeoutMs);
        started.jail.reset();
        return outcome;
    }

private slots:
    void initTestCase()
    {
        // Secrets in the environment of the process that starts jails: none may reach a candidate.
        ::setenv("OPENAI_API_KEY", "sk-kforge-test-secret-do-not-leak", 1);
        std::string why;
        m_runner = findRunner(&why);
        QVERIFY2(!m_runner.empty(), why.c_str());
        const std::string probe = probeSandbox();
        QVERIFY2(probe.empty(), probe.c_str());
        std::string error;
        m_arena = Arena::create(int64_t(16) << 20, &error);
        QVERIFY2(m_arena, error.c_str());
        QCOMPARE(runnerProcesses(m_runner), 0);
    }

    void sha256MatchesKnownVectors()
    {
        QCOMPARE(sha256Hex(""), std::string("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
        QCOMPARE(sha256Hex("abc"), std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        QCOMPARE(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
                 std::string("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
        QCOMPARE(sha256Hex(std::string(1000000, 'a')), std::string("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
    }

    void correctSoftmaxRunsAndIsTimed()
    {
        const std::string so = build(QStringLiteral("good_softmax.cpp"));
        QVERIFY(!so.empty());
        auto started = start(so);
        QVERIFY2(started.jail, started.detail.c_str());
        QVERIFY(started.jail->runnerPid() > 0);
        for (int i = 0; i < 3; ++i) {
            const auto o = softmaxCall(*started.jail);
            QVERIFY2(o.ok(), o.detail.c_str());
            QCOMPARE(o.rc, 0);
            QVERIFY(o.micros > 0);
            QVERIFY(o.micros <= o.workerMicros);
            verifySoftmaxOutput();
        }
        qInfo("jail up in %.1f ms", started.jail->startMillis());
        started.jail.reset();
        QVERIFY(runnersGone(m_runner));
    }

    void honestThreadsAllocationsAndScratchWork()
    {
        const std::string so = build(QStringLiteral("sandbox_threads_softmax.cpp"));
        QVERIFY(!so.empty());
        auto started = start(so);
        QVERIFY2(started.jail, started.detail.c_str());
        for (int i = 0; i < 3; ++i) {
            const auto o = softmaxCall(*started.jail);
            QVERIFY2(o.ok(), qPrintable(QStringLiteral("%1 rc=%2 %3").arg(QLatin1String(kindName(o.kind))).arg(o.rc).arg(QString::fromStdString(o.detail))));
            verifySoftmaxOutput();
        }
        QVERIFY(!fs::exists("/tmp/kforge-scratch.txt"));
    }

    void adversarial_data()
    {
        QTest::addColumn<QString>("kernel");
        QTest::addColumn<Kind>("kind");
        QTest::addColumn<int>("rc");          // for contained attacks: 0 means nothing got through
        QTest::addColumn<QString>("detail");  // what the report must say
        QTest::newRow("tcp socket") << QStringLiteral("sandbox_tcp.cpp") << Kind::Violation << 0 << QStringLiteral("forbidden system call socket (41)");
        QTest::newRow("setsid daemon") << QStringLiteral("sandbox_setsid_daemon.cpp") << Kind::Violation << 0
                                       << QStringLiteral("forbidden system call clone (56) without CLONE_THREAD");
        QTest::newRow("fork bomb") << QStringLiteral("sandbox_fork_bomb.cpp") << Kind::Violation << 0 << QStringLiteral("forbidden system call clone (56)");
        QTest::newRow("exec shell") << QStringLiteral("sandbox_exec_shell.cpp") << Kind::Violation << 0 << QStringLiteral("forbidden system call execve (59)");
        QTest::newRow("shared mmap") << QStringLiteral("sandbox_shared_mmap.cpp") << Kind::Violation << 0 << QStringLiteral("mmap (9) with MAP_SHARED");
        QTest::newRow("kill pid 1") << QStringLiteral("sandbox_kill_parent.cpp") << Kind::Violation << 0 << QStringLiteral("forbidden system call kill (62)");
        QTest::newRow("12 GB new") << QStringLiteral("sandbox_alloc_12gb.cpp") << Kind::Violation << 0 << QStringLiteral("memory limit of 1024 MiB");
        QTest::newRow("12 GB malloc") << QStringLiteral("sandbox_malloc_12gb.cpp") << Kind::Violation << 3
                                      << QStringLiteral("after an allocation of 12288 MiB was refused at the memory limit of 1024 MiB");
        QTest::newRow("fd spray") << QStringLiteral("sandbox_fd_spray.cpp") << Kind::Violation << 0 << QStringLiteral("control socket");
        QTest::newRow("forged reply") << QStringLiteral("sandbox_forge_reply.cpp") << Kind::Violation << 0 << QStringLiteral("forged");
        QTest::newRow("crash") << QStringLiteral("crash.cpp") << Kind::Crashed << 0 << QStringLiteral("signal SIGSEGV (11) at address 0x0 in kforge_entry");
        QTest::newRow("shape symbols") << QStringLiteral("sandbox_symbols.cpp") << Kind::Ok << 0 << QString();
        QTest::newRow("write outside") << QStringLiteral("sandbox_write_outside.cpp") << Kind::Ok << 0 << QString();
        QTest::newRow("read passwd") << QStringLiteral("sandbox_read_passwd.cpp") << Kind::Ok << 0 << QString();
        QTest::newRow("environment") << QStringLiteral("sandbox_environ.cpp") << Kind::Ok << 0 << QString();
    }

    void adversarial()
    {
        QFETCH(QString, kernel);
        QFETCH(Kind, kind);
        QFETCH(int, rc);
        QFETCH(QString, detail);
        for (const char *p : {"/tmp/kforge-escape.txt", "/tmp/kforge-pwned"})
            ::unlink(p);

        // The worker's own descriptors, stood in for by this process: a leaked pipe (no O_CLOEXEC, as a
        // careless protocol socket would be) and stdout and stderr, all watched while the candidate runs.
        int leaked[2], outPipe[2];
        QVERIFY(::pipe(leaked) == 0 && ::pipe2(outPipe, O_NONBLOCK) == 0);
        ::fcntl(leaked[0], F_SETFL, O_NONBLOCK);
        std::fflush(stdout);
        std::fflush(stderr);
        const int savedOut = ::dup(1), savedErr = ::dup(2);
        ::dup2(outPipe[1], 1);
        ::dup2(outPipe[1], 2);
        const CallOutcome o = runKernel(kernel);
        ::dup2(savedOut, 1);
        ::dup2(savedErr, 2);
        ::close(savedOut);
        ::close(savedErr);
        char buf[256];
        const ssize_t leakedBytes = ::read(leaked[0], buf, sizeof buf);
        const ssize_t outBytes = ::read(outPipe[0], buf, sizeof buf);
        for (int fd : {leaked[0], leaked[1], outPipe[0], outPipe[1]})
            ::close(fd);

        const QString said = QStringLiteral("%1: %2 rc=%3 %4").arg(kernel, QLatin1String(kindName(o.kind))).arg(o.rc).arg(QString::fromStdString(o.detail));
        QVERIFY2(o.kind == kind, qPrintable(said));
        if (kind == Kind::Ok || kind == Kind::Failed)
            QVERIFY2(o.rc == rc, qPrintable(said));
        if (!detail.isEmpty())
            QVERIFY2(QString::fromStdString(o.detail).contains(detail), qPrintable(said));
        QVERIFY2(leakedBytes <= 0, "the candidate wrote to a descriptor of the process that started it");
        QVERIFY2(outBytes <= 0, "the candidate wrote to the stdout or stderr of the process that started it");
        QVERIFY2(runnersGone(m_runner), "a process of the jail outlived it");
        for (const char *p : {"/kforge-escape.txt", "/usr/kforge-escape.txt", "/tmp/kforge-escape.txt", "/dev/shm/kforge-escape.txt",
                              "/root/kforge-escape.txt", "/etc/kforge-escape.txt", "/tmp/kforge-pwned"})
            QVERIFY2(!fs::exists(p), p);
    }

    // A candidate that bends the runner's clock (its GOT entry for clock_gettime) and waits without
    // spending CPU: the runner reports almost nothing, and the time still comes out nearly whole, because
    // it is never less than the worker's round trip less that of a call that runs nothing, less a slack.
    void hiddenTimeStillCounts()
    {
        const std::string so = build(QStringLiteral("sandbox_clock_hook.cpp"));
        QVERIFY(!so.empty());
        auto started = start(so);
        QVERIFY2(started.jail, started.detail.c_str());
        for (int i = 0; i < 2; ++i) {
            const auto o = softmaxCall(*started.jail);
            const auto said = QStringLiteral("%1 rc=%2 time %3 us, reported %4 us, round trip %5 us")
                                  .arg(QLatin1String(kindName(o.kind)))
                                  .arg(o.rc)
                                  .arg(o.micros)
                                  .arg(o.reportedMicros)
                                  .arg(o.workerMicros);
            QVERIFY2(o.ok(), qPrintable(said + QStringLiteral(" ") + QString::fromStdString(o.detail)));
            QVERIFY2(o.reportedMicros < 5000, qPrintable(QStringLiteral("the hook did not bend the runner's clock: ") + said));
            QVERIFY2(o.micros >= 17000, qPrintable(said)); // 20 ms less the slack for the worker's wake-up
        }
        started.jail.reset();
        QVERIFY(runnersGone(m_runner));
    }

    void constructorRunsConfined()
    {
        const std::string so = build(QStringLiteral("sandbox_constructor.cpp"));
        QVERIFY(!so.empty());
        const auto started = start(so);
        QVERIFY(!started.jail);
        QCOMPARE(int(started.failure), int(StartResult::Failure::Violation));
        QVERIFY2(started.detail.find("forbidden system call socket (41)") != std::string::npos, started.detail.c_str());
        QVERIFY2(started.detail.find("while the candidate was being loaded") != std::string::npos, started.detail.c_str());
        QVERIFY(runnersGone(m_runner));
    }

    // A thread left behind is stopped with the runner between calls, so it acts when a call lets the
    // runner go on: its violation ends the jail at that call or the next (a message it wrote after the
    // call had returned is named so).
    void threadLeftRunningIsCaughtAtALaterCall()
    {
        const std::string so = build(QStringLiteral("sandbox_late_socket.cpp"));
        QVERIFY(!so.empty());
        auto started = start(so);
        QVERIFY2(started.jail, started.detail.c_str());
        const auto first = softmaxCall(*started.jail);
        QVERIFY2(first.ok(), first.detail.c_str());
        ::usleep(300000);
        // The thread runs only while a call lets the runner go on, and a call lasts microseconds: on a
        // loaded machine the scheduler may not pick the thread in the first few windows, so keep calling.
        CallOutcome later;
        int calls = 0;
        while (calls < 200 && started.jail->alive() && later.ok()) {
            later = softmaxCall(*started.jail);
            ++calls;
            ::usleep(10000);
        }
        QVERIFY2(later.kind == Kind::Violation,
                 qPrintable(QStringLiteral("after %1 calls: %2").arg(calls).arg(QString::fromStdString(later.detail))));
        QVERIFY2(later.detail.find("forbidden system call socket (41)") != std::string::npos, later.detail.c_str());
        QVERIFY(!started.jail->alive());
        QVERIFY(runnersGone(m_runner));
    }

    // A thread left spinning gets no CPU between calls (the worker times the baseline there), and
    // the candidate still runs and computes the right output at the next call.
    void threadLeftSpinningIsStoppedBetweenCalls()
    {
        const std::string so = build(QStringLiteral("busy_thread_softmax.cpp"));
        QVERIFY(!so.empty());
        auto started = start(so);
        QVERIFY2(started.jail, started.detail.c_str());
        const auto first = softmaxCall(*started.jail);
        QVERIFY2(first.ok(), first.detail.c_str());
        verifySoftmaxOutput();
        const pid_t runner = started.jail->runnerPid();
        const double before = processCpuMillis(runner);
        ::usleep(300000);
        const double spent = processCpuMillis(runner) - before;
        QVERIFY2(before >= 0 && spent < 30, qPrintable(QStringLiteral("the runner's threads ran %1 ms in 300 ms between calls").arg(spent)));
        const auto second = softmaxCall(*started.jail);
        QVERIFY2(second.ok(), second.detail.c_str());
        verifySoftmaxOutput();
        started.jail.reset();
        QVERIFY(runnersGone(m_runner));
    }

    void missingEntryIsReported()
    {
        const std::string so = build(QStringLiteral("no_entry.cpp"));
        QVERIFY(!so.empty());
        const auto started = start(so);
        QVERIFY(!started.jail);
        QCOMPARE(int(started.failure), int(StartResult::Failure::NoEntry));
        QVERIFY2(started.detail.find("kforge_entry") != std::string::npos, started.detail.c_str());
    }

    void hangIsKilledAndTheNextCallWorks()
    {
        const std::string so = build(QStringLiteral("hang.cpp"));
        QVERIFY(!so.empty());
        auto started = start(so);
        QVERIFY2(started.jail, started.detail.c_str());
        const auto t0 = std::chrono::steady_clock::now();
        const auto o = softmaxCall(*started.jail, 500);
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        QVERIFY2(o.kind == Kind::Timeout, o.detail.c_str());
        QVERIFY2(o.detail.find("500 ms") != std::string::npos, o.detail.c_str());
        QVERIFY2(ms < 3000, qPrintable(QString::number(ms)));
        QVERIFY(!started.jail->alive());
        QVERIFY(runnersGone(m_runner));
        // The same arena, a new jail: the next call works.
        auto again = start(build(QStringLiteral("good_softmax.cpp")));
        QVERIFY2(again.jail, again.detail.c_str());
        const auto next = softmaxCall(*again.jail);
        QVERIFY2(next.ok(), next.detail.c_str());
        verifySoftmaxOutput();
    }

    void cacheCannotBeOverwritten()
    {
        // The honest candidate's entry is in the cache before the attack.
        const auto honest = m_compiler.compile(kernelSource(QStringLiteral("good_softmax.cpp")));
        QVERIFY(honest.report.ok);
        const std::string before = sha256File(honest.sharedObject);
        const std::string prefix = "#define KF_CACHE_DIR \"" + m_compiler.cacheDir() + "\"\n";
        const auto o = runKernel(QStringLiteral("sandbox_cache_overwrite.cpp"), 20000, prefix);
        QVERIFY2(o.kind == Kind::Ok && o.rc == 0, qPrintable(QStringLiteral("%1 rc=%2 %3").arg(QLatin1String(kindName(o.kind))).arg(o.rc).arg(QString::fromStdString(o.detail))));
        QVERIFY(!fs::exists(fs::path(m_compiler.cacheDir()) / "planted.so"));
        QCOMPARE(sha256File(honest.sharedObject), before);
        // And the honest candidate, from the cache, runs its own code.
        const auto again = m_compiler.compile(kernelSource(QStringLiteral("good_softmax.cpp")));
        QVERIFY(again.report.ok && again.report.cached);
        auto started = start(again.sharedObject);
        QVERIFY2(started.jail, started.detail.c_str());
        const auto call = softmaxCall(*started.jail);
        QVERIFY2(call.ok(), call.detail.c_str());
        verifySoftmaxOutput();
    }

    void tamperedCacheEntryIsRebuilt()
    {
        const std::string source = kernelSource(QStringLiteral("good_softmax.cpp")) + "\n// tamper test\n";
        const auto first = m_compiler.compile(source);
        QVERIFY(first.report.ok);
        // Anything that changes the object behind the compiler's back (here: this test, as the user).
        const std::string evil = build(QStringLiteral("crash.cpp"));
        QVERIFY(!evil.empty());
        fs::copy_file(evil, first.sharedObject, fs::copy_options::overwrite_existing);
        const auto second = m_compiler.compile(source);
        QVERIFY(second.report.ok);
        QVERIFY(!second.report.cached);
        QVERIFY2(second.report.log.find("did not match its recorded SHA-256") != std::string::npos, second.report.log.c_str());
        auto started = start(second.sharedObject);
        QVERIFY2(started.jail, started.detail.c_str());
        const auto call = softmaxCall(*started.jail);
        QVERIFY2(call.ok(), call.detail.c_str());
        verifySoftmaxOutput();
    }

    void compilerIsSandboxed()
    {
        const auto b = m_compiler.compile(kernelSource(QStringLiteral("sandbox_include_passwd.cpp")));
        QVERIFY(!b.report.ok);
        QVERIFY2(b.report.log.find("/etc/passwd") != std::string::npos, b.report.log.c_str());
        QVERIFY2(b.report.log.find("No such file or directory") != std::string::npos, b.report.log.c_str());
        QVERIFY2(b.report.log.find("root:") == std::string::npos, b.report.log.c_str());
    }

    void compilerLogIsCapped()
    {
        const auto b = m_compiler.compile(kernelSource(QStringLiteral("sandbox_huge_log.cpp")));
        QVERIFY(!b.report.ok);
        QVERIFY2(b.report.log.size() < worker::CpuCompiler::kLogCap + 512, qPrintable(QString::number(b.report.log.size())));
        QVERIFY2(b.report.log.find("compiler output cut at 64 KiB") != std::string::npos, b.report.log.substr(b.report.log.size() - 300).c_str());
    }

    void missingBwrapIsNamedNeverBypassed()
    {
        ::setenv("KFORGE_BWRAP", "/nonexistent/bwrap", 1);
        std::string why;
        const std::string found = findBwrap(&why);
        const std::string probe = probeSandbox();
        const auto started = start(build(QStringLiteral("good_softmax.cpp")));
        const auto compiled = m_compiler.compile(kernelSource(QStringLiteral("good_softmax.cpp")) + "\n// not cached\n");
        ::unsetenv("KFORGE_BWRAP");
        QVERIFY(found.empty());
        QVERIFY2(why.find("/nonexistent/bwrap") != std::string::npos, why.c_str());
        QVERIFY2(probe.find("/nonexistent/bwrap") != std::string::npos, probe.c_str());
        QVERIFY(!started.jail);
        QCOMPARE(int(started.failure), int(StartResult::Failure::Unavailable));
        QVERIFY2(started.detail.find("/nonexistent/bwrap") != std::string::npos, started.detail.c_str());
        QVERIFY(!compiled.report.ok);
        QVERIFY2(compiled.report.log.find("cannot compile CPU candidates") != std::string::npos, compiled.report.log.c_str());
        QVERIFY(!findBwrap(nullptr).empty());
    }

    void cleanupTestCase() { QVERIFY(runnersGone(m_runner)); }
};

QTEST_GUILESS_MAIN(TestSandbox)
#include "tst_sandbox.moc"
