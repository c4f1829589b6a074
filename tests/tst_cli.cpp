// kforge-cli as a user runs it: a real process, its exit status, stdout and stderr. Covers the template
// listing with a card's seeds, rendering a point with its launch plan, the errors bad input and bad
// options get, candidates with any bytes and with their launch plan in a comment, hostile workers, and
// a CLI killed mid-evaluation, which must take its worker with it.
#include <QDir>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include <csignal>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "ops/operator_card.h"
#include "pack/selection.h"
#include "protocol/messages.h"
#include "store/session_store.h"

namespace {

struct Run {
    int code = -1;
    QString out, err;
};

Run cli(const QStringList &args, const QString &workDir = {})
{
    QProcess p;
    if (!workDir.isEmpty())
        p.setWorkingDirectory(workDir);
    p.start(QStringLiteral(KFORGE_CLI_PATH), args);
    Run r;
    if (!p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished();
        r.err = QStringLiteral("kforge-cli did not finish in 60 s");
        return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

// A worker that says hello, then writes each request to $1/request.json and answers with a failure,
// or misbehaves as $2 says.
const char *kScriptWorker = R"SH(#!/bin/sh
IFS= read -r hello
printf '{"id":0,"type":"hello","ok":true,"protocol":1,"worker":"script","backends":["cpu","cuda"],"devices":[]}\n'
while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in *'"type":"shutdown"'*) printf '{"id":%s,"type":"bye","ok":true}\n' "$id"; exit 0;; esac
  printf '%s\n' "$line" > "$1/request.json"
  case "$2" in
    array) echo '[]';;
    status) printf '{"id":%s,"type":"result","ok":true,"verdict":{"status":"splendid"}}\n' "$id";;
    binary) printf '\377\376\000\n';;
    die) echo "OPENAI_API_KEY=$3 and then it fell over" >&2; exit 3;;
    spin) while :; do :; done;;
    *) printf '{"id":%s,"type":"failure","status":"error","code":"bad_request","message":"recorded"}\n' "$id";;
  esac
done
)SH";

const char *kPlan = R"({"kernels":[{"name":"k","grid":["rows",1,1],"block":[32,1,1],"args":["in:x","out:y","sym:cols"]}],"workspace":[]})";

