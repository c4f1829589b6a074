// Workloads: the file format and its validation, call grouping and the Chrome trace, cards for any ATen
// call, and, with Debian's python3-torch, a real TorchScript model profiled through the real worker, its
// cards verified through the pipeline, and the Python capture helper's output.
#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <set>

#include "pool/worker_pool.h"
#include "proposers/template_library.h"
#include "proposers/template_proposer.h"
#include "test_support.h"
#include "util/error.h"
#include "workload/call_cards.h"
#include "workload/workload_file.h"

using namespace kforge;
using J = nlohmann::json;

namespace {

const char *kHelper = KFORGE_SOURCE_DIR "/python/kforge_capture.py";

// A Python that imports torch ($KFORGE_PYTHON, python3, /usr/bin/python3), or "".
QString torchPython()
{
    QStringList tries;
    if (qEnvironmentVariableIsSet("KFORGE_PYTHON"))
        tries << qEnvironmentVariable("KFORGE_PYTHON");
    tries << QStringLiteral("python3") << QStringLiteral("/usr/bin/python3");
    for (const auto &py : tries) {
        QProcess p;
        p.start(py, {QStringLiteral("-c"), QStringLiteral("import torch")});
        if (p.waitForFinished(60000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0)
            return py;
    }
    return {};
}

// Runs python; returns exit code, stderr in `err`.
int runPython(const QString &py, const QStringList &args, QString *err = nullptr)
{
    QProcess p;
    p.start(py, args);
    if (!p.waitForFinished(120000))
        return -1;
    if (err)
        *err = QString::fromUtf8(p.readAllStandardError());
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

void writeFile(const QString &path, const QByteArray &text)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text);
}

std::string thrown(const J &j)
{
    try {
        parseWorkload(j, "w.json");
    } catch (const Error &e) {
        return e.what();
    }
    return "(accepted)";
}

J minimal()
{
    return {{"kforge_workload", 1}, {"model", {{"kind", "torchscript"}, {"path", "m.pt"}}},
            {"inputs", {{"seed", 3}, {"tensors", J::array({{{"shape", {4, 32}}, {"dtype", "float32"}}})}}}};
}

CapturedCall call(const std::string &op, const std::string &overload, std::vector<CallArg> args, double dur, int depth = 0,
                  const std::string &schema = "")
{
    CapturedCall c;
    c.op = op;
    c.overload = overload;
    c.args = std::move(args);
    c.durUs = dur;
    c.depth = depth;
    c.schema = schema.empty() ? op + "(...) -> Tensor" : schema;
    return c;
}

CallArg tensor(std::vector<int64_t> shape, const std::string &dtype = "float32", const std::string &name = "self")
{
    CallArg a;
    a.name = name;
    a.kind = "tensor";
    TensorMeta t;
    t.shape = shape;
    t.dtype = dtype;
    int64_t s = 1;
    t.strides.assign(shape.size(), 0);
    for (size_t i = shape.size(); i-- > 0;) {
        t.strides[i] = s;
        s *= shape[i];
    }
    a.tensors.push_back(t);
    return a;
}

CallArg scalar(const std::string &kind, J value, const std::string &name = "")
{
    CallArg a;
    a.name = name;
    a.kind = kind;
    a.value = kind == "none" ? J() : value;
    return a;
}

// A naive linear: y[i][o] = sum_k x[i][k] w[o][k] + b[o], in double.
const char *kLinearKernel = R"(
extern "C" int kforge_entry(const kf_tensor *in, int n_in, kf_tensor *out, int n_out)
{
    if (n_in != 3 || n_out != 1 || in[0].dtype != KF_F32 || in[0].ndim != 2)
        return 1;
    const int64_t rows = in[0].sizes[0], k = in[0].sizes[1], outs = in[1].sizes[0];
    const float *x = (const float *)in[0].data, *w = (const float *)in[1].data, *b = (const float *)in[2].data;
    float *y = (float *)out[0].data;
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t o = 0; o < outs; ++o) {
            double s = b[o];
            for (int64_t j = 0; j < k; ++j)
                s += double(x[i * k + j]) * double(w[o * k + j]);
            y[i * outs + o] = float(s);
        }
    return 0;
}
)";

const char *kMlp = R"(import sys
import torch
import torch.nn.functional as F