std::string fileBytes(const QString &path)
{
    std::ifstream in(path.toStdString(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void writeBytes(const QString &path, const std::string &bytes)
{
    std::ofstream(path.toStdString(), std::ios::binary) << bytes;
}

// /proc/<pid>/stat: the state letter, the parent, and the start time (to tell a reused pid apart).
struct ProcStat {
    char state = 0;
    int ppid = 0;
    unsigned long long start = 0;
    std::string comm;
};

bool procStat(int pid, ProcStat &s)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    if (!std::getline(in, text))
        return false;
    const auto open = text.find('('), close = text.rfind(')');
    if (open == std::string::npos || close == std::string::npos)
        return false;
    s.comm = text.substr(open + 1, close - open - 1);
    std::istringstream rest(text.substr(close + 2));
    std::string field;
    rest >> s.state >> s.ppid;
    for (int i = 5; i <= 21 && rest >> field; ++i) {
    }
    rest >> s.start;
    return true;
}

// Every process below `root`, by pid, with its start time.
std::map<int, ProcStat> descendants(int root)
{
    std::map<int, ProcStat> all;
    for (const auto &e : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
        bool ok = false;
        const int pid = e.toInt(&ok);
        ProcStat s;
        if (ok && procStat(pid, s))
            all[pid] = s;
    }
    std::map<int, ProcStat> out;
    std::set<int> frontier = {root};
    while (!frontier.empty()) {
        std::set<int> next;
        for (const auto &[pid, s] : all)
            if (frontier.count(s.ppid) && !out.count(pid)) {
                out[pid] = s;
                next.insert(pid);
            }
        frontier = next;
    }
    return out;
}

} // namespace

namespace {

// The seed line printed under a template's name in `kforge-cli templates`, or an empty string.
QString seedOf(const QString &listing, const QString &templateId)
{
    const auto lines = listing.split(QLatin1Char('\n'));
    for (qsizetype i = 0; i + 1 < lines.size(); ++i)
        if (lines[i].startsWith(templateId + QLatin1Char(' ')))
            for (qsizetype j = i + 1; j < lines.size() && lines[j].startsWith(QLatin1Char(' ')); ++j)
                if (lines[j].trimmed().startsWith(QStringLiteral("seed ")))
                    return lines[j].trimmed().mid(5).trimmed();
    return {};
}

// Waits while `p` runs until the session file holds `want` finished candidates (not the baseline, not
// running) or `ms` pass; returns how many it saw.
int waitForFinishedNodes(const QString &file, const QProcess &p, int want, int ms)
{
    QElapsedTimer timer;
    timer.start();
    int finished = 0;
    while (finished < want && timer.elapsed() < ms && p.state() == QProcess::Running) {
        QThread::msleep(50);
        try {
            kforge::SessionStore reader(file.toStdString(), kforge::SessionStore::Mode::ReadOnly);
            finished = 0;
            for (const auto &s : reader.sessions())
                for (const auto &n : reader.nodes(s.id))
                    finished += n.parentId && n.status != "running";
        } catch (const std::exception &) {
        }
    }
    return finished;
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;

    QString scriptWorker(const QString &args = {}) const
    {
        return QStringLiteral("sh '%1/worker.sh' '%1' %2").arg(m_dir.path(), args);
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        const auto good = fileBytes(QStringLiteral(KFORGE_TEST_KERNELS "/cpu/good_softmax.cpp"));
        QVERIFY(!good.empty());
        writeBytes(m_dir.filePath(QStringLiteral("good.cpp")), good);
        writeBytes(m_dir.filePath(QStringLiteral("latin1.cpp")), good + "\n// caf\xe9 cr\xe8me br\xfbl\xe9\n");
        writeBytes(m_dir.filePath(QStringLiteral("badbyte.cpp")), good + "\nint broken = \xff;\n");
        writeBytes(m_dir.filePath(QStringLiteral("plan.cu")), std::string("/* kforge-launch\n") + kPlan + "\n*/\nextern \"C\" __global__ void k() {}\n");
        writeBytes(m_dir.filePath(QStringLiteral("noplan.cu")), "extern \"C\" __global__ void k() {}\n");
        writeBytes(m_dir.filePath(QStringLiteral("badplan.cu")), "/* kforge-launch {\"kernels\": [ */\nextern \"C\" __global__ void k() {}\n");
        writeBytes(m_dir.filePath(QStringLiteral("plan.json")), kPlan);
        writeBytes(m_dir.filePath(QStringLiteral("worker.sh")), kScriptWorker);
        // A card as `kforge-cli card` writes one, edited to an empty tensor.
        auto emptyCard = nlohmann::json(kforge::makeCard("softmax", {{"rows", 4}, {"cols", 5}}));
        emptyCard["shape"]["rows"] = 0;
        writeBytes(m_dir.filePath(QStringLiteral("emptycard.json")), emptyCard.dump());
    }

    void templateSeedsForACard_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("templateId");
        QTest::addColumn<QString>("mustContain");
        QTest::addColumn<bool>("declines");
        const auto list = [](const char *family, const char *shape, const char *dtype) {
            return QStringList{QStringLiteral("templates"), QStringLiteral("--family"), QString::fromLatin1(family), QStringLiteral("--backend"),
                               QStringLiteral("cuda"), QStringLiteral("--shape"), QString::fromLatin1(shape), QStringLiteral("--dtype"),
                               QString::fromLatin1(dtype)};
        };
        // A 1 MiB row needs a cluster of 16 to keep three buffers per block, and asks for 90% of the SMs.
        QTest::newRow("262144-wide log-softmax: pipe in clusters of 16")
            << list("log_softmax", "rows=1024,cols=262144", "float32") << QStringLiteral("cuda.log_softmax.pipe")
            << QStringLiteral("\"cl\":16") << false;
        QTest::newRow("and the one-shot cluster template too")
            << list("log_softmax", "rows=1024,cols=262144", "float32") << QStringLiteral("cuda.log_softmax.cluster")
            << QStringLiteral("\"cl\":16") << false;
        QTest::newRow("4096-wide bf16 softmax: one block per row, 64 threads of 8 packs")
            << list("softmax", "rows=16384,cols=4096", "bfloat16") << QStringLiteral("cuda.softmax.pipe")
            << QStringLiteral("\"block\":64") << false;
        QTest::newRow("norm rows kernels hold 16 values per thread")
            << list("layer_norm", "rows=16384,cols=4096", "float32") << QStringLiteral("cuda.layer_norm.rows")
            << QStringLiteral("\"reg\":16") << false;
        QTest::newRow("16-bit norm rows hold 32 (64 bytes per thread)")
            << list("rms_norm", "rows=4096,cols=8192", "bfloat16") << QStringLiteral("cuda.rms_norm.rows")
            << QStringLiteral("\"reg\":32,\"rpb\":1,\"tpr\":256") << false;
        QTest::newRow("cross entropy over many rows: 256 threads a row")
            << list("cross_entropy", "rows=4096,vocab=128256", "bfloat16") << QStringLiteral("cuda.cross_entropy.two_pass")
            << QStringLiteral("\"block\":256") << false;
        QTest::newRow("cross entropy over a row for every multiprocessor: 512 threads a row")
            << list("cross_entropy", "rows=256,vocab=32000", "float32") << QStringLiteral("cuda.cross_entropy.two_pass")
            << QStringLiteral("\"block\":512") << false;
        QTest::newRow("cross entropy over a few rows: 1024 threads a row")
            << list("cross_entropy", "rows=64,vocab=128256", "bfloat16") << QStringLiteral("cuda.cross_entropy.two_pass")
            << QStringLiteral("\"block\":1024") << false;
        // 33 float32 values are not a whole number of 16-byte packs: the bulk copy cannot serve the row.
        QTest::newRow("a row the bulk copy cannot serve is declined")
            << list("softmax", "rows=64,cols=33", "float32") << QStringLiteral("cuda.softmax.pipe") << QStringLiteral("\"stages\"")
            << true;
    }

    void templateSeedsForACard()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, templateId);
        QFETCH(QString, mustContain);
        QFETCH(bool, declines);
        const auto r = cli(args);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QString seed = seedOf(r.out, templateId);
        QVERIFY2(!seed.isEmpty(), qPrintable(templateId + QStringLiteral(" has no seed line in:\n") + r.out));
        QVERIFY2(seed.contains(mustContain), qPrintable(seed));
        QCOMPARE(seed.contains(QStringLiteral("(declines this card)")), declines);
    }

    void rendersAPointAndItsLaunchPlan()
    {
        QTemporaryDir dir;
        const QString plan = dir.filePath(QStringLiteral("plan.json"));
        const auto r = cli({QStringLiteral("templates"), QStringLiteral("--render"), QStringLiteral("cuda.layer_norm.pipe"), QStringLiteral("--params"),
                            QStringLiteral(R"({"cl":1,"block":256,"bps":2,"fill":100,"regp":4,"stages":4})"), QStringLiteral("--family"),
                            QStringLiteral("layer_norm"), QStringLiteral("--shape"), QStringLiteral("rows=16384,cols=8192"), QStringLiteral("--dtype"),
                            QStringLiteral("bfloat16"), QStringLiteral("--launch-out"), plan});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(r.out.contains(QStringLiteral("#define STAGES 4")));
        QVERIFY(r.out.contains(QStringLiteral("kf_pipe(")));
        QFile f(plan);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const auto j = nlohmann::json::parse(f.readAll().toStdString());
        const auto &k = j.at("kernels").at(0);
        QCOMPARE(QString::fromStdString(k.at("name").get<std::string>()), QStringLiteral("kf_pipe"));
        // A persistent grid: two blocks per SM of whatever device runs it, at most one per row.
        QCOMPARE(QString::fromStdString(k.at("grid").at(0).get<std::string>()), QStringLiteral("min(rows, max(1, sm_count * 2 * 100 / 100))"));
        QVERIFY(!k.contains("cluster"));
    }

    void badInputGetsASpecificError_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("a point outside the valid space")
            << QStringList{QStringLiteral("templates"), QStringLiteral("--render"), QStringLiteral("cuda.softmax.pipe"),
                           QStringLiteral("--params"), QStringLiteral(R"({"block":2048})"), QStringLiteral("--family"),
                           QStringLiteral("softmax"), QStringLiteral("--shape"), QStringLiteral("rows=64,cols=4096")}
            << QStringLiteral("is outside cuda.softmax.pipe's valid space for this card");
        QTest::newRow("parameters that are not JSON")
            << QStringList{QStringLiteral("templates"), QStringLiteral("--render"), QStringLiteral("cuda.softmax.pipe"),
                           QStringLiteral("--params"), QStringLiteral("{block:"), QStringLiteral("--family"), QStringLiteral("softmax")}
            << QStringLiteral("--params is not valid JSON");
        QTest::newRow("an unknown template")
            << QStringList{QStringLiteral("templates"), QStringLiteral("--render"), QStringLiteral("cuda.softmax.nope")}
            << QStringLiteral("no template 'cuda.softmax.nope'");
        QTest::newRow("decide: no decision")
            << QStringList{QStringLiteral("decide"), QStringLiteral("--session"), QStringLiteral("x.kforge"), QStringLiteral("--node"),
                           QStringLiteral("1"), QStringLiteral("--reason"), QStringLiteral("fast")}
            << QStringLiteral("pass --accept or --reject: the decision itself");
        QTest::newRow("decide: both decisions")
            << QStringList{QStringLiteral("decide"), QStringLiteral("--session"), QStringLiteral("x.kforge"), QStringLiteral("--node"),
                           QStringLiteral("1"), QStringLiteral("--accept"), QStringLiteral("--reject"), QStringLiteral("--reason"), QStringLiteral("fast")}
            << QStringLiteral("pass --accept or --reject, not both");
        QTest::newRow("decide: no reason")
            << QStringList{QStringLiteral("decide"), QStringLiteral("--session"), QStringLiteral("x.kforge"), QStringLiteral("--node"),
                           QStringLiteral("1"), QStringLiteral("--accept")}
            << QStringLiteral("option --reason is required");
        QTest::newRow("a shape symbol that is not a number")
            << QStringList{QStringLiteral("card"), QStringLiteral("--family"), QStringLiteral("softmax"), QStringLiteral("--shape"),
                           QStringLiteral("rows=x")}
            << QStringLiteral("shape symbol 'rows' needs a whole number, not 'x'");
    }

    void badInputGetsASpecificError()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const auto r = cli(args);
        QVERIFY2(r.code != 0 && r.code != -1, qPrintable(QStringLiteral("exit %1").arg(r.code)));
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
    }

    // Options are checked before anything starts, each with a message naming it and what it takes.
    void badOptionsAreRefused_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const auto row = [](const char *name, std::initializer_list<const char *> args, const char *message) {
            QStringList l;
            for (const char *a : args)
                l << QString::fromUtf8(a);
            QTest::newRow(name) << l << QString::fromUtf8(message);
        };
        row("an empty session", {"search", "--session", ""}, "option --session needs a value, not an empty string");
        row("a negative node count", {"search", "--nodes", "-5"}, "option --nodes takes a whole number from 1 to 1000000, not '-5'");
        row("a node count with a suffix", {"search", "--nodes", "2x"}, "option --nodes takes a whole number from 1 to 1000000, not '2x'");
        row("a node count past int64", {"search", "--nodes", "99999999999999999999"}, "not '99999999999999999999'");
        row("a missing value", {"search", "--nodes"}, "option --nodes needs a value");
        row("an option for a value", {"search", "--session", "--nodes", "3"}, "option --session needs a value before --nodes");
        row("an option twice", {"search", "--nodes", "3", "--nodes", "4"}, "option --nodes is given twice");
        row("no workers", {"search", "--workers", "0"}, "option --workers takes auto or a whole number from 1 to 256, not '0'");
        row("an unknown backend", {"search", "--backend", "nope"}, "option --backend takes cpu or cuda, not 'nope'");
        row("a zero deadline", {"search", "--deadline-ms", "0"}, "option --deadline-ms takes a whole number from 1 to 86400000, not '0'");
        row("a negative time budget", {"search", "--seconds", "-1"}, "option --seconds takes a number from 0 to 10000000, not '-1'");
        row("a zero row count", {"search", "--rows", "0"}, "option --rows takes a whole number from 1 to 2147483647, not '0'");
        row("a shape without a family", {"search", "--shape", "rows=4,cols=4"}, "option --shape describes a card of one family: pass --family F");
        row("a dtype without a family", {"search", "--dtype", "float16"}, "option --dtype describes a card of one family: pass --family F");
        row("an unknown family", {"search", "--family", "nope"}, "option --family takes ");
        row("an unknown dtype", {"search", "--family", "softmax", "--dtype", "float64"},
            "option --dtype takes float32, float16 or bfloat16, not 'float64'");
        row("a zero extent", {"search", "--family", "softmax", "--shape", "rows=0,cols=5"},
            "the tensor x needs rows at least 1, not 0 (an empty tensor leaves nothing to compute)");
        row("a negative extent", {"search", "--family", "softmax", "--shape", "rows=-3,cols=5"}, "needs rows at least 1, not -3");
        row("a tensor past 64 bits", {"search", "--family", "softmax", "--shape", "rows=99999999999,cols=99999999"},
            "is larger than 2^62 bytes");
        row("a symbol the family has not", {"search", "--family", "softmax", "--shape", "rows=4,cols=5,zz=3"},
            "option --shape: a softmax card's shape has the symbols cols=5, rows=4; 'zz' is not one of them");
        row("eval: a card with an empty tensor", {"eval", "--source", "@DIR@/good.cpp", "--card", "@DIR@/emptycard.json"},
            "malformed operator card 'softmax.lastdim.float32': the tensor x needs rows at least 1, not 0");
        row("eval: a zero deadline", {"eval", "--source", "@DIR@/good.cpp", "--deadline-ms", "0"},
            "option --deadline-ms takes a whole number from 1 to 86400000, not '0'");
        row("eval: no samples", {"eval", "--source", "@DIR@/good.cpp", "--samples", "0"}, "option --samples takes a whole number from 1 to 100000, not '0'");
        row("eval: an unknown backend", {"eval", "--source", "@DIR@/good.cpp", "--backend", "nope"}, "option --backend takes cpu or cuda, not 'nope'");
        row("eval: a shape without a family", {"eval", "--source", "@DIR@/good.cpp", "--shape", "rows=4,cols=4"},
            "option --shape describes a card of one family");
        row("eval: a card and a family", {"eval", "--source", "@DIR@/good.cpp", "--card", "@DIR@/plan.json", "--family", "softmax"},
            "options --card and --family both describe the card");
        row("eval: a launch plan for a cpu candidate", {"eval", "--source", "@DIR@/good.cpp", "--launch", "@DIR@/plan.json"},
            "option --launch gives a CUDA launch plan; this is a cpu candidate");
        row("eval: a CUDA candidate with no plan", {"eval", "--source", "@DIR@/noplan.cu"},
            "this CUDA candidate has no launch plan: pass --launch FILE or put a /* kforge-launch {...} */ comment in the source");
        row("eval: a cuda backend with no plan", {"eval", "--backend", "cuda", "--source", "@DIR@/good.cpp"},
            "this CUDA candidate has no launch plan");
        row("eval: a plan comment that is not JSON", {"eval", "--source", "@DIR@/badplan.cu"},
            "badplan.cu': the /* kforge-launch ... */ comment does not hold valid JSON");
        row("eval: a source that is not there", {"eval", "--source", "@DIR@/missing.cpp"}, "cannot read '");
        row("profile: node 0", {"profile", "--session", "@DIR@/s.kforge", "--node", "0"}, "option --node takes a whole number of at least 1, not '0'");
        row("resume: a family", {"search", "--resume", "--session", "@DIR@/s.kforge", "--family", "softmax"},
            "--resume goes on with the session's own operator, backend and proposer; --family cannot change them");
        row("resume: no such session", {"search", "--resume", "--session", "@DIR@/none.kforge"}, "cannot resume '");
        row("a base URL that is not http", {"search", "--proposer", "llm:vllm/m", "--base-url", "ftp://x"},
            "option --base-url: a base URL is http:// or https:// and a host (e.g. http://localhost:8000/v1), not 'ftp://x'");
        row("compiling too far ahead", {"search", "--compile-ahead", "9"}, "option --compile-ahead takes a whole number from 0 to 8, not '9'");
        row("a negative exploration constant", {"search", "--exploration", "-0.1"}, "option --exploration takes a number from 0 to 100, not '-0.1'");
        row("a widening exponent above 1", {"search", "--widen-alpha", "1.5"}, "option --widen-alpha takes a number from 0 to 1, not '1.5'");
        row("a widening constant that is not a number", {"search", "--widen-k", "two"}, "option --widen-k takes a number from 0 to 1000, not 'two'");
        row("no evaluations before pruning", {"search", "--prune-min-visits", "0"},
            "option --prune-min-visits takes a whole number from 1 to 1000000, not '0'");
        row("too many roots", {"search", "--roots", "1001"}, "option --roots takes a whole number from 0 to 1000, not '1001'");
        row("negative repairs", {"search", "--max-repairs", "-1"}, "option --max-repairs takes a whole number from 0 to 1000, not '-1'");
        row("check-templates: no workers", {"check-templates", "--workers", "0"}, "option --workers takes a whole number from 1 to 256, not '0'");
        row("check-templates: no box shapes", {"check-templates", "--box-shapes", "0"}, "option --box-shapes takes a whole number from 1 to 1000, not '0'");
        row("check-templates: a seed that is not a number", {"check-templates", "--box-shapes", "2", "--seed", "x1"},
            "option --seed takes a whole number of at least 0, not 'x1'");
    }

    void badOptionsAreRefused()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        // A worker that cannot start: an option that slipped through fails differently, and fast.
        args.insert(1, QStringLiteral("--worker"));
        args.insert(2, QStringLiteral("false"));
        for (auto &a : args)
            a.replace(QStringLiteral("@DIR@"), m_dir.path());
        const auto r = cli(args, m_dir.path());
        QVERIFY2(r.code == 2, qPrintable(QStringLiteral("exit %1: %2").arg(r.code).arg(r.err)));
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY(!QFile::exists(m_dir.filePath(QStringLiteral("kforge-session.kforge"))));
    }

    // What the candidate file holds reaches the worker byte for byte, with the launch plan from
    // --launch or from the source's comment.
    void theWorkerGetsTheCandidateAsWritten_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<QString>("backend");
        QTest::addColumn<bool>("base64");
        QTest::addColumn<bool>("plan");
        QTest::newRow("UTF-8 source") << QStringLiteral("good.cpp") << QStringList{} << QStringLiteral("cpu") << false << false;
        QTest::newRow("Latin-1 bytes in a comment") << QStringLiteral("latin1.cpp") << QStringList{} << QStringLiteral("cpu") << true << false;
        QTest::newRow("the plan from the comment") << QStringLiteral("plan.cu") << QStringList{} << QStringLiteral("cuda") << false << true;
        QTest::newRow("the plan from --launch")
            << QStringLiteral("noplan.cu") << QStringList{QStringLiteral("--launch"), QStringLiteral("@DIR@/plan.json")} << QStringLiteral("cuda")
            << false << true;
    }

    void theWorkerGetsTheCandidateAsWritten()
    {
        QFETCH(QString, source);
        QFETCH(QStringList, extra);
        QFETCH(QString, backend);
        QFETCH(bool, base64);
        QFETCH(bool, plan);
        QFile::remove(m_dir.filePath(QStringLiteral("request.json")));
        QStringList args{QStringLiteral("eval"), QStringLiteral("--source"), m_dir.filePath(source), QStringLiteral("--worker"), scriptWorker()};
        for (auto a : extra)
            args << a.replace(QStringLiteral("@DIR@"), m_dir.path());
        const auto r = cli(args, m_dir.path());
        QVERIFY2(r.code == 1, qPrintable(QStringLiteral("exit %1: %2").arg(r.code).arg(r.err)));
        const auto req = nlohmann::json::parse(fileBytes(m_dir.filePath(QStringLiteral("request.json"))));
        QCOMPARE(req.at("candidate").contains("source_b64"), base64);
        const auto cand = req.at("candidate").get<kforge::Candidate>();
        QCOMPARE(QString::fromStdString(cand.backend), backend);
        QVERIFY(cand.source == fileBytes(m_dir.filePath(source)));
        if (plan)
            QCOMPARE(cand.launch, nlohmann::json::parse(kPlan));
    }

    // A source with a byte that is not UTF-8 is evaluated by the real worker: a verdict, never an abort.
    void nonUtf8SourceIsEvaluated_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("status");
        QTest::newRow("in a comment: correct") << QStringLiteral("latin1.cpp") << 0 << QString();
        QTest::newRow("in the code: a compile error") << QStringLiteral("badbyte.cpp") << 1 << QStringLiteral("compile_error");
    }

    void nonUtf8SourceIsEvaluated()
    {
        QFETCH(QString, source);
        QFETCH(int, code);
        QFETCH(QString, status);
        const auto r = cli({QStringLiteral("eval"), QStringLiteral("--source"), m_dir.filePath(source), QStringLiteral("--verify-only"),
                            QStringLiteral("--rows"), QStringLiteral("8"), QStringLiteral("--cols"), QStringLiteral("64")},
                           m_dir.path());
        QVERIFY2(r.code == code, qPrintable(QStringLiteral("exit %1: %2\n%3").arg(r.code).arg(r.err, r.out)));
        const auto v = nlohmann::json::parse(r.out.toStdString());
        if (!status.isEmpty())
            QCOMPARE(QString::fromStdString(v.at("status").get<std::string>()), status);
    }

    // A backend no worker offers (cuda on a machine without a GPU) is refused before any node, with the
    // real worker's reason, and leaves no session; before, the search spent its whole budget on error nodes.
    void aBackendNoWorkerOffersIsRefused_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("search") << QStringList{QStringLiteral("search"), QStringLiteral("--nodes"), QStringLiteral("2")};
        QTest::newRow("check-templates") << QStringList{QStringLiteral("check-templates"), QStringLiteral("--family"), QStringLiteral("relu")};
    }

    void aBackendNoWorkerOffersIsRefused()
    {
        QFETCH(QStringList, args);
        args << QStringLiteral("--backend") << QStringLiteral("cuda") << QStringLiteral("--session") << m_dir.filePath(QStringLiteral("nogpu.kforge"));
        if (args.front() == QStringLiteral("check-templates"))
            args.removeLast(), args.removeLast(); // it writes no session
        QFile::remove(m_dir.filePath(QStringLiteral("nogpu.kforge")));
        const auto r = cli(args, m_dir.path());
        if (r.code == 0)
            QSKIP("this machine's worker has a CUDA device");
        QVERIFY2(r.code == 2, qPrintable(QStringLiteral("exit %1: %2").arg(r.code).arg(r.err)));
        QVERIFY2(r.err.contains(QStringLiteral("no worker can evaluate cuda kernels (kforge-worker@")), qPrintable(r.err));
        // The worker's own reason: no driver, no device, or a build without the backend.
        QVERIFY2(r.err.contains(QStringLiteral("cuInit")) || r.err.contains(QStringLiteral("no CUDA device")) || r.err.contains(QStringLiteral("CUDA backend"))
                     || r.err.contains(QStringLiteral("libcuda")),
                 qPrintable(r.err));
        QVERIFY2(!r.out.contains(QStringLiteral("node ")), qPrintable(r.out));
        QVERIFY(!QFile::exists(m_dir.filePath(QStringLiteral("nogpu.kforge"))));
    }

    // A worker that answers garbage or dies gives a verdict on stdout and exit status 1; its last
    // words come with our secrets' values redacted.
    void hostileWorkerGivesAVerdict_data()
    {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("status");
        QTest::addColumn<QString>("message");
        QTest::newRow("an array") << QStringLiteral("array") << QStringLiteral("crashed") << QStringLiteral("not a JSON object");
        QTest::newRow("an unknown status") << QStringLiteral("status") << QStringLiteral("error") << QStringLiteral("unknown verdict status 'splendid'");
        QTest::newRow("binary bytes") << QStringLiteral("binary") << QStringLiteral("crashed") << QStringLiteral("not JSON");
        QTest::newRow("a death with a secret") << QStringLiteral("die") << QStringLiteral("crashed")
                                              << QStringLiteral("its last words: OPENAI_API_KEY=[redacted] and then it fell over");
    }

    void hostileWorkerGivesAVerdict()
    {
        QFETCH(QString, mode);
        QFETCH(QString, status);
        QFETCH(QString, message);
        const QString secret = QStringLiteral("plainsecretvalue123");
        QProcess p;
        auto env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("KFORGE_TEST_SERVICE_TOKEN"), secret);
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(KFORGE_CLI_PATH), {QStringLiteral("eval"), QStringLiteral("--source"), m_dir.filePath(QStringLiteral("good.cpp")),
                                                 QStringLiteral("--worker"), scriptWorker(mode + QStringLiteral(" ") + secret)});
        QVERIFY(p.waitForFinished(60000));
        const auto out = QString::fromUtf8(p.readAllStandardOutput());
        QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 1,
                 qPrintable(QStringLiteral("exit %1: %2").arg(p.exitCode()).arg(QString::fromUtf8(p.readAllStandardError()))));
        const auto v = nlohmann::json::parse(out.toStdString());
        QCOMPARE(QString::fromStdString(v.at("status").get<std::string>()), status);
        const auto msg = QString::fromStdString(v.at("reasons").at(0).at("message").get<std::string>());
        QVERIFY2(msg.contains(message), qPrintable(msg));
        QVERIFY2(!out.contains(secret), qPrintable(out));
    }

    // SIGKILL the CLI while its worker spins in a kernel that never returns: the worker and anything
    // it started die with it.
    void killedCliLeavesNoWorker_data()
    {
        QTest::addColumn<QString>("worker");
        QTest::newRow("the worker in tests/kernels/cpu/hang.cpp") << QString();
        // A worker that spins without ever looking at its socket again: only PR_SET_PDEATHSIG stops it.
        QTest::newRow("a worker deaf to its socket") << QStringLiteral("spin");
    }

    void killedCliLeavesNoWorker()
    {
        QFETCH(QString, worker);
        QStringList args{QStringLiteral("eval"), QStringLiteral("--source"), QStringLiteral(KFORGE_TEST_KERNELS "/cpu/hang.cpp"),
                         QStringLiteral("--verify-only"), QStringLiteral("--rows"), QStringLiteral("8"), QStringLiteral("--cols"),
                         QStringLiteral("64"), QStringLiteral("--deadline-ms"), QStringLiteral("600000")};
        if (!worker.isEmpty())
            args << QStringLiteral("--worker") << scriptWorker(worker);
        // A SIGKILLed CLI cannot remove its log folder: let it make that folder where we clean up.
        QTemporaryDir tmp;
        auto env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("TMPDIR"), tmp.path());
        QProcess p;
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(KFORGE_CLI_PATH), args);
        QVERIFY(p.waitForStarted());
        const int cli = int(p.processId());
        // Wait for the kernel to spin: some process below the CLI running, no compiler among them, for a second.
        std::map<int, ProcStat> tree;
        QElapsedTimer timer;
        timer.start();
        int spinning = 0;
        while (spinning < 5 && timer.elapsed() < 60000) {
            QThread::msleep(200);
            tree = descendants(cli);
            bool running = false, compiling = false;
            for (const auto &[pid, s] : tree) {
                running = running || s.state == 'R';
                compiling = compiling || s.comm.find("cc1") != std::string::npos || s.comm == "as" || s.comm == "ld" || s.comm == "c++"
                         || s.comm == "g++";
            }
            spinning = running && !compiling ? spinning + 1 : 0;
        }
        QVERIFY2(spinning >= 5, "the worker never started spinning in the hanging kernel");
        QVERIFY(!tree.empty());
        QStringList seen;
        for (const auto &[pid, s] : tree)
            seen << QStringLiteral("%1 %2 %3").arg(pid).arg(QString::fromStdString(s.comm)).arg(QChar::fromLatin1(s.state));
        qInfo("killing the CLI %d above %s", cli, qPrintable(seen.join(QStringLiteral(", "))));
        ::kill(cli, SIGKILL);
        QVERIFY(p.waitForFinished(10000));
        // Gone, or a zombie (not running) waiting for a reaper; a reused pid has another start time.
        const auto alive = [&] {
            QStringList left;
            for (const auto &[pid, s] : tree) {
                ProcStat now;
                if (procStat(pid, now) && now.start == s.start && now.state != 'Z' && now.state != 'X')
                    left << QStringLiteral("%1 (%2, %3)").arg(pid).arg(QString::fromStdString(now.comm)).arg(QChar::fromLatin1(now.state));
            }
            return left;
        };
        timer.restart();
        while (!alive().isEmpty() && timer.elapsed() < 10000)
            QThread::msleep(100);
        const auto left = alive();
        if (!left.isEmpty())
            for (const auto &[pid, s] : tree)
                ::kill(pid, SIGKILL); // do not leave them spinning after a failed test
        QVERIFY2(left.isEmpty(), qPrintable(QStringLiteral("still running: ") + left.join(QStringLiteral(", "))));
    }

    // A campaign over the small built-in decoder: the plan names every card and gives nodes only to the
    // ones a template can search, largest savable time first; the run makes one operator per planned card
    // in one session, each with its share of the nodes.
    void campaignPlansThenSearches()
    {
        const QString w = m_dir.filePath(QStringLiteral("camp.json"));
        auto r = cli({QStringLiteral("model"), QStringLiteral("decoder"), QStringLiteral("--out"), w}, m_dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.err));
        r = cli({QStringLiteral("profile"), w, QStringLiteral("--device"), QStringLiteral("cpu")}, m_dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.err));
        r = cli({QStringLiteral("campaign"), QStringLiteral("--workload"), w, QStringLiteral("--nodes"), QStringLiteral("3"), QStringLiteral("--plan")},
                m_dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(QStringLiteral("3 of 3 nodes planned")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("no template family")), qPrintable(r.out));
        // The CPU worker measured its copy rate for the plan's floors.
        QVERIFY2(r.out.contains(QStringLiteral(" GB/s)")) && !r.out.contains(QStringLiteral("(copy 0 GB/s)")), qPrintable(r.out));
        const QString session = m_dir.filePath(QStringLiteral("camp.campaign.kforge"));
        QVERIFY(!QFile::exists(session)); // a plan writes nothing
        r = cli({QStringLiteral("campaign"), QStringLiteral("--workload"), w, QStringLiteral("--nodes"), QStringLiteral("3"), QStringLiteral("--samples"),
                 QStringLiteral("5"), QStringLiteral("--no-lessons")},
                m_dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        QVERIFY2(r.out.contains(QStringLiteral("campaign done")), qPrintable(r.out));
        kforge::SessionStore reader(session.toStdString(), kforge::SessionStore::Mode::ReadOnly);
        const auto sessions = reader.sessions();
        QCOMPARE(sessions.size(), size_t(1));
        const auto ops = reader.operators(sessions[0].id);
        QVERIFY2(ops.size() >= 1 && ops.size() <= 3, qPrintable(QString::number(ops.size())));
        int candidates = 0;
        for (const auto &n : reader.nodes(sessions[0].id)) {
            QVERIFY(n.status != "running");
            candidates += n.parentId.has_value();
        }
        QCOMPARE(candidates, 3);
        r = cli({QStringLiteral("campaign"), QStringLiteral("--workload"), m_dir.filePath(QStringLiteral("none.json"))}, m_dir.path());
        QCOMPARE(r.code, 2);
    }

    // A campaign stopped by SIGTERM while evaluations are in flight exits 130 with its session stopped and
    // nothing running. Each operator's engine is gone before the pool shuts down, and the verdicts still in
    // flight arrive after it: they once wrote into the destroyed engine (heap corruption, an abort in about
    // one stop of three), so the stop is made a few times.
    void campaignStoppedBySigterm()
    {
        const QString w = m_dir.filePath(QStringLiteral("camp.json"));
        if (!QFile::exists(w))
            QSKIP("campaignPlansThenSearches made no profiled workload");
        for (int round = 0; round < 3; ++round) {
            const QString file = m_dir.filePath(QStringLiteral("camp-term-%1.kforge").arg(round));
            QFile::remove(file);
            QProcess p;
            p.start(QStringLiteral(KFORGE_CLI_PATH), {QStringLiteral("campaign"), QStringLiteral("--workload"), w, QStringLiteral("--nodes"),
                                                      QStringLiteral("60"), QStringLiteral("--samples"), QStringLiteral("5"), QStringLiteral("--no-lessons"),
                                                      QStringLiteral("--session"), file});
            QVERIFY(p.waitForStarted());
            waitForFinishedNodes(file, p, 1 + round, 90000);
            QVERIFY2(p.state() == QProcess::Running, "the campaign ended before the signal");
            ::kill(pid_t(p.processId()), SIGTERM);
            QVERIFY(p.waitForFinished(60000));
            const QString err = QString::fromUtf8(p.readAllStandardError());
            QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 130, qPrintable(err));
            kforge::SessionStore reader(file.toStdString(), kforge::SessionStore::Mode::ReadOnly);
            QCOMPARE(reader.sessions().back().status, std::string("stopped"));
            for (const auto &n : reader.nodes(reader.sessions().back().id))
                QVERIFY2(n.status != "running", n.summary.c_str());
        }
    }

    // A search stopped by a signal: SIGKILL leaves what it had, SIGTERM leaves nothing running; either
    // way `search --resume` goes on to the budget with no node lost or duplicated, and the session file
    // alone holds it all (no -wal left).
    void stoppedSearchResumes_data()
    {
        QTest::addColumn<int>("sig");
        QTest::newRow("SIGKILL") << int(SIGKILL);
        QTest::newRow("SIGTERM") << int(SIGTERM);
    }

    void stoppedSearchResumes()
    {
        QFETCH(int, sig);
        const QString file = m_dir.filePath(QStringLiteral("resume-%1.kforge").arg(sig));
        QFile::remove(file);
        const QStringList common{QStringLiteral("--session"), file, QStringLiteral("--no-lessons"), QStringLiteral("--samples"), QStringLiteral("5")};
        QProcess p;
        p.start(QStringLiteral(KFORGE_CLI_PATH), QStringList{QStringLiteral("search"), QStringLiteral("--family"), QStringLiteral("softmax"),
                                                             QStringLiteral("--shape"), QStringLiteral("rows=32,cols=256"),
                                                             QStringLiteral("--nodes"), QStringLiteral("6")} + common);
        QVERIFY(p.waitForStarted());
        // Stop it once a node is finished and another is in flight.
        const int finished = waitForFinishedNodes(file, p, 1, 90000);
        QVERIFY2(finished >= 1 && p.state() == QProcess::Running, "the search finished no node, or all of them, before the signal");
        ::kill(pid_t(p.processId()), sig);
        QVERIFY(p.waitForFinished(30000));
        if (sig == SIGTERM) {
            QCOMPARE(p.exitStatus(), QProcess::NormalExit);
            QCOMPARE(p.exitCode(), 130);
            QVERIFY(QString::fromUtf8(p.readAllStandardError()).contains(QStringLiteral("stopping now")));
            kforge::SessionStore reader(file.toStdString(), kforge::SessionStore::Mode::ReadOnly);
            QCOMPARE(reader.sessions().back().status, std::string("stopped"));
            for (const auto &n : reader.nodes(reader.sessions().back().id))
                QVERIFY2(n.status != "running", n.summary.c_str());
            QVERIFY(!QFile::exists(file + QStringLiteral("-wal")) || QFileInfo(file + QStringLiteral("-wal")).size() == 0);
        }
        QProcess r;
        r.start(QStringLiteral(KFORGE_CLI_PATH), QStringList{QStringLiteral("search"), QStringLiteral("--resume")} + common);
        QVERIFY(r.waitForFinished(180000));
        const QString said = QString::fromUtf8(r.readAllStandardOutput()) + QString::fromUtf8(r.readAllStandardError());
        QVERIFY2(r.exitStatus() == QProcess::NormalExit && r.exitCode() == 0, qPrintable(said));
        QVERIFY2(said.contains(QStringLiteral("resuming softmax")), qPrintable(said));
        QVERIFY(!QFile::exists(file + QStringLiteral("-wal")) || QFileInfo(file + QStringLiteral("-wal")).size() == 0);
        kforge::SessionStore reader(file.toStdString(), kforge::SessionStore::Mode::ReadOnly);
        const auto sessions = reader.sessions();
        QCOMPARE(sessions.size(), size_t(1));
        QCOMPARE(sessions[0].status, std::string("finished"));
        const auto nodes = reader.nodes(sessions[0].id);
        QCOMPARE(nodes.size(), size_t(7)); // the root and the 6 of the budget
        std::set<std::string> points;
        for (const auto &n : nodes) {
            QVERIFY2(n.status != "running" && n.status != "interrupted", n.summary.c_str());
            if (n.parentId)
                points.insert(n.templateId + n.params.dump());
        }
        QCOMPARE(points.size(), size_t(6));
    }

    // A campaign over two operators killed with SIGKILL while its first operator's nodes are in flight:
    // `search --resume` goes on with both operators of the plan, each to its share, in the same session;
    // no node lost or duplicated, nothing left running, and --nodes cannot change a campaign's shares.
    void killedCampaignResumesEveryOperator()
    {
        const QString w = m_dir.filePath(QStringLiteral("killed.json"));
        auto r = cli({QStringLiteral("model"), QStringLiteral("decoder"), QStringLiteral("--out"), w}, m_dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.err));
        r = cli({QStringLiteral("profile"), w, QStringLiteral("--device"), QStringLiteral("cpu")}, m_dir.path());
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QString file = m_dir.filePath(QStringLiteral("killed.campaign.kforge"));
        QFile::remove(file);
        const QStringList common{QStringLiteral("--no-lessons"), QStringLiteral("--samples"), QStringLiteral("5")};
        QProcess p;
        p.start(QStringLiteral(KFORGE_CLI_PATH), QStringList{QStringLiteral("campaign"), QStringLiteral("--workload"), w, QStringLiteral("--nodes"),
                                                             QStringLiteral("4"), QStringLiteral("--min-nodes"), QStringLiteral("2"),
                                                             QStringLiteral("--session"), file} + common);
        QVERIFY(p.waitForStarted());
        // Kill it once the first operator has a candidate, before the second has any.
        QElapsedTimer timer;
        timer.start();
        int candidates = 0;
        while (candidates < 1 && timer.elapsed() < 90000 && p.state() == QProcess::Running) {
            QThread::msleep(50);
            try {
                kforge::SessionStore reader(file.toStdString(), kforge::SessionStore::Mode::ReadOnly);
                candidates = 0;
                for (const auto &s : reader.sessions())
                    for (const auto &n : reader.nodes(s.id))
                        candidates += n.parentId.has_value();
            } catch (const std::exception &) {
            }
        }
        QVERIFY2(candidates >= 1 && p.state() == QProcess::Running, "the campaign made no candidate, or finished, before the kill");
        ::kill(pid_t(p.processId()), SIGKILL);
        QVERIFY(p.waitForFinished(30000));
        std::map<std::string, int> planned;
        {
            kforge::SessionStore reader(file.toStdString(), kforge::SessionStore::Mode::ReadOnly);
            const auto session = reader.sessions().back();
            QCOMPARE(session.status, std::string("running")); // a kill leaves what it had
            for (const auto &step : session.options.at("campaign_plan"))
                planned[step.at("key").get<std::string>()] = step.at("nodes").get<int>();
            QCOMPARE(int(planned.size()), 2);
            QCOMPARE(reader.operators(session.id).size(), size_t(2)); // every planned operator up front
            int made = 0;
            for (const auto &n : reader.nodes(session.id))
                made += n.parentId.has_value();
            QVERIFY2(made < 4, qPrintable(QString::number(made)));
        }
        r = cli(QStringList{QStringLiteral("search"), QStringLiteral("--resume"), QStringLiteral("--session"), file, QStringLiteral("--nodes"),
                            QStringLiteral("9")} + common);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(QStringLiteral("holds a campaign: its plan gives each operator its nodes")), qPrintable(r.err));

        QProcess resumed;
        resumed.start(QStringLiteral(KFORGE_CLI_PATH), QStringList{QStringLiteral("search"), QStringLiteral("--resume"), QStringLiteral("--session"), file} + common);
        QVERIFY(resumed.waitForFinished(180000));
        const QString said = QString::fromUtf8(resumed.readAllStandardOutput()) + QString::fromUtf8(resumed.readAllStandardError());
        QVERIFY2(resumed.exitStatus() == QProcess::NormalExit && resumed.exitCode() == 0, qPrintable(said));
        QVERIFY2(said.contains(QStringLiteral("resuming campaign")) && said.contains(QStringLiteral("campaign done")), qPrintable(said));
        QVERIFY(!QFile::exists(file + QStringLiteral("-wal")) || QFileInfo(file + QStringLiteral("-wal")).size() == 0);
        kforge::SessionStore reader(file.toStdString(), kforge::SessionStore::Mode::ReadOnly);
        const auto sessions = reader.sessions();
        QCOMPARE(sessions.size(), size_t(1));
        QCOMPARE(sessions[0].status, std::string("finished"));
        std::map<int64_t, std::string> keyOf;
        for (const auto &op : reader.operators(sessions[0].id))
            keyOf[op.id] = op.card.key;
        std::map<std::string, int> made, roots;
        std::set<std::string> points;
        for (const auto &n : reader.nodes(sessions[0].id)) {
            QVERIFY2(n.status != "running" && n.status != "interrupted", n.summary.c_str());
            if (!n.parentId) {
                ++roots[keyOf[n.operatorId]];
                continue;
            }
            ++made[keyOf[n.operatorId]];
            points.insert(keyOf[n.operatorId] + n.templateId + n.params.dump());
        }
        for (const auto &[key, nodes] : planned) {
            QCOMPARE(made[key], nodes);
            QCOMPARE(roots[key], 1);
        }
        QCOMPARE(int(points.size()), 4);
    }

    // show --node says why the search made a node: the scores of the selection that expanded its
    // parent, as stored with it, and the search's MCTS constants come from the command line.
    void showNodeSaysWhyItWasChosen()
    {
        const QString file = m_dir.filePath(QStringLiteral("why.kforge"));
        QFile::remove(file);
        const auto r = cli({QStringLiteral("search"), QStringLiteral("--session"), file, QStringLiteral("--family"), QStringLiteral("softmax"),
                            QStringLiteral("--shape"), QStringLiteral("rows=16,cols=64"), QStringLiteral("--nodes"), QStringLiteral("5"),
                            QStringLiteral("--samples"), QStringLiteral("3"), QStringLiteral("--no-lessons"), QStringLiteral("--exploration"),
                            QStringLiteral("1.5"), QStringLiteral("--widen-alpha"), QStringLiteral("0")});
        QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
        kforge::SessionStore reader(file.toStdString(), kforge::SessionStore::Mode::ReadOnly);
        const auto nodes = reader.nodes(reader.sessions().back().id);
        QCOMPARE(reader.sessions().back().options.at("mcts").value("exploration", 0.0), 1.5);
        int viaUct = 0;
        for (const auto &n : nodes) {
            if (!n.parentId)
                continue;
            const auto shown = cli({QStringLiteral("show"), QStringLiteral("--session"), file, QStringLiteral("--node"), QString::number(n.id)});
            QVERIFY2(shown.code == 0, qPrintable(shown.err));
            QVERIFY2(shown.out.contains(QStringLiteral("why chosen: Chosen because ")), qPrintable(shown.out));
            if (n.selection.value("rule", "") == "uct") {
                ++viaUct; // widening 2 at alpha 0: past the root's two children, UCT picks which to grow
                QCOMPARE(n.selection.value("c", 0.0), 1.5);
                QVERIFY2(shown.out.contains(QStringLiteral(" won UCT ")), qPrintable(shown.out));
            }
        }
        QVERIFY(viaUct >= 1);
        // The session first, as reverify and export take it, works as well.
        const auto positional = cli({QStringLiteral("show"), file, QStringLiteral("--best")});
        QVERIFY2(positional.code == 0 && positional.out.contains(QStringLiteral("\"best\":{")), qPrintable(positional.err + positional.out));
        const auto none = cli({QStringLiteral("show"), QStringLiteral("--session"), file, QStringLiteral("--node"), QStringLiteral("999")});
        QCOMPARE(none.code, 2);
        QVERIFY2(none.err.contains(QStringLiteral("has no node 999")), qPrintable(none.err));
        const auto both = cli({QStringLiteral("show"), QStringLiteral("--session"), file, QStringLiteral("--node"), QStringLiteral("2"),
                               QStringLiteral("--best")});
        QCOMPARE(both.code, 2);
        QVERIFY2(both.err.contains(QStringLiteral("options --best and --node each pick what to show")), qPrintable(both.err));
    }

    // reverify through the real worker: a wrong kernel a person accepted is revoked (the guard's reject,
    // naming the failed trial) and leaves the pack's choice; a correct accepted one holds. The new seed
    // reaches the worker with a verify-only request.
    void reverifyRevokesAWrongAcceptedKernel()
    {
        using namespace kforge;
        const QString file = m_dir.filePath(QStringLiteral("reverify.kforge"));
        QFile::remove(file);
        int64_t sid = 0, good = 0, wrong = 0;
        {
            SessionStore s(file.toStdString());
            sid = s.createSession({0, "reverify", "single operator", "cpu", "list", "finished", {}, 0});
            const auto card = makeSoftmaxCard(64, 256);
            const auto op = s.addOperator(sid, card);
            NodeRecord root;
            root.sessionId = sid;
            root.operatorId = op;
            root.status = "baseline";
            const auto rootId = s.addNode(root, Candidate{"reference", card.atenSchema, nlohmann::json::object()});
            NodeRecord n = root;
            n.parentId = rootId;
            n.expansion = "improve";
            n.status = "running";
            good = s.addNode(n, Candidate{"cpu", fileBytes(QStringLiteral(KFORGE_TEST_KERNELS "/cpu/good_softmax.cpp")), {}});
            wrong = s.addNode(n, Candidate{"cpu", fileBytes(QStringLiteral(KFORGE_TEST_KERNELS "/cpu/naive_overflow.cpp")), {}});
            Verdict v;
            v.status = VerdictStatus::Accepted;
            v.speedup = 1.5;
            s.finishNode(good, v, 0.4);
            s.addDecision(good, "accept", "guard", "accepted: 1.5x");
            v.status = VerdictStatus::Incorrect;
            v.speedup = 3.0;
            s.finishNode(wrong, v, -1);
            s.addDecision(wrong, "reject", "guard", "incorrect");
        }
        const auto decided = cli({QStringLiteral("decide"), QStringLiteral("--session"), file, QStringLiteral("--node"), QString::number(wrong),
                                  QStringLiteral("--accept"), QStringLiteral("--reason"), QStringLiteral("looks fine to me")});
        QVERIFY2(decided.code == 0, qPrintable(decided.err));
        const auto chosenBefore = pack::choosePackNodes(SessionStore(file.toStdString(), SessionStore::Mode::ReadOnly), sid);
        QCOMPARE(chosenBefore.front().node->node.id, wrong); // a person's accept, and faster

        const auto r = cli({QStringLiteral("reverify"), file, QStringLiteral("--seed"), QStringLiteral("12345")});
        QVERIFY2(r.code == 1, qPrintable(QStringLiteral("exit %1: %2 %3").arg(r.code).arg(r.out, r.err)));
        QVERIFY2(r.out.contains(QStringLiteral("node %1 held on re-verification (input seed 12345)").arg(good)), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("node %1 revoked: revoked on re-verification (input seed 12345): trial '").arg(wrong)),
                 qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("2 re-verified, 1 revoked")), qPrintable(r.out));
        {
            SessionStore reader(file.toStdString(), SessionStore::Mode::ReadOnly);
            const auto d = reader.nodeDetail(wrong);
            QCOMPARE(d->decisions.back().actor, std::string("guard"));
            QCOMPARE(d->decisions.back().decision, std::string("reject"));
            QVERIFY(isRevocation(d->decisions.back()));
            QCOMPARE(reader.nodeDetail(good)->decisions.size(), size_t(1)); // held: nothing added
            const auto chosen = pack::choosePackNodes(reader, sid);
            QCOMPARE(chosen.front().node->node.id, good);
        }
        // Revoked nodes are not accepted any more: a second pass re-verifies the good one only.
        const auto again = cli({QStringLiteral("reverify"), file, QStringLiteral("--node"), QString::number(wrong)});
        QCOMPARE(again.code, 2);
        QVERIFY2(again.err.contains(QStringLiteral("is not accepted")), qPrintable(again.err));
        // --session FILE, as show and decide take it, names the same session; named twice is refused.
        const auto named = cli({QStringLiteral("reverify"), QStringLiteral("--node"), QString::number(wrong), QStringLiteral("--session"), file});
        QCOMPARE(named.code, 2);
        QVERIFY2(named.err.contains(QStringLiteral("is not accepted")), qPrintable(named.err));
        const auto twice = cli({QStringLiteral("reverify"), file, QStringLiteral("--session"), file});
        QCOMPARE(twice.code, 2);
        QVERIFY2(twice.err.contains(QStringLiteral("the session is named twice")), qPrintable(twice.err));

        // What the worker is sent: verify only, with the seed.
        const auto scripted = cli({QStringLiteral("reverify"), file, QStringLiteral("--node"), QString::number(good), QStringLiteral("--seed"),
                                   QStringLiteral("77"), QStringLiteral("--worker"), scriptWorker(QString())});
        QCOMPARE(scripted.code, 1); // the script's failure revokes it
        const auto request = nlohmann::json::parse(fileBytes(m_dir.filePath(QStringLiteral("request.json"))));
        QCOMPARE(request.at("options").value("input_seed", 0), 77);
        QCOMPARE(request.at("options").value("benchmark", true), false);
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