class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(32, 64)
        self.norm = torch.nn.LayerNorm(64)
        self.fc2 = torch.nn.Linear(64, 48)

    def forward(self, x):
        h = F.gelu(self.norm(self.fc1(x)))
        return torch.softmax(self.fc2(h), dim=-1)

torch.jit.script(Mlp()).save(sys.argv[1])
)";

} // namespace

class TestWorkload : public QObject {
    Q_OBJECT

private:
    QString m_python;
    QTemporaryDir m_dir;
    std::unique_ptr<WorkerPool> m_pool;
    WorkloadFile m_profiled; // the MLP's profile, for the tests after profileTorchScript

    WorkerPool &pool()
    {
        if (!m_pool) {
            m_pool = std::make_unique<WorkerPool>(PoolOptions{test::workerCommand(), 1});
            m_pool->start();
        }
        return *m_pool;
    }
    QString path(const char *name) const { return m_dir.filePath(QString::fromLatin1(name)); }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_python = torchPython();
    }

    void cleanupTestCase()
    {
        if (m_pool)
            m_pool->shutdown();
    }

    void fileRoundTrips()
    {
        auto w = parseWorkload(minimal(), "w.json");
        QCOMPARE(w.model.kind, std::string("torchscript"));
        QCOMPARE(w.seed, uint64_t(3));
        QCOMPARE(w.inputs.size(), size_t(1));
        w.calls.push_back(call("aten::gelu", "", {tensor({4, 64}), scalar("str", "none", "approximate")}, 3.5));
        w.name = "rt";
        const auto back = parseWorkload(workloadToJson(w), "again");
        QCOMPARE(workloadToJson(back), workloadToJson(w));
        QCOMPARE(back.calls.at(0).signature(), w.calls.at(0).signature());
    }

    void malformedFilesSayWhatIsWrong_data()
    {
        QTest::addColumn<QByteArray>("patch"); // JSON merge patch onto minimal()
        QTest::addColumn<QString>("expected");
        QTest::newRow("version") << QByteArray(R"({"kforge_workload": 7})") << QStringLiteral("format version");
        QTest::newRow("model kind") << QByteArray(R"({"model": {"kind": "onnx"}})") << QStringLiteral("model.kind");
        QTest::newRow("no path") << QByteArray(R"({"model": {"path": null}})") << QStringLiteral("model: missing \"path\"");
        QTest::newRow("init") << QByteArray(R"({"inputs": {"tensors": [{"shape": [2], "init": "gauss"}]}})")
                              << QStringLiteral("inputs.tensors[0].init");
        QTest::newRow("negative extent") << QByteArray(R"({"inputs": {"tensors": [{"shape": [-2]}]}})")
                                         << QStringLiteral("never negative");
        QTest::newRow("both inputs") << QByteArray(R"({"inputs": {"captured": "x.pt"}})") << QStringLiteral("both \"tensors\" and \"captured\"");
        QTest::newRow("op name") << QByteArray(R"({"calls": [{"op": "gelu", "args": []}]})") << QStringLiteral("calls[0].op");
        QTest::newRow("arg kind") << QByteArray(R"({"calls": [{"op": "aten::gelu", "args": [{"name": "self", "float": 1}]}]})")
                                  << QStringLiteral("calls[0].args[0]: names no value kind");
        QTest::newRow("strides") << QByteArray(R"({"calls": [{"op": "aten::gelu", "args": [{"tensor": {"shape": [2, 3], "dtype": "float32", "strides": [1]}}]}]})")
                                 << QStringLiteral("calls[0].args[0].tensor.strides");
        QTest::newRow("card") << QByteArray(R"({"cards": [{"key": "x"}]})") << QStringLiteral("cards[0]: malformed operator card");
    }

    void malformedFilesSayWhatIsWrong()
    {
        QFETCH(QByteArray, patch);
        QFETCH(QString, expected);
        auto j = minimal();
        j.merge_patch(J::parse(patch.toStdString()));
        const auto why = thrown(j);
        QVERIFY2(why.find(expected.toStdString()) != std::string::npos, why.c_str());
        QVERIFY2(why.rfind("w.json", 0) == 0, why.c_str());
    }

    void unreadableFilesSayWhy()
    {
        writeFile(path("broken.json"), "{\"kforge_workload\": 1,");
        try {
            loadWorkloadFile(path("broken.json").toStdString());
            QFAIL("a truncated file loaded");
        } catch (const Error &e) {
            QVERIFY2(std::string(e.what()).find("not valid JSON") != std::string::npos, e.what());
        }
    }

    void callsGroupAndRankAndTrace()
    {
        std::vector<CapturedCall> calls = {
            call("aten::gelu", "", {tensor({4, 64})}, 10), call("aten::addmm", "", {tensor({64}), tensor({4, 32}), tensor({32, 64})}, 5, 1),
            call("aten::gelu", "", {tensor({4, 64})}, 12), call("aten::gelu", "", {tensor({8, 64})}, 3),
            call("aten::softmax", "int", {tensor({4, 64}), scalar("int", -1), scalar("none", nullptr)}, 30)};
        calls[4].startUs = 40;
        const auto groups = groupCalls(calls);
        QCOMPARE(groups.size(), size_t(3)); // the nested addmm is not ranked
        QCOMPARE(calls.at(groups[0].calls[0]).op, std::string("aten::softmax"));
        QCOMPARE(groups[1].calls.size(), size_t(2));
        QCOMPARE(groups[1].totalUs, 22.0);
        QVERIFY(std::abs(groups[0].share - 30.0 / 55.0) < 1e-12);
        const auto trace = J::parse(chromeTrace(calls).dump());
        int complete = 0;
        for (const auto &e : trace.at("traceEvents"))
            if (e.at("ph") == "X") {
                ++complete;
                QVERIFY(e.contains("ts") && e.contains("dur") && e.contains("pid") && e.contains("tid"));
            }
        QCOMPARE(complete, 5);
    }

    void cardsForAnyCall()
    {
        // A last-dimension softmax matches the softmax family, with the captured operator as reference.
        auto sm = cardForCall(call("aten::softmax", "int", {tensor({2, 3, 40}), scalar("int", 2, "dim"), scalar("none", nullptr, "dtype")}, 1,
                                   0, "aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor"),
                              1, 0);
        QVERIFY(sm.card);
        QCOMPARE(sm.card->family, std::string("softmax"));
        QCOMPARE(sm.card->atenOp, std::string("aten::softmax"));
        QCOMPARE(sm.card->atenOverload, std::string("int"));
        QCOMPARE(sm.card->shape.at("rows"), int64_t(6));
        QCOMPARE(sm.card->shape.at("cols"), int64_t(40));
        QCOMPARE(sm.card->errorModel, ErrorModel::Normalization);
        QVERIFY(!TemplateLibrary::builtin().forFamily(sm.card->family, "cpu").empty());

        // Any other operator: a generic card, one shape symbol per dimension, indices kept in range.
        auto idxArg = tensor({3}, "int64", "index");
        idxArg.tensors[0].min = 0;
        idxArg.tensors[0].max = 5;
        auto is = cardForCall(call("aten::index_select", "", {tensor({6, 16}), scalar("int", 0, "dim"), idxArg}, 1), 1, 3);
        QVERIFY(is.card);
        QCOMPARE(is.card->family, std::string());
        QCOMPARE(is.card->inputs.size(), size_t(2));
        QCOMPARE(is.card->inputs[0].dims, (std::vector<std::string>{"self_0", "self_1"}));
        QCOMPARE(is.card->inputs[1].init, std::string("index:index_range"));
        QCOMPARE(is.card->shape.at("index_range"), int64_t(6));
        QCOMPARE(is.card->referenceArgs, J::parse(R"([{"input":0},{"int":0},{"input":1}])"));
        QCOMPARE(is.card->errorModel, ErrorModel::Exact);

        QCOMPARE(errorModelForOp("aten::cumsum"), ErrorModel::Sum);
        QCOMPARE(errorModelForOp("aten::native_layer_norm"), ErrorModel::Normalization);
        QCOMPARE(errorModelForOp("aten::tanh"), ErrorModel::Pointwise);
        QCOMPARE(errorModelForOp("aten::argmax"), ErrorModel::Exact);
        QCOMPARE(errorModelForOp("aten::add", "int64"), ErrorModel::Exact);

        auto inplace = cardForCall(call("aten::relu_", "", {tensor({4})}, 1, 0, "aten::relu_(Tensor(a!) self) -> Tensor(a!)"), 1, 0);
        QVERIFY(!inplace.card);
        QVERIFY2(inplace.why.find("in-place") != std::string::npos, inplace.why.c_str());
        auto view = cardForCall(call("aten::t", "", {tensor({4, 2})}, 1, 0, "aten::t(Tensor(a) self) -> Tensor(a)"), 1, 0);
        QVERIFY(!view.card);
        auto list = cardForCall(call("aten::cat", "", {[] {
                                                           CallArg a;
                                                           a.kind = "tensor_list";
                                                           a.name = "tensors";
                                                           return a;
                                                       }(),
                                                       tensor({2})},
                                     1),
                                1, 0);
        QVERIFY(!list.card);
        QVERIFY2(list.why.find("tensor_list") != std::string::npos, list.why.c_str());
    }

    void profileTorchScript()
    {
        if (m_python.isEmpty())
            QSKIP("no Python with torch (install python3-torch: packaging/install-deps.sh does)");
        if (test::workerCommand().empty())
            QSKIP("kforge-worker is not built");
        QString err;
        writeFile(path("mlp.py"), kMlp);
        QCOMPARE(runPython(m_python, {path("mlp.py"), path("mlp.pt")}, &err), 0);
        auto j = minimal();
        j["name"] = "mlp";
        j["model"]["path"] = "mlp.pt";
        const auto reply = pool().request({{"type", "profile_workload"}, {"workload", j}, {"dir", m_dir.path().toStdString()},
                                           {"samples_path", path("mlp.samples.pt").toStdString()}},
                                          120000);
        QVERIFY2(reply.value("type", "") == "workload_profile", reply.dump().c_str());
        m_profiled = parseWorkload(reply.at("workload"), "reply");
        m_profiled.dir = m_dir.path().toStdString();

        std::map<std::string, std::vector<int64_t>> firstShape;
        for (const auto &c : m_profiled.calls)
            if (c.depth == 0 && !firstShape.count(c.qualifiedName()))
                for (const auto &a : c.args)
                    if (a.kind == "tensor") {
                        firstShape[c.qualifiedName()] = a.tensors[0].shape;
                        break;
                    }
        QCOMPARE(firstShape["aten::linear"], (std::vector<int64_t>{4, 32}));
        QCOMPARE(firstShape["aten::layer_norm"], (std::vector<int64_t>{4, 64}));
        QCOMPARE(firstShape["aten::gelu"], (std::vector<int64_t>{4, 64}));
        QCOMPARE(firstShape["aten::softmax.int"], (std::vector<int64_t>{4, 48}));
        bool nested = false;
        for (const auto &c : m_profiled.calls)
            nested |= c.depth > 0 && c.op == "aten::addmm";
        QVERIFY2(nested, "the linear layers' own addmm calls are recorded beneath them");
        const auto groups = groupCalls(m_profiled.calls);
        QCOMPARE(groups.size(), size_t(5)); // two linears of different shapes, layer norm, gelu, softmax

        std::map<std::string, const OperatorCard *> byFamily;
        int generic = 0;
        for (const auto &c : m_profiled.cards) {
            if (c.family.empty())
                ++generic;
            else
                byFamily[c.family] = &c;
            QVERIFY2(m_profiled.samples.count(c.key), c.key.c_str());
        }
        QCOMPARE(generic, 2);
        QVERIFY(byFamily.count("layer_norm") && byFamily.count("gelu") && byFamily.count("softmax"));
        QCOMPARE(byFamily["softmax"]->atenOp, std::string("aten::softmax"));
        QCOMPARE(byFamily["layer_norm"]->shape.at("cols"), int64_t(64));
        QVERIFY(QFile::exists(path("mlp.samples.pt")));

        const auto trace = J::parse(chromeTrace(m_profiled.calls).dump());
        QCOMPARE(trace.at("traceEvents").size(), m_profiled.calls.size() + 1);
    }

    void cardsVerifyThroughTheWorker()
    {
        if (m_profiled.cards.empty())
            QSKIP("needs profileTorchScript's cards (python3-torch)");
        EvalOptions o;
        o.benchmark = false;
        TemplateProposer proposer("cpu");
        int verified = 0;
        for (const auto &card : m_profiled.cards) {
            Candidate cand;
            if (!card.family.empty()) {
                const auto templates = TemplateLibrary::builtin().forFamily(card.family, "cpu");
                QVERIFY2(!templates.empty(), card.family.c_str());
                const auto *t = templates.front();
                J point = t->seed ? t->seed(card) : J::object();
                if (!t->seed)
                    for (const auto &[k, values] : t->space)
                        point[k] = values.front();
                cand = proposer.render(*t, point, card).candidate;
            } else if (card.atenOp == "aten::linear") {
                cand.backend = "cpu";
                cand.source = kLinearKernel;
            } else {
                continue;
            }
            const Verdict v = pool().evaluate(card, cand, o);
            std::string why = card.key + ": " + v.summaryLine() + "\n" + v.compile.log;
            for (const auto &r : v.reasons)
                why += "\n" + r.message;
            QVERIFY2(v.correct(), why.c_str());
            ++verified;
        }
        QCOMPARE(verified, 5);
    }

    void malformedModelIsAnError()
    {
        if (test::workerCommand().empty())
            QSKIP("kforge-worker is not built");
        writeFile(path("garbage.pt"), "this is not a zip archive");
        auto j = minimal();
        j["model"]["path"] = "garbage.pt";
        const auto reply = pool().request({{"type", "profile_workload"}, {"workload", j}, {"dir", m_dir.path().toStdString()}}, 60000);
        QCOMPARE(reply.value("type", ""), std::string("error"));
        const auto why = reply.value("error", "");
        QVERIFY2(why.find("as TorchScript") != std::string::npos && why.find("garbage.pt") != std::string::npos, why.c_str());
        // The worker is still serving.
        j["model"]["kind"] = "sparkles";
        const auto again = pool().request({{"type", "profile_workload"}, {"workload", j}}, 60000);
        QVERIFY2(again.value("error", "").find("model.kind") != std::string::npos, again.dump().c_str());
    }

    void problemFilesImport()
    {
        if (m_python.isEmpty())
            QSKIP("no Python with torch (install python3-torch: packaging/install-deps.sh does)");
        writeFile(path("raises.py"), "raise ValueError('this problem is broken')\n");
        QString err;
        QCOMPARE(runPython(m_python, {QString::fromLatin1(kHelper), QStringLiteral("problem"), path("raises.py"), QStringLiteral("--out"),
                                      path("raises.json")},
                           &err),
                 1);
        QVERIFY2(err.contains(QStringLiteral("raised while loading: ValueError: this problem is broken")), qPrintable(err));
        QVERIFY(!QFile::exists(path("raises.json")));

        // An eager model with data-dependent control flow: its calls come from the dispatch mode.
        writeFile(path("eager.py"), R"(import torch
class Model(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n
    def forward(self, x, idx):
        if float(x.sum()) > -1e9:
            x = torch.nn.functional.gelu(x.index_select(0, idx))
        return torch.cumsum(x, dim=-1)
def get_inputs():
    return [torch.randn(6, 16), torch.tensor([0, 3, 5])]
def get_init_inputs():
    return [16]
)");
        QCOMPARE(runPython(m_python, {QString::fromLatin1(kHelper), QStringLiteral("problem"), path("eager.py"), QStringLiteral("--out"),
                                      path("eager.json")},
                           &err),
                 0);
        const auto w = loadWorkloadFile(path("eager.json").toStdString());
        QCOMPARE(w.capturedInputs, std::string("eager.inputs.pt"));
        std::set<std::string> ops;
        for (const auto &c : w.calls)
            ops.insert(c.qualifiedName());
        for (const char *op : {"aten::index_select", "aten::gelu", "aten::cumsum"})
            QVERIFY2(ops.count(op), op);
        // Cards from the captured calls alone, through the worker.
        if (test::workerCommand().empty())
            QSKIP("kforge-worker is not built");
        auto j = workloadToJson(w);
        j["model"] = {{"kind", "problem"}, {"path", "eager.py"}};
        const auto reply = pool().request({{"type", "profile_workload"}, {"workload", j}, {"dir", m_dir.path().toStdString()}, {"calls_only", true}},
                                          60000);
        QVERIFY2(reply.value("type", "") == "workload_profile", reply.dump().c_str());
        const auto carded = parseWorkload(reply.at("workload"), "reply");
        std::set<std::string> families;
        for (const auto &c : carded.cards)
            families.insert(c.family.empty() ? c.atenOp : c.family);
        QVERIFY(families.count("aten::index_select") && families.count("gelu") && families.count("cumsum"));
        for (const auto &c : carded.cards)
            if (c.atenOp == "aten::index_select")
                QCOMPARE(c.inputs.at(1).init, std::string("index:index_range"));
    }
};

QTEST_GUILESS_MAIN(TestWorkload)
#include "tst_workload.moc"
