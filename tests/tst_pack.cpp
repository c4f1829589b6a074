// Kernel packs end to end: a real CPU search (kforge-cli search, templates), kforge-cli export, the
// pack refused for a bad checksum, a missing file, another format version or another architecture,
// and the runtime library (linked here, and from Python through torch.ops.load_library) replacing
// aten::_softmax where the guards cover a call and falling back to the original elsewhere, with the
// counters saying which.
// libtorch first: Qt defines `slots`, which ATen's headers use as a name.
#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/script.h>

#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "pack/pack_reader.h"
#include "pack/pack_writer.h"
#include "ops/launch_comment.h"
#include "proposers/template_library.h"
#include "proposers/template_proposer.h"
#include "proposers/templates/cuda_prelude.h"
#include "protocol/cpu_abi.h"
#include "runtime/fused_ops.h"
#include "runtime/kforge_runtime.h"
#include "store/session_store.h"
#include "ops/shape_box.h"
#include "test_support.h"
#include "util/error.h"
#include "workload/profile_compare.h"
#include "workload/workload_file.h"
#include "worker/cpu/cpu_compiler.h"
#include "worker/profile/float64_module.h"
#include "worker/torch/reference.h"

using namespace kforge;

namespace {

constexpr int kRows = 64, kCols = 256;

struct Run {
    int code = -1;
    QString out, err;
};

Run run(const QString &program, const QStringList &args, int timeoutMs = 300000)
{
    QProcess p;
    p.start(program, args);
    Run r;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.err = program + QStringLiteral(" did not finish: ") + p.errorString();
        return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

Run cli(const QStringList &args)
{
    return run(QStringLiteral(KFORGE_CLI_PATH), args);
}

std::string readText(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void writeText(const std::string &path, const std::string &text)
{
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

QString python()
{
    const QString py = qEnvironmentVariableIsSet("KFORGE_PYTHON") ? qEnvironmentVariable("KFORGE_PYTHON") : QStringLiteral("/usr/bin/python3");
    return run(py, {QStringLiteral("-c"), QStringLiteral("import torch")}, 60000).code == 0 ? py : QString();
}

// A model with one softmax the pack covers (2 x 32 rows of 256) and one it does not (256 rows).
const char *kModel = R"(import sys
import torch

class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(256, 256)

    def forward(self, x):
        h = self.fc(x)
        return torch.softmax(h, dim=-1), torch.softmax(h.repeat(4, 1, 1), dim=-1)

torch.manual_seed(0)
torch.jit.script(M()).save(sys.argv[1])
)";

// Attention scores with a causal mask, the softmax upcast to float32 and cast back, as Llama-style models
// write it: the chain kforge fuses.
const char *kAttention = R"(import sys
import torch

class A(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mask", torch.full((64, 64), torch.finfo(torch.float32).min).triu(1))

    def forward(self, q, k):
        s = torch.matmul(q, k.transpose(2, 3)) * 0.25
        s = s + self.mask
        return torch.softmax(s.float(), -1).to(q.dtype)

torch.jit.script(A()).save(sys.argv[1])
)";

// The same attention as a float32 model written with no casts (as ViT and BERT-style models are), its scale
// an attribute, traced as kforge's import traces models: the trace keeps the scale as a 0-dim tensor
// constant, and the chain is the native operator's.
const char *kAttentionTraced = R"(import sys
import torch

class A(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 16 ** -0.5
        self.register_buffer("mask", torch.full((64, 64), torch.finfo(torch.float32).min).triu(1))

    def forward(self, q, k):
        s = torch.matmul(q, k.transpose(2, 3)) * self.scale + self.mask
        return s.softmax(dim=-1)

q = torch.randn(2, 2, 64, 16)
torch.jit.trace(A(), (q, q)).save(sys.argv[1])
)";

// BERT's attention as a float32 model writes it: the scores divided by the square root of the head size,
// computed from an attribute, the mask added, the functional softmax. The data rows save it scripted (the
// divisor a float the model computes) or traced (a 0-dim float64 tensor constant).
const char *kAttentionDivided = R"(import math
import sys
import torch

class A(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.head_size = 16
        self.register_buffer("mask", torch.full((64, 64), torch.finfo(torch.float32).min).triu(1))

    def forward(self, q, k):
        s = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_size)
        return torch.nn.functional.softmax(s + self.mask, dim=-1)

)";

// Hugging Face's BERT attention with a padding mask: the model's 0/1 attention mask [b, s] made into an
// additive mask per sample, [b, 1, 1, s] as get_extended_attention_mask makes it, or expanded to
// [b, 1, q, s] and filled as _prepare_4d_attention_mask does; traced with the mask an input.
const char *kAttentionPadded = R"(import math
import sys
import torch

class A(torch.nn.Module):
    def __init__(self, expanded):
        super().__init__()
        self.head_size = 16
        self.expanded = expanded

    def forward(self, q, k, am):
        if self.expanded:
            m = 1.0 - am[:, None, None, :].expand(am.size(0), 1, q.size(2), am.size(1)).to(q.dtype)
            ext = m.masked_fill(m.to(torch.bool), torch.finfo(q.dtype).min)
        else:
            ext = (1.0 - am[:, None, None, :].to(q.dtype)) * torch.finfo(q.dtype).min
        s = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_size)
        return torch.nn.functional.softmax(s + ext, dim=-1)

q = torch.randn(2, 2, 64, 16)
am = torch.randint(0, 2, (2, 64))
torch.jit.trace(A(sys.argv[2] == "expanded"), (q, q, am)).save(sys.argv[1])
)";

// Swin's and CLIP's attention: q scaled before the product, a bias per head [1, h, q, k] added to the
// scores, the softmax with no scale of its own; traced.
const char *kAttentionUnscaled = R"(import sys
import torch

class A(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("bias", torch.randn(1, 2, 64, 64))

    def forward(self, q, k):
        s = torch.matmul(q * 0.25, k.transpose(2, 3)) + self.bias
        return s.softmax(dim=-1)

q = torch.randn(2, 2, 64, 16)
torch.jit.trace(A(), (q, q)).save(sys.argv[1])
)";

// BART's attention (OPT, Whisper and CLIP write it alike): q scaled before the batched product, the scores
// viewed [b, h, q, k] for the per-sample mask [b, 1, q, k] and viewed back to [b * h, q, k] for the softmax;
// traced with the model's 0/1 mask an input.
const char *kAttentionBart = R"(import sys
import torch

class A(torch.nn.Module):
    def forward(self, q, k, am):
        b, h, s, d = q.shape
        w = torch.bmm((q * 0.25).reshape(b * h, s, d), k.reshape(b * h, s, d).transpose(1, 2))
        m = 1.0 - am[:, None, None, :].expand(b, 1, s, s).to(q.dtype)
        m = m.masked_fill(m.to(torch.bool), torch.finfo(q.dtype).min)
        w = w.view(b, h, s, s) + m
        w = w.view(b * h, s, s)
        return torch.nn.functional.softmax(w, dim=-1).view(b, h, s, s)

q = torch.randn(2, 2, 64, 16)
am = torch.randint(0, 2, (2, 64))
torch.jit.trace(A(), (q, q, am)).save(sys.argv[1])
)";

// Llama's eager attention (Mistral, Qwen and the many models written after it): scores times a scale the
// module holds, the causal mask with the padding folded in [b, 1, q, k] added, the softmax given dtype
// float32, the cast back to q's dtype; traced with the model's 0/1 mask an input.
const char *kAttentionLlama = R"(import sys
import torch
import torch.nn.functional as F

class A(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scaling = 16 ** -0.5

    def forward(self, q, k, am):
        b, s = am.shape
        lowest = torch.finfo(q.dtype).min
        causal = torch.full((s, s), lowest, dtype=q.dtype).triu(1)
        mask = causal[None, None, :, :].expand(b, 1, s, s).masked_fill(am[:, None, None, :] == 0, lowest)
        w = torch.matmul(q, k.transpose(2, 3)) * self.scaling
        w = w + mask
        w = F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
        return torch.matmul(w, k)

q = torch.randn(2, 2, 64, 16)
am = torch.randint(0, 2, (2, 64))
torch.jit.trace(A(), (q, q, am)).save(sys.argv[1])
)";

// A Hugging Face Llama decoder layer (bench/problems/models/llama_decoder_layer.py) at a small size in
// bfloat16, traced as kforge-cli import traces a model.
const char *kLlamaLayerTrace = "import sys\nimport importlib.util\nimport torch\n\n"
                               "spec = importlib.util.spec_from_file_location('layer', '" KFORGE_SOURCE_DIR
                               "/bench/problems/models/llama_decoder_layer.py')\n"
                               "layer = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(layer)\n"
                               "model = layer.Model(hidden=256, heads=4, kv_heads=2, intermediate=512).eval()\n"
                               "x = torch.randn(2, 64, 256).to(torch.bfloat16)\n"
                               "am = (torch.arange(64)[None, :] >= torch.tensor([[0], [24]])).long()\n"
                               "torch.jit.trace(model, (x, am)).save(sys.argv[1])\n";

// How many calls of `op` a printed graph makes.
int callsIn(const std::string &graph, const std::string &op)
{
    int n = 0;
    for (size_t at = graph.find(op + "("); at != std::string::npos; at = graph.find(op + "(", at + 1))
        ++n;
    return n;
}

// A Gemma 3 decoder layer (bench/problems/models/gemma3_decoder_layer.py) at a small size in the dtype
// argv[2] names (the model's own is bfloat16), traced as kforge-cli import traces a model.
const char *kGemmaLayerTrace = "import sys\nimport importlib.util\nimport torch\n\n"
                               "spec = importlib.util.spec_from_file_location('layer', '" KFORGE_SOURCE_DIR
                               "/bench/problems/models/gemma3_decoder_layer.py')\n"
                               "layer = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(layer)\n"
                               "dtype = getattr(torch, sys.argv[2]) if len(sys.argv) > 2 else torch.bfloat16\n"
                               "model = layer.Model(hidden=256, heads=4, kv_heads=1, head_dim=64, intermediate=512).to(dtype).eval()\n"
                               "x = torch.randn(2, 64, 256).to(dtype)\n"
                               "am = (torch.arange(64)[None, :] >= torch.tensor([[0], [24]])).long()\n"
                               "torch.jit.trace(model, (x, am)).save(sys.argv[1])\n";

// T5's LayerNorm (Hugging Face's T5LayerNorm: x itself times rsqrt, cast back only for a 16-bit weight)
// around a feed-forward sublayer and its residual add, traced in the dtype argv[2] names.
const char *kT5NormTrace = R"(import sys
import torch
import torch.nn as nn

class T5LayerNorm(nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, hidden))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        if self.weight.dtype in [torch.float16, torch.bfloat16]:
            hidden_states = hidden_states.to(self.weight.dtype)
        return self.weight * hidden_states

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm, self.final = T5LayerNorm(64), T5LayerNorm(64)
        self.wi, self.wo = nn.Linear(64, 128, bias=False), nn.Linear(128, 64, bias=False)

    def forward(self, x):
        h = x + self.wo(torch.relu(self.wi(self.norm(x))))
        return self.final(h), h

dtype = getattr(torch, sys.argv[2])
torch.jit.trace(Block().to(dtype), (torch.randn(2, 16, 64).to(dtype),)).save(sys.argv[1])
)";

// An imported problem (KernelBench's layout) with a parameter, a non-persistent buffer and a padding mask
// among its inputs.
const char *kTinyProblem = R"(import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.proj = nn.Linear(hidden, hidden)
        self.register_buffer("scale", torch.tensor(hidden ** -0.5), persistent=False)

    def forward(self, x, mask):
        q = self.proj(x)
        w = torch.matmul(q, x.transpose(1, 2)) * self.scale + (1.0 - mask[:, None, :].to(x.dtype)) * -1e4
        return torch.softmax(w, dim=-1) @ x


def get_inputs():
    return [torch.randn(2, 16, 32), (torch.arange(16)[None, :] < torch.tensor([[16], [9]])).long()]


def get_init_inputs():
    return []
)";

// An imported problem whose forward unpacks a shape (as Hugging Face's modules do), which FX cannot trace:
// its attention softmax with casts reaches the pack through the TorchScript route.
const char *kUnpackingProblem = R"(import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x, mask):
        b, s, h = x.shape
        q = self.proj(x).view(b, s, h)
        w = torch.matmul(q, x.transpose(1, 2)) * 0.125 + mask[:, None, :].to(x.dtype) * -1e4
        return torch.softmax(w.float(), dim=-1).to(x.dtype) @ x


def get_inputs():
    return [torch.randn(2, 16, 32), (torch.arange(16)[None, :] >= torch.tensor([[16], [9]])).long()]


def get_init_inputs():
    return []
)";

// A row sum written for the test: it checks kforge_symbol against its sizes (the runtime answers it
// from the call's shape symbols) and refuses rows of 40, so a kernel's refusal is seen to fall back.
const char *kRowSum = R"(
extern "C" int kforge_entry(const kf_tensor *in, int n_in, kf_tensor *out, int n_out)
{
    if (n_in != 1 || n_out != 1 || in[0].ndim != 2 || out[0].ndim != 1)
        return 1;
    const int64_t rows = in[0].sizes[0], cols = in[0].sizes[1];
    if (kforge_symbol("rows") != rows || kforge_symbol("cols") != cols || out[0].sizes[0] != rows)
        return 2;
    if (cols == 40)
        return 3;
    const float *x = (const float *)in[0].data;
    float *y = (float *)out[0].data;
    for (int64_t r = 0; r < rows; ++r) {
        double s = 0;
        for (int64_t c = 0; c < cols; ++c)
            s += x[r * cols + c];
        y[r] = float(s);
    }
    return 0;
}
)";

} // namespace

class TestPack : public QObject {
    Q_OBJECT

private:
    // The module a Python script traces and saves to its first argument; `why` says what failed.
    torch::jit::Module traced(const QString &py, const std::string &script, std::string &why, const QStringList &args = {})
    {
        static int made = 0; // one file per script
        const auto file = path(("traced-" + std::to_string(made++)).c_str());
        writeText(file + ".py", script);
        const auto r = run(py, QStringList{QString::fromStdString(file + ".py"), QString::fromStdString(file + ".pt")} + args, 120000);
        if (r.code != 0) {
            why = r.err.toStdString();
            return torch::jit::Module("none");
        }
        return torch::jit::load(file + ".pt");
    }

    QTemporaryDir m_dir;
    std::string m_pack;
    std::string m_how; // how the exported node was chosen
    nlohmann::json m_fx; // tests/fx_pass_test.py's report on its modules, made once for fxPassRewritesExactChains' rows

    std::string path(const char *name) const { return (m_dir.path() + QLatin1Char('/') + QLatin1String(name)).toStdString(); }

    // A pack of one CPU kernel for `card`: `body` after the C ABI preamble, compiled to a shared object
    // under `name`. `error` is the compiler's message where it failed.
    struct CpuPack {
        std::string dir, error;
    };
    CpuPack cpuPack(const std::string &name, const OperatorCard &card, const std::string &body)
    {
        const auto base = path(name.c_str());
        const auto source = base + ".cpp", object = base + ".so";
        writeText(source, std::string(kCpuAbiPreamble) + body);
        const auto cc = run(QStringLiteral("c++"), {QStringLiteral("-O2"), QStringLiteral("-shared"), QStringLiteral("-fPIC"), QStringLiteral("-o"),
                                                   QString::fromStdString(object), QString::fromStdString(source)});
        if (cc.code != 0)
            return {"", cc.err.toStdString()};
        writeCpuPack(base + "-pack", card, readText(source), readText(object));
        return {base + "-pack", ""};
    }

    // A pack in `dir` of one CPU kernel for `card`: its source and its shared object's bytes.
    static void writeCpuPack(const std::string &dir, const OperatorCard &card, const std::string &source, const std::string &object)
    {
        pack::PackWriter writer(dir);
        auto k = pack::kernelFromCard(card);
        k.backend = "cpu";
        k.source = writer.add("kernels/0/source.cpp", source);
        k.binaries.push_back({"cpu", writer.add("kernels/0/kernel.so", object)});
        pack::PackManifest m;
        m.createdBy = "tst_pack";
        m.kernels.push_back(k);
        writer.writeManifest(m);
    }

    // A copy of the exported pack to spoil.
    std::string copyPack(const char *name)
    {
        const auto dst = path(name);
        const auto r = run(QStringLiteral("cp"), {QStringLiteral("-r"), QString::fromStdString(m_pack), QString::fromStdString(dst)});
        if (r.code != 0)
            qFatal("cp failed: %s", qPrintable(r.err));
        return dst;
    }

    // kforge-cli export of a CPU search's session. Where no template beat ATen by more than the noise on
    // this machine, a person accepts the fastest correct one, which export then takes (the person-accepted
    // path).
    Run exportBest(const QString &session, const std::string &out)
    {
        auto exported = cli({QStringLiteral("export"), session, QStringLiteral("--out"), QString::fromStdString(out)});
        if (exported.code == 0 || !exported.err.contains(QStringLiteral("nothing to export")))
            return exported;
        SessionStore store(session.toStdString(), SessionStore::Mode::ReadOnly);
        const NodeRecord *best = nullptr;
        const auto nodes = store.nodes(store.sessions().back().id);
        for (const auto &n : nodes)
            if (n.status == "not_faster" && (!best || n.speedup > best->speedup))
                best = &n;
        if (!best) {
            exported.err += QStringLiteral("\nthe search found no correct kernel at all");
            return exported;
        }
        const auto decided = cli({QStringLiteral("decide"), QStringLiteral("--session"), session, QStringLiteral("--node"), QString::number(best->id),
                                  QStringLiteral("--accept"), QStringLiteral("--reason"), QStringLiteral("correct; tst_pack needs a kernel to ship")});
        if (decided.code != 0)
            return decided;
        return cli({QStringLiteral("export"), session, QStringLiteral("--out"), QString::fromStdString(out)});
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        // A small real search on the CPU backend with the templates.
        const auto session = QString::fromStdString(path("softmax.kforge"));
        const auto search = cli({QStringLiteral("search"), QStringLiteral("--family"), QStringLiteral("softmax"), QStringLiteral("--shape"),
                                 QStringLiteral("rows=%1,cols=%2").arg(kRows).arg(kCols), QStringLiteral("--backend"), QStringLiteral("cpu"),
                                 QStringLiteral("--nodes"), QStringLiteral("6"), QStringLiteral("--samples"), QStringLiteral("10"),
                                 QStringLiteral("--session"), session, QStringLiteral("--worker"),
                                 QString::fromStdString(std::string(KFORGE_WORKER_PATH))});
        QVERIFY2(search.code == 0, qPrintable(search.out + search.err));
        m_pack = path("pack");
        const auto exported = exportBest(session, m_pack);
        QVERIFY2(exported.code == 0, qPrintable(exported.out + exported.err));
        m_how = exported.out.toStdString();
        qInfo("%s", m_how.c_str());
    }

    void exportedPackReadsBack()
    {
        const auto m = pack::readPack(m_pack, {});
        QCOMPARE(m.kernels.size(), size_t(1));
        const auto &k = m.kernels[0];
        QCOMPARE(k.atenOp, std::string("aten::_softmax"));
        QCOMPARE(k.backend, std::string("cpu"));
        QVERIFY(k.binaryFor("cpu"));
        QVERIFY(k.node > 0);
        QCOMPARE(k.inputs.size(), size_t(1));
        QCOMPARE(k.inputs[0].dtype, DType::F32);
        QVERIFY(k.inputs[0].flattenLeading);
        // The verified range: the captured shape and the family's held-out shapes (7 x cols+3, rows/2+1 x 33).
        QCOMPARE(k.symbols.at("rows").min, int64_t(7));
        QCOMPARE(k.symbols.at("rows").max, int64_t(kRows));
        QCOMPARE(k.symbols.at("cols").min, int64_t(33));
        QCOMPARE(k.symbols.at("cols").max, int64_t(kCols + 3));
        // A second export into the same folder is refused and leaves it as it was.
        const auto again = cli({QStringLiteral("export"), QString::fromStdString(path("softmax.kforge")), QStringLiteral("--out"),
                                QString::fromStdString(m_pack)});
        QCOMPARE(again.code, 2);
        QVERIFY2(again.err.contains(QStringLiteral("already exists and is not empty")), qPrintable(again.err));
        QVERIFY(pack::readPack(m_pack, {}).kernels.size() == 1);
        // A file where the folder should be is named as a file, and kept.
        const std::string file = path("not-a-folder");
        { std::ofstream(file) << "keep me"; }
        const auto onFile = cli({QStringLiteral("export"), QString::fromStdString(path("softmax.kforge")), QStringLiteral("--out"),
                                 QString::fromStdString(file)});
        QCOMPARE(onFile.code, 2);
        QVERIFY2(onFile.err.contains(QStringLiteral("is a file")), qPrintable(onFile.err));
        std::ifstream kept(file);
        std::string text;
        std::getline(kept, text);
        QCOMPARE(text, std::string("keep me"));
    }

    void refusedPacks_data()
    {
        QTest::addColumn<QString>("spoil");
        QTest::addColumn<QString>("reason");
        QTest::newRow("bad checksum") << "checksum" << "kernels/0/kernel.so has SHA-256 ";
        QTest::newRow("missing file") << "missing" << "file kernels/0/source.cpp is missing";
        QTest::newRow("format version") << "version" << "the pack is format version 2; this kforge reads version 1";
        QTest::newRow("another architecture") << "arch" << "was built for sm_90; this device is sm_80";
        QTest::newRow("no manifest") << "manifest" << "it has no manifest.json";
        QTest::newRow("multiples of an unknown symbol") << "multiples" << "multiples[0]: expected [a, b], two symbols with ranges";
    }

    void refusedPacks()
    {
        QFETCH(QString, spoil);
        QFETCH(QString, reason);
        const auto dir = copyPack(qPrintable(QStringLiteral("spoiled-") + spoil));
        pack::DeviceArchs device;
        auto manifest = nlohmann::json::parse(readText(dir + "/manifest.json"));
        if (spoil == QLatin1String("checksum")) {
            auto bytes = readText(dir + "/kernels/0/kernel.so");
            bytes[bytes.size() / 2] = char(bytes[bytes.size() / 2] ^ 0x40);
            writeText(dir + "/kernels/0/kernel.so", bytes);
        } else if (spoil == QLatin1String("missing")) {
            QVERIFY(QFile::remove(QString::fromStdString(dir + "/kernels/0/source.cpp")));
        } else if (spoil == QLatin1String("version")) {
            manifest["kforge_pack"] = 2;
            writeText(dir + "/manifest.json", manifest.dump());
        } else if (spoil == QLatin1String("arch")) {
            // The same files presented as a CUDA kernel built for sm_90, on an sm_80 device.
            auto &k = manifest["kernels"][0];
            k["backend"] = "cuda";
            k["binaries"][0]["arch"] = "sm_90";
            writeText(dir + "/manifest.json", manifest.dump());
            device.cuda = "sm_80";
        } else if (spoil == QLatin1String("multiples")) {
            manifest["kernels"][0]["multiples"] = nlohmann::json::array({{"rows", "heads"}});
            writeText(dir + "/manifest.json", manifest.dump());
        } else {
            QVERIFY(QFile::remove(QString::fromStdString(dir + "/manifest.json")));
        }
        try {
            pack::readPack(dir, device);
            QFAIL("the spoiled pack was read");
        } catch (const std::exception &e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(reason), e.what());
        }
        // The runtime refuses it too, and registers nothing of it.
        if (spoil != QLatin1String("arch")) {
            try {
                runtime::loadPack(dir);
                QFAIL("the runtime loaded the spoiled pack");
            } catch (const std::exception &e) {
                QVERIFY2(QString::fromUtf8(e.what()).contains(reason), e.what());
            }
            QVERIFY(runtime::counters().empty());
        }
    }

    void checksumMessageNamesBothHashes()
    {
        const auto dir = copyPack("spoiled-both");
        auto manifest = nlohmann::json::parse(readText(dir + "/manifest.json"));
        const std::string expected = manifest["kernels"][0]["source"]["sha256"];
        writeText(dir + "/kernels/0/source.cpp", "// changed\n");
        try {
            pack::readPack(dir, {});
            QFAIL("read");
        } catch (const std::exception &e) {
            const std::string what = e.what();
            QVERIFY2(what.find("the manifest expects " + expected) != std::string::npos, e.what());
            QVERIFY2(what.find("kernels/0/source.cpp has SHA-256 ") != std::string::npos, e.what());
        }
    }

    // From C++: the pack takes aten::_softmax where its guards hold and the original runs elsewhere;
    // every output matches ATen's, and the counters say exactly what happened.
    void runtimeReplacesAndFallsBack()
    {
        at::manual_seed(11);
        const auto covered = at::randn({kRows, kCols});
        const auto flat3d = at::randn({2, kRows / 2, kCols}); // rows = 64 once the leading dimensions are flattened
        const auto tooManyRows = at::randn({kRows * 4, kCols});
        const auto asDouble = at::randn({kRows, kCols}, at::kDouble);
        const auto transposed = at::randn({kCols, kRows}).t(); // 64 x 256, not contiguous
        // Contiguous, but 4 bytes past the alignment every kernel was verified at.
        const auto offset = at::randn({kRows * kCols + 1}).narrow(0, 1, kRows * kCols).view({kRows, kCols});
        std::vector<at::Tensor> inputs{covered, flat3d, tooManyRows, asDouble, transposed, offset}, refs;
        for (const auto &x : inputs)
            refs.push_back(at::softmax(x, -1));

        const auto summary = runtime::loadPack(m_pack);
        QVERIFY2(summary.find("aten::_softmax") != std::string::npos, summary.c_str());
        std::vector<at::Tensor> outs;
        for (const auto &x : inputs)
            outs.push_back(at::softmax(x, -1));
        const auto c = runtime::counters();
        const auto json = runtime::countersJson();
        runtime::unloadPacks();
        QVERIFY(runtime::counters().empty());

        for (size_t i = 0; i < inputs.size(); ++i)
            QVERIFY2(at::allclose(outs[i], refs[i], 1e-5, 1e-6), qPrintable(QStringLiteral("input %1").arg(i)));
        // The fallbacks ran ATen's own kernel: bit for bit.
        for (size_t i = 2; i < inputs.size(); ++i)
            QVERIFY2(at::equal(outs[i], refs[i]), qPrintable(QStringLiteral("fallback %1").arg(i)));
        QCOMPARE(c.size(), size_t(1));
        QCOMPARE(c[0].op, std::string("aten::_softmax"));
        QVERIFY2(c[0].taken == 2, json.c_str());
        QVERIFY2(c[0].fellBack == 4, json.c_str());
        QCOMPARE(c[0].why, (std::map<std::string, int64_t>{{"alignment", 1}, {"dtype", 1}, {"layout", 1}, {"shape", 1}}));
        QVERIFY2(c[0].example.at("alignment").find("starts 4 bytes past a 64-byte boundary") != std::string::npos, json.c_str());
        QVERIFY2(c[0].example.at("shape").find("rows in [7, 64]") != std::string::npos, json.c_str());
        QVERIFY2(c[0].example.at("dtype").find("Double") != std::string::npos, json.c_str());

        // Unloaded: the original again, and nothing is counted.
        QVERIFY(at::equal(at::softmax(covered, -1), refs[0]));
    }

    // CUDA kernels export here too (NVRTC needs no GPU): a session holding an accepted CUDA softmax, as a
    // CUDA search writes it, exported for two architectures; the reader takes either and refuses a third.
    void exportCudaKernels()
    {
        const auto kernel = readText(KFORGE_TEST_KERNELS "/cuda/good_softmax.cu");
        const auto plan = launchPlanFromComment(kernel);
        QVERIFY(plan);
        const auto session = path("cuda.kforge");
        {
            SessionStore store(session);
            const auto sid = store.createSession({0, "cuda", "softmax", "cuda", "templates", "finished", {}, 0});
            const auto op = store.addOperator(sid, makeSoftmaxCard(kRows, kCols));
            NodeRecord root;
            root.sessionId = sid;
            root.operatorId = op;
            root.status = "baseline";
            NodeRecord n = root;
            n.parentId = store.addNode(root, Candidate{"reference", "aten::_softmax", {}});
            n.status = "running";
            const auto id = store.addNode(n, Candidate{"cuda", cudaPrelude(DType::F32) + kernel, *plan});
            Verdict v;
            v.status = VerdictStatus::Accepted;
            v.speedup = 1.3;
            v.compile.ok = true;
            v.compile.target = "sm_90";
            store.finishNode(id, v, 1.0);
        }
        const auto dir = path("cuda-pack");
        const auto r = cli({QStringLiteral("export"), QString::fromStdString(session), QStringLiteral("--out"), QString::fromStdString(dir),
                            QStringLiteral("--arch"), QStringLiteral("sm_80,sm_90")});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        const auto m = pack::readPack(dir, {true, "sm_90"});
        QCOMPARE(m.kernels.size(), size_t(1));
        const auto &k = m.kernels[0];
        QCOMPARE(k.backend, std::string("cuda"));
        QVERIFY(k.binaryFor("sm_80") && k.binaryFor("sm_90"));
        QCOMPARE(k.launch, *plan);
        QVERIFY(readText(dir + "/" + k.binaryFor("sm_90")->file.path).size() > 1000);
        QVERIFY(pack::readPack(dir, {true, "sm_80"}).kernels.size() == 1);
        try {
            pack::readPack(dir, {true, "sm_75"});
            QFAIL("an sm_75 device took an sm_80/sm_90 pack");
        } catch (const std::exception &e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("was built for sm_80, sm_90; this device is sm_75")), e.what());
        }
        try {
            pack::readPack(dir, {true, ""});
            QFAIL("a process without CUDA took a CUDA pack");
        } catch (const std::exception &e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("this process has no CUDA device")), e.what());
        }
        // Without --arch: the architecture the session verified it on.
        const auto r2 = cli({QStringLiteral("export"), QString::fromStdString(session), QStringLiteral("--out"),
                             QString::fromStdString(path("cuda-pack-default"))});
        QVERIFY2(r2.code == 0, qPrintable(r2.out + r2.err));
        const auto m2 = pack::readPack(path("cuda-pack-default"), {true, "sm_90"});
        QCOMPARE(m2.kernels[0].binaries.size(), size_t(1));
        QCOMPARE(m2.kernels[0].binaries[0].arch, std::string("sm_90"));
    }

    // A pack made here around a hand-written row sum: a reduction's output drops the flattened last
    // dimension, a `dim` list is compared after wrapping, other arguments and a kernel's refusal fall back.
    void runtimeRowSum()
    {
        const auto [dir, error] = cpuPack("rowsum", makeCard("sum", {{"rows", 64}, {"cols", 256}}), kRowSum);
        QVERIFY2(error.empty(), error.c_str());

        at::manual_seed(3);
        const auto x3 = at::randn({4, 16, 100}); // rows 64, cols 100
        const auto refused = at::randn({4, 16, 40});
        const auto plain = at::randn({64, 100});
        const auto refs = std::vector<at::Tensor>{at::sum(x3, {2}), at::sum(refused, {-1}), at::sum(x3, {-1}, true), at::sum(plain, {0})};
        runtime::loadPack(dir);
        const auto outs = std::vector<at::Tensor>{at::sum(x3, {2}), at::sum(refused, {-1}), at::sum(x3, {-1}, true), at::sum(plain, {0})};
        const auto c = runtime::counters();
        const auto json = runtime::countersJson();
        runtime::unloadPacks();
        QCOMPARE(outs[0].sizes().vec(), (std::vector<int64_t>{4, 16}));
        QVERIFY(at::allclose(outs[0], refs[0], 1e-5, 1e-4));
        for (size_t i = 1; i < outs.size(); ++i)
            QVERIFY2(at::equal(outs[i], refs[i]), qPrintable(QStringLiteral("fallback %1").arg(i)));
        QCOMPARE(c.size(), size_t(1));
        QCOMPARE(c[0].op, std::string("aten::sum.dim_IntList"));
        QVERIFY2(c[0].taken == 1 && c[0].fellBack == 3, json.c_str());
        QCOMPARE(c[0].why, (std::map<std::string, int64_t>{{"argument", 2}, {"kernel", 1}}));
        QVERIFY2(c[0].example.at("argument").find("keepdim") != std::string::npos, json.c_str());
    }

    // A group norm is defined only where the channels are a multiple of the groups: inside the verified
    // ranges, a call that breaks it goes to ATen, which raises its own error, instead of to the kernel
    // (this one copies x, so taking such a call would return a wrong result without a word).
    void runtimeGroupNormKeepsMultiples()
    {
        const auto card = makeCard("group_norm", {{"n", 2}, {"c", 16}, {"hw", 64}, {"groups", 4}});
        QCOMPARE(card.multiples, (std::vector<std::pair<std::string, std::string>>{{"c", "groups"}}));
        QVERIFY_THROWS_EXCEPTION(Error, makeCard("group_norm", {{"n", 2}, {"c", 14}, {"hw", 64}, {"groups", 4}}));
        const auto [dir, error] = cpuPack("groupnorm", card, R"(
extern "C" int kforge_entry(const kf_tensor *in, int n_in, kf_tensor *out, int n_out)
{
    if (n_in != 3 || n_out != 1)
        return 1;
    const int64_t n = in[0].sizes[0] * in[0].sizes[1] * in[0].sizes[2];
    for (int64_t i = 0; i < n; ++i)
        ((float *)out[0].data)[i] = ((const float *)in[0].data)[i];
    return 0;
}
)");
        QVERIFY2(error.empty(), error.c_str());
        QCOMPARE(pack::readPack(dir, {}).kernels.at(0).multiples, card.multiples);

        at::manual_seed(5);
        const auto w16 = at::ones({16}), b16 = at::zeros({16}), w14 = at::ones({14}), b14 = at::zeros({14}), w15 = at::ones({15}), b15 = at::zeros({15});
        const auto x16 = at::randn({2, 16, 64}), x14 = at::randn({2, 14, 64}), x15 = at::randn({2, 15, 60});
        runtime::loadPack(dir);
        const auto taken = at::group_norm(x16, 4, w16, b16, 1e-5, true);
        const auto taken3 = at::group_norm(x15, 3, w15, b15, 1e-5, true); // 15 channels, 3 groups: inside the ranges, a multiple
        bool raised = false;
        try {
            at::group_norm(x14, 4, w14, b14, 1e-5, true); // 14 channels, 4 groups: inside the ranges, not a multiple
        } catch (const c10::Error &e) {
            raised = QString::fromUtf8(e.what()).contains(QStringLiteral("divisible by num_groups"));
        }
        const auto c = runtime::counters();
        const auto json = runtime::countersJson();
        runtime::unloadPacks();
        QVERIFY(at::equal(taken, x16) && at::equal(taken3, x15)); // the copying kernel ran
        QVERIFY2(raised, "ATen's own error for 14 channels in 4 groups");
        QCOMPARE(c.size(), size_t(1));
        QVERIFY2(c[0].taken == 2 && c[0].fellBack == 1, json.c_str());
        QCOMPARE(c[0].why, (std::map<std::string, int64_t>{{"shape", 1}}));
        QVERIFY2(c[0].example.at("shape").find("c = 14 is not a multiple of groups = 4") != std::string::npos, json.c_str());
    }

    // What a pack promises, through the runtime itself: a CPU template's seed, made for a card, compiled
    // as export compiles it and loaded as a pack, takes every call at shapes drawn inside the card's
    // verified box, and its outputs pass the guard's numerics against ATen's at each.
    // The guard's numerics at a float16 output's overflow edge (core/guard/numerics.h), through the
    // libtorch passes a CPU worker runs (the GPU's device passes are checked against them on the device):
    // where the float64 reference is finite, ATen's Inf or NaN defines nothing and a candidate's Inf is
    // measured from the overflow threshold; elsewhere NaN and Inf must match ATen's.
    void overflowEdgeOfAFloat16Output_data()
    {
        QTest::addColumn<double>("reference");
        QTest::addColumn<double>("aten");
        QTest::addColumn<double>("candidate");
        QTest::addColumn<QString>("verdict"); // a reason code, "" for none
        const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
        QTest::newRow("ATen overflowed inside, the candidate did not") << 60000.0 << inf << 60000.0 << QString();
        QTest::newRow("ATen turned NaN, the candidate Inf just past the threshold") << 65600.0 << nan << inf << QString();
        QTest::newRow("the candidate rounds to Inf, ATen to its largest finite") << 65530.0 << 65504.0 << inf << QString();
        QTest::newRow("the candidate's Inf 24 short of the threshold") << 65496.0 << 65504.0 << inf << QString();
        QTest::newRow("an Inf for a small value") << 3.0 << 3.0 << inf << QStringLiteral("mismatch");
        QTest::newRow("an Inf of the wrong sign") << 65600.0 << inf << -inf << QStringLiteral("mismatch");
        QTest::newRow("a finite value where the true one is far past the threshold") << 80000.0 << inf << 65504.0 << QStringLiteral("mismatch");
        QTest::newRow("a NaN where ATen overflowed") << 60000.0 << inf << nan << QStringLiteral("unexpected_nan_or_inf");
        QTest::newRow("a finite value where the reference is Inf") << inf << inf << 65504.0 << QStringLiteral("unexpected_nan_or_inf");
        QTest::newRow("ATen's Inf matched where the reference is finite") << 60000.0 << inf << inf << QString();
    }

    void overflowEdgeOfAFloat16Output()
    {
        QFETCH(double, reference);
        QFETCH(double, aten);
        QFETCH(double, candidate);
        QFETCH(QString, verdict);
        // 1000 values of a few hundred, rounded to float16 by both; one element set by the row, at 500.
        worker::Reference64 ref;
        ref.value = at::randn({1000}, at::TensorOptions().dtype(at::kDouble)) * 300;
        auto a = ref.value.to(at::kHalf), c = a.clone();
        ref.value[500] = reference;
        a[500] = aten;
        c[500] = candidate;
        const auto e = worker::measureOutput("y", c, a, ref, ErrorModel::Pointwise, DType::F16, 0);
        const auto why = guard::judgeOutput(e, ErrorModel::Pointwise);
        QVERIFY2(QString::fromStdString(why ? why->code : "") == verdict, why ? why->message.c_str() : "no reason");
    }

    void runtimeTemplatesInsideTheirBox_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("shape");
        const std::vector<std::pair<const char *, const char *>> rows = {
            {"softmax", "rows=48,cols=700"},       {"log_softmax", "rows=40,cols=513"},  {"layer_norm", "rows=33,cols=1000"},
            {"sum", "rows=64,cols=777"},           {"max", "rows=50,cols=301"},          {"argmax", "rows=50,cols=301"},
            {"cross_entropy", "rows=20,vocab=3001"}, {"group_norm", "n=2,c=24,hw=300,groups=6"}, {"instance_norm", "n=2,c=6,hw=500"},
            {"batch_norm", "n=4,c=5,hw=300"},      {"sum_dim", "outer=6,dim=50,inner=70"}, {"softmax_dim", "outer=4,dim=30,inner=90"},
            {"cumsum", "rows=30,cols=900"},        {"gelu", "rows=60,cols=1001"},        {"mse_loss", "rows=40,cols=999"},
            {"mean", "rows=40,cols=800"}, {"argmax_dim", "outer=5,dim=120,inner=33"}};
        for (const auto &[family, shape] : rows)
            QTest::newRow(family) << QString::fromLatin1(family) << QString::fromLatin1(shape);
    }

    void runtimeTemplatesInsideTheirBox()
    {
        QFETCH(QString, family);
        QFETCH(QString, shape);
        const auto card = makeCard(family.toStdString(), parseShape(shape.toStdString()));
        const auto templates = TemplateLibrary::builtin().forFamily(card.family, "cpu");
        QVERIFY(!templates.empty());
        const auto &t = *templates.front();
        nlohmann::json point = nlohmann::json::object(); // the seed, or each parameter's first value
        for (const auto &[name, values] : t.space)
            point[name] = values.front();
        if (t.seed)
            point = t.seed(card);
        QVERIFY2(!t.valid || t.valid(point, card), point.dump().c_str());
        const auto source = TemplateProposer("cpu").render(t, point, card).candidate.source;
        worker::CpuCompiler compiler;
        const auto build = compiler.compile(source);
        QVERIFY2(build.report.ok, build.report.log.c_str());
        const auto dir = path(("box-" + card.family).c_str());
        writeCpuPack(dir, card, source, readText(build.sharedObject));

        std::mt19937_64 rng(std::hash<std::string>{}(card.family));
        const auto box = verifiedBox(card);
        at::manual_seed(21);
        struct Call {
            ShapeBindings shape;
            std::vector<at::Tensor> inputs, outputs;
        };
        std::vector<Call> calls;
        runtime::loadPack(dir);
        for (int i = 0; i < 40 && calls.size() < 6; ++i) {
            const auto at = drawInsideBox(box, rng);
            if (!keepsMultiples(card, at) || cardElements(card, at) > 2000000)
                continue;
            auto inputs = worker::makeInputs(card, at, 1.0, at::kCPU);
            auto outputs = worker::callReference(card, inputs, &at);
            calls.push_back({at, std::move(inputs), std::move(outputs)});
        }
        const auto c = runtime::counters();
        const auto json = runtime::countersJson();
        runtime::unloadPacks();
        QVERIFY2(calls.size() >= 4, std::to_string(calls.size()).c_str());
        QCOMPARE(c.size(), size_t(1));
        QVERIFY2(c[0].taken == int64_t(calls.size()) && c[0].fellBack == 0, json.c_str()); // every call inside the box ran the kernel
        for (const auto &call : calls) {
            const auto aten = worker::callReference(card, call.inputs, &call.shape);
            const auto ref = worker::callReference64(card, call.inputs, call.shape, at::kCPU);
            QCOMPARE(call.outputs.size(), card.outputs.size());
            for (size_t o = 0; o < aten.size(); ++o) {
                QCOMPARE(call.outputs[o].sizes().vec(), aten[o].sizes().vec());
                const auto e = worker::measureOutput(card.outputs[o].name, call.outputs[o], aten[o], ref.at(o), card.errorModel,
                                                     card.outputs[o].dtype, 0);
                const auto why = guard::judgeOutput(e, card.errorModel);
                QVERIFY2(!why, (shapeText(call.shape) + ": " + (why ? why->message : "")).c_str());
            }
        }
    }

    // The fused attention softmax's CPU template in a pack, called with masks as models broadcast them over
    // scores [2, 2, 5, 48] (ops/mask_rows.h): each call either runs the kernel with the mask's runs the
    // guard found, or falls back, and every output is the chain's.
    void runtimeMaskBroadcasts()
    {
        const auto card = makeCard("scaled_masked_softmax", {{"rows", 256}, {"cols", 48}, {"mrows", 2}, {"minner", 2}, {"mstep", 128}});
        const auto templates = TemplateLibrary::builtin().forFamily(card.family, "cpu");
        QVERIFY(!templates.empty());
        const auto &t = *templates.front();
        const auto source = TemplateProposer("cpu").render(t, t.seed(card), card).candidate.source;
        worker::CpuCompiler compiler;
        const auto build = compiler.compile(source);
        QVERIFY2(build.report.ok, build.report.log.c_str());
        const auto dir = path("mask-broadcasts");
        writeCpuPack(dir, card, source, readText(build.sharedObject));

        const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("kforge::scaled_masked_softmax", "")
                            .typed<at::Tensor(const at::Tensor &, double, const at::Tensor &)>();
        at::manual_seed(3);
        const auto mask = [](std::vector<int64_t> sizes) { return at::randn(sizes) * 4 - 2; };
        const std::vector<int64_t> scores = {2, 2, 5, 48};
        const std::vector<std::tuple<const char *, at::Tensor, at::Tensor>> calls = {
            {"causal [q, k]", at::randn(scores), mask({5, 48})},
            {"padding [b, 1, 1, k]", at::randn(scores), mask({2, 1, 1, 48})},
            {"per sample [b, 1, q, k]", at::randn(scores), mask({2, 1, 5, 48})},
            {"a bias [1, h, q, k]", at::randn(scores), mask({1, 2, 5, 48})},
            {"three runs", at::randn({2, 2, 2, 2, 3, 48}), mask({2, 1, 2, 1, 3, 48})},
            {"the mask wider than the scores", at::randn({1, 2, 5, 48}), mask({2, 1, 5, 48})},
            {"an expanded mask (not contiguous)", at::randn(scores), mask({2, 1, 1, 48}).expand({2, 1, 5, 48})}};
        runtime::loadPack(dir);
        std::vector<at::Tensor> outs;
        for (const auto &[name, x, m] : calls)
            outs.push_back(op.call(x, 0.125, m));
        const auto c = runtime::counters();
        const auto json = runtime::countersJson();
        runtime::unloadPacks();
        for (size_t i = 0; i < calls.size(); ++i) {
            const auto &[name, x, m] = calls[i];
            const auto chain = at::softmax((x * 0.125 + m).to(at::kFloat), -1);
            QVERIFY2(outs[i].sizes() == chain.sizes() && at::allclose(outs[i], chain, 1e-5, 1e-6), name);
        }
        QCOMPARE(c.size(), size_t(1));
        QVERIFY2(c[0].taken == 4 && c[0].fellBack == 3, json.c_str());
        QCOMPARE(c[0].why, (std::map<std::string, int64_t>{{"shape", 2}, {"layout", 1}}));
    }

    // A language model's loss through a pack: the CPU cross entropy template in front of
    // aten::cross_entropy_loss, on labels padded with the ignore index (-100), which the kernel leaves
    // out of the mean as ATen does; label smoothing is another contract and falls back.
    void runtimeCrossEntropyWithPaddedLabels()
    {
        const auto card = makeCard("cross_entropy", {{"rows", 64}, {"vocab", 300}});
        const auto *t = TemplateLibrary::builtin().find("cpu.cross_entropy.rows");
        QVERIFY(t);
        const auto [dir, error] = cpuPack("ce", card, TemplateProposer("cpu").render(*t, test::firstPoint(*t), card).candidate.source);
        QVERIFY2(error.empty(), error.c_str());

        at::manual_seed(5);
        const auto logits = at::randn({48, 300}) * 4;
        auto labels = at::randint(0, 300, {48}, at::kLong);
        labels.narrow(0, 40, 8).fill_(-100); // the batch's padding
        labels[3] = -100;
        const auto loss = [&](double smoothing) { return at::cross_entropy_loss(logits, labels, {}, at::Reduction::Mean, -100, smoothing); };
        const auto ref = loss(0.0), refSmoothed = loss(0.1);
        runtime::loadPack(dir);
        const auto out = loss(0.0), smoothed = loss(0.1);
        const auto c = runtime::counters();
        const auto json = runtime::countersJson();
        runtime::unloadPacks();
        QVERIFY2(at::allclose(out, ref, 1e-5, 1e-5), qPrintable(QStringLiteral("%1 against %2").arg(out.item<double>()).arg(ref.item<double>())));
        QVERIFY(at::equal(smoothed, refSmoothed));
        QCOMPARE(c.size(), size_t(1));
        QCOMPARE(c[0].op, std::string("aten::cross_entropy_loss"));
        QVERIFY2(c[0].taken == 1 && c[0].fellBack == 1, json.c_str());
        QCOMPARE(c[0].why, (std::map<std::string, int64_t>{{"argument", 1}}));
    }

    // A composite operator (aten::softmax.int, what TorchScript calls): the kernel stands in front of
    // autograd, so a call that autograd must record falls back, and its gradient is still right.
    void runtimeCompositeOperator()
    {
        const auto dir = copyPack("composite");
        auto manifest = nlohmann::json::parse(readText(dir + "/manifest.json"));
        auto &k = manifest["kernels"][0];
        k["operator"] = "aten::softmax";
        k["overload"] = "int";
        k["schema"] = "aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor";
        k["arguments"] = nlohmann::json::array({{{"input", 0}}, {{"int", -1}}, {{"none", true}}});
        writeText(dir + "/manifest.json", manifest.dump());

        at::manual_seed(4);
        const auto x = at::randn({kRows, kCols});
        const auto leaf = at::randn({kRows, kCols}).requires_grad_();
        const auto ref = at::softmax(x, -1);
        const auto refGrad = torch::autograd::grad({(at::softmax(leaf, -1) * at::arange(kCols)).sum()}, {leaf})[0];
        runtime::loadPack(dir);
        const auto y = at::softmax(x, -1);                        // taken
        const auto grad = torch::autograd::grad({(at::softmax(leaf, -1) * at::arange(kCols)).sum()}, {leaf})[0]; // falls back
        at::Tensor noGrad;
        {
            at::NoGradGuard off;
            noGrad = at::softmax(leaf, -1); // nothing to record: taken
        }
        const auto c = runtime::counters();
        const auto json = runtime::countersJson();
        runtime::unloadPacks();
        QVERIFY(at::allclose(y, ref, 1e-5, 1e-6));
        QVERIFY(at::allclose(noGrad, at::softmax(leaf.detach(), -1), 1e-5, 1e-6));
        QVERIFY(at::equal(grad, refGrad));
        QCOMPARE(c.size(), size_t(1));
        QCOMPARE(c[0].op, std::string("aten::softmax.int"));
        QVERIFY2(c[0].taken == 2 && c[0].fellBack == 1, json.c_str());
        QCOMPARE(c[0].why, (std::map<std::string, int64_t>{{"autograd", 1}}));
    }

    // The same from Python, through torch.ops.load_library.
    void pythonLoadsThePack()
    {
        const auto py = python();
        if (py.isEmpty())
            QSKIP("no Python with torch (install python3-torch: packaging/install-deps.sh does)");
        const auto r = run(py, {QStringLiteral(KFORGE_SOURCE_DIR "/tests/pack_python_test.py"), QStringLiteral(KFORGE_RUNTIME_PATH),
                                QString::fromStdString(m_pack), QString::number(kRows), QString::number(kCols)},
                           120000);
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        const auto j = nlohmann::json::parse(r.out.trimmed().split(QLatin1Char('\n')).last().toStdString());
        QVERIFY2(j.at("match").get<bool>(), j.dump().c_str());
        QVERIFY2(j.at("match_fallback").get<bool>(), j.dump().c_str());
        QVERIFY2(j.at("match_after_unload").get<bool>(), j.dump().c_str());
        const auto &c = j.at("counters").at("aten::_softmax");
        QCOMPARE(c.at("taken").get<int64_t>(), int64_t(1));
        QCOMPARE(c.at("fell_back").get<int64_t>(), int64_t(1));
        QCOMPARE(c.at("why").at("shape").get<int64_t>(), int64_t(1));
    }

    // python/kforge_model_time.py: a built-in model rebuilt as an eager module from its workload's source
    // computes what its TorchScript computes, and is timed eager and with the pack in one process.
    void pythonTimesBuiltinModel()
    {
        const auto py = python();
        if (py.isEmpty())
            QSKIP("no Python with torch (install python3-torch: packaging/install-deps.sh does)");
        const auto made = cli({QStringLiteral("model"), QStringLiteral("decoder"), QStringLiteral("--seq=32"), QStringLiteral("--out"),
                               QString::fromStdString(path("dec.json")), QStringLiteral("--worker"), QStringLiteral(KFORGE_WORKER_PATH)});
        QVERIFY2(made.code == 0, qPrintable(made.out + made.err));
        QVERIFY(!loadWorkloadFile(path("dec.json")).model.source.empty());
        const auto r = run(py, {QStringLiteral(KFORGE_SOURCE_DIR "/python/kforge_model_time.py"), QString::fromStdString(path("dec.json")),
                                QStringLiteral("--pack"), QString::fromStdString(m_pack), QStringLiteral("--runtime"),
                                QStringLiteral(KFORGE_RUNTIME_PATH), QStringLiteral("--iters"), QStringLiteral("2"), QStringLiteral("--out"),
                                QString::fromStdString(path("dec-time.json"))},
                           300000);
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        const auto j = nlohmann::json::parse(readText(path("dec-time.json")));
        QVERIFY2(j.at("ok").get<bool>(), j.dump().c_str());
        QCOMPARE(j.at("torchscript_max_diff").get<double>(), 0.0);
        for (const char *v : {"eager", "eager_pack"}) {
            QCOMPARE(j.at(v).at("samples_ms").size(), size_t(2));
            QVERIFY(j.at(v).at("median_ms").get<double>() > 0);
        }
        // The FX pass rewrote the decoder's attention chain to the fused operator (this pack has no kernel for
        // it, so its own chain runs): its one softmax call per forward reached the pack, taken or fallen back.
        QVERIFY2(j.at("fx").at("used").get<bool>(), j.dump().c_str());
        QCOMPARE(j.at("fused_calls").at("kforge::scaled_masked_softmax").get<int>(), 1);
        int fused = 0;
        for (const auto &item : j.at("fused_calls").items())
            fused += item.value().get<int>();
        QCOMPARE(j.at("fused_chains").get<int>(), fused); // with the pointwise chains where the runtime has their operators
        const auto &c = j.at("counters").at("aten::_softmax");
        QCOMPARE(c.at("taken").get<int64_t>() + c.at("fell_back").get<int64_t>(), int64_t(1));
        QVERIFY2(j.at("pack_max_diff").get<double>() < 1e-4, j.dump().c_str());
        if (!j.contains("compile_seconds"))
            QVERIFY2(j.at("compile").at("why").get<std::string>().find("torch.compile") != std::string::npos, j.dump().c_str());

        // An imported problem (kforge-cli import: the problem's Python source and its captured inputs in the
        // workload): its Model built from the source with the traced module's weights, the same bits.
        QDir().mkpath(QString::fromStdString(path("imported")));
        writeText(path("imported/tiny_attention.py"), kTinyProblem);
        const auto imported = cli({QStringLiteral("import"), QString::fromStdString(path("imported")), QStringLiteral("--out"),
                                   QString::fromStdString(path("")), QStringLiteral("--python"), py});
        QVERIFY2(imported.code == 0, qPrintable(imported.out + imported.err));
        const auto ri = run(py, {QStringLiteral(KFORGE_SOURCE_DIR "/python/kforge_model_time.py"), QString::fromStdString(path("tiny_attention.json")),
                                 QStringLiteral("--iters"), QStringLiteral("2"), QStringLiteral("--no-compile"), QStringLiteral("--out"),
                                 QString::fromStdString(path("tiny-time.json"))},
                            300000);
        QVERIFY2(ri.code == 0, qPrintable(ri.out + ri.err));
        const auto ji = nlohmann::json::parse(readText(path("tiny-time.json")));
        QVERIFY2(ji.at("ok").get<bool>(), ji.dump().c_str());
        QCOMPARE(ji.at("torchscript_max_diff").get<double>(), 0.0);
        QCOMPARE(ji.at("eager").at("samples_ms").size(), size_t(2));

        // One FX cannot trace (it unpacks a shape): traced, rewritten by the TorchScript rewrite, the same
        // bits as its plain trace without the pack, and both timed; the softmax call reaches the pack.
        QDir().mkpath(QString::fromStdString(path("unpacking")));
        writeText(path("unpacking/unpacking_attention.py"), kUnpackingProblem);
        const auto importedU = cli({QStringLiteral("import"), QString::fromStdString(path("unpacking")), QStringLiteral("--out"),
                                    QString::fromStdString(path("")), QStringLiteral("--python"), py});
        QVERIFY2(importedU.code == 0, qPrintable(importedU.out + importedU.err));
        const auto ru = run(py, {QStringLiteral(KFORGE_SOURCE_DIR "/python/kforge_model_time.py"), QString::fromStdString(path("unpacking_attention.json")),
                                 QStringLiteral("--pack"), QString::fromStdString(m_pack), QStringLiteral("--runtime"), QStringLiteral(KFORGE_RUNTIME_PATH),
                                 QStringLiteral("--iters"), QStringLiteral("2"), QStringLiteral("--no-compile"), QStringLiteral("--out"),
                                 QString::fromStdString(path("unpacking-time.json"))},
                            300000);
        QVERIFY2(ru.code == 0, qPrintable(ru.out + ru.err));
        const auto ju = nlohmann::json::parse(readText(path("unpacking-time.json")));
        QVERIFY2(ju.at("ok").get<bool>(), ju.dump().c_str());
        QVERIFY2(!ju.at("fx").at("used").get<bool>(), ju.dump().c_str());
        QVERIFY2(ju.at("torchscript_route").at("used").get<bool>(), ju.dump().c_str());
        QCOMPARE(ju.at("fused_chains").get<int>(), 1);
        QCOMPARE(ju.at("fused_calls").at("kforge::scaled_softmax_to").get<int>(), 1);
        for (const char *v : {"eager", "traced", "eager_pack"})
            QCOMPARE(ju.at(v).at("samples_ms").size(), size_t(2));
        QVERIFY(ju.at("eager_pack").contains("speedup_over_traced"));
        const auto &cu = ju.at("counters").at("aten::_softmax");
        QCOMPARE(cu.at("taken").get<int64_t>() + cu.at("fell_back").get<int64_t>(), int64_t(1));
        QVERIFY2(ju.at("pack_max_diff").get<double>() < 1e-4, ju.dump().c_str());

        // A workload that carries no source is refused with the reason.
        writeText(path("nosrc.json"), nlohmann::json{{"kforge_workload", 1}, {"name", "nosrc"}, {"model", {{"kind", "torchscript"}, {"path", "dec.pt"}}}}.dump());
        const auto refused = run(py, {QStringLiteral(KFORGE_SOURCE_DIR "/python/kforge_model_time.py"), QString::fromStdString(path("nosrc.json"))});
        QCOMPARE(refused.code, 1);
        QVERIFY2(refused.out.contains(QStringLiteral("carries no model source")), qPrintable(refused.out));
    }

    // Attention's softmax chain in a real TorchScript model: profiled into one fused card, searched on the
    // CPU, exported, and run with the model rewritten to the fused operator: the outputs match and the
    // pack's kernel takes the call. Mixed precision written with casts (scripted), and a float32 model with
    // none (traced, the scale a tensor constant): the native operator.
    void fusedAttentionSoftmax_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("script");
        QTest::addColumn<QString>("op");
        QTest::addColumn<double>("scale"); // the card's: a scale, or the divisor of a dividing form
        QTest::addColumn<QString>("padding"); // "" (the mask a [64, 64] buffer), or the model's 0/1 mask made "per sample" or "expanded"
        QTest::addColumn<QList<qint64>>("runs"); // the card's mrows, minner, mstep, mblock (ops/mask_rows.h)
        const QList<qint64> causal = {64, 64, 1, 1};
        QTest::newRow("scripted, cast to float32 and back")
            << "attn" << QString::fromLatin1(kAttention) << "kforge::scaled_masked_softmax" << 0.25 << QString() << causal;
        QTest::newRow("traced float32, no casts") << "attn-native" << QString::fromLatin1(kAttentionTraced)
                                                  << "kforge::scaled_masked_softmax_native_traced" << 0.25 << QString() << causal;
        const auto bert = QString::fromLatin1(kAttentionDivided);
        QTest::newRow("scripted float32, divided by a computed sqrt") << "attn-bert" << bert + QStringLiteral("torch.jit.script(A()).save(sys.argv[1])\n")
                                                                      << "kforge::scaled_masked_softmax_native_div" << 4.0 << QString() << causal;
        QTest::newRow("traced float32, divided")
            << "attn-bert-traced" << bert + QStringLiteral("q = torch.randn(2, 2, 64, 16)\ntorch.jit.trace(A(), (q, q)).save(sys.argv[1])\n")
            << "kforge::scaled_masked_softmax_native_div_traced" << 4.0 << QString() << causal;
        // Scores [2, 2, 64, 64]: a mask [2, 1, 1, 64] steps a row every 2 x 64 rows of the scores; one
        // [2, 1, 64, 64] steps its 64 rows each row and its samples every 128.
        QTest::newRow("traced, a padding mask per sample [b, 1, 1, s]")
            << "attn-bert-padded" << QString::fromLatin1(kAttentionPadded) << "kforge::scaled_masked_softmax_native_div_traced" << 4.0
            << QStringLiteral("per sample") << QList<qint64>{2, 2, 128, 1};
        QTest::newRow("traced, the padding mask expanded [b, 1, q, s]")
            << "attn-bert-expanded" << QString::fromLatin1(kAttentionPadded) << "kforge::scaled_masked_softmax_native_div_traced" << 4.0
            << QStringLiteral("expanded") << QList<qint64>{128, 64, 1, 128};
        QTest::newRow("traced, no scale, a bias per head [1, h, q, k]")
            << "attn-swin" << QString::fromLatin1(kAttentionUnscaled) << "kforge::scaled_masked_softmax_native" << 1.0 << QString()
            << QList<qint64>{128, 128, 1, 1};
        QTest::newRow("traced, Llama's softmax given float32, a causal and padding mask [b, 1, q, k]")
            << "attn-llama" << QString::fromLatin1(kAttentionLlama) << "kforge::scaled_masked_softmax" << 0.25 << QStringLiteral("expanded")
            << QList<qint64>{128, 64, 1, 128};
        QTest::newRow("traced, no scale, the sum viewed back (BART)")
            << "attn-bart" << QString::fromLatin1(kAttentionBart) << "kforge::scaled_masked_softmax_native" << 1.0 << QStringLiteral("expanded")
            << QList<qint64>{128, 64, 1, 128};
    }

    void fusedAttentionSoftmax()
    {
        QFETCH(QString, name);
        QFETCH(QString, script);
        QFETCH(QString, op);
        QFETCH(double, scale);
        QFETCH(QString, padding);
        QFETCH(QList<qint64>, runs);
        const auto file = [&](const char *suffix) { return path((name.toStdString() + suffix).c_str()); };
        const auto py = python();
        if (py.isEmpty())
            QSKIP("no Python with torch to make the TorchScript model (install python3-torch)");
        writeText(file(".py"), script.toStdString());
        const auto made = run(py, {QString::fromStdString(file(".py")), QString::fromStdString(file(".pt")), padding}, 120000);
        QVERIFY2(made.code == 0, qPrintable(made.err));
        const nlohmann::json qk = {{"shape", {2, 2, 64, 16}}, {"dtype", "float32"}};
        auto inputs = nlohmann::json::array({qk, qk});
        if (!padding.isEmpty())
            inputs.push_back({{"shape", {2, 64}}, {"dtype", "int64"}, {"init", "randint:0:2"}});
        writeText(file(".json"), nlohmann::json{{"kforge_workload", 1}, {"name", name.toStdString()}, {"model", {{"kind", "torchscript"}, {"path", name.toStdString() + ".pt"}}},
                                                    {"inputs", {{"seed", 1}, {"tensors", inputs}}}}
                                         .dump());
        const auto worker = QStringLiteral(KFORGE_WORKER_PATH);
        const auto prof = cli({QStringLiteral("profile"), QString::fromStdString(file(".json")), QStringLiteral("--device"), QStringLiteral("cpu"),
                               QStringLiteral("--worker"), worker});
        QVERIFY2(prof.code == 0, qPrintable(prof.out + prof.err));
        const auto w = loadWorkloadFile(file(".json"));
        const OperatorCard *fused = nullptr;
        for (const auto &c : w.cards)
            if (c.family == "scaled_masked_softmax")
                fused = &c;
        QVERIFY2(fused, qPrintable(prof.out));
        QCOMPARE(fused->shape.at("rows"), int64_t(2 * 2 * 64));
        QCOMPARE(fused->shape.at("cols"), int64_t(64));
        const QList<qint64> got = {fused->shape.at("mrows"), fused->shape.at("minner"), fused->shape.at("mstep"), fused->shape.at("mblock")};
        QCOMPARE(got, runs);
        QCOMPARE(fused->referenceArgs.at(1).at("double").get<double>(), scale);
        QCOMPARE(fused->calls, int64_t(1));
        QCOMPARE(QString::fromStdString(fused->atenOp), op);

        // The rewrite: the chain in the model's graph becomes the fused operator, in a clone only, and
        // without a pack the clone computes exactly what the model does.
        auto module = torch::jit::load(file(".pt"));
        auto clone = module.clone();
        QCOMPARE(runtime::rewriteFusedPatterns(clone), 1);
        const auto graphText = [](torch::jit::Module &m) {
            std::ostringstream os;
            os << *m.get_method("forward").graph();
            return os.str();
        };
        // The operator the rewritten graph calls: the card's, or for a sum viewed before the softmax the
        // operator that takes the card's where the view keeps the last dimension.
        const std::string called = name.contains(QLatin1String("bart"))    ? "kforge::masked_softmax_native_view"
                                   : name.contains(QLatin1String("llama")) ? "kforge::scaled_softmax_to" // the trace's cast back, a constant
                                                                           : op.toStdString();
        QVERIFY2(graphText(clone).find(called + "(") != std::string::npos, graphText(clone).c_str());
        QVERIFY(graphText(module).find("kforge::") == std::string::npos);
        QVERIFY(graphText(clone).find("aten::Float") == std::string::npos); // a traced scale folded to its number once
        {
            torch::NoGradGuard noGrad;
            const auto q = at::randn({2, 2, 64, 16}), k = at::randn({2, 2, 64, 16});
            std::vector<c10::IValue> args = {q, k};
            if (!padding.isEmpty())
                args.emplace_back(at::randint(0, 2, {2, 64}, at::kLong));
            QVERIFY(at::equal(module.forward(args).toTensor(), clone.forward(args).toTensor()));
        }

        const auto session = QString::fromStdString(file(".kforge"));
        const auto camp = cli({QStringLiteral("campaign"), QStringLiteral("--workload"), QString::fromStdString(file(".json")), QStringLiteral("--nodes"),
                               QStringLiteral("6"), QStringLiteral("--session"), session, QStringLiteral("--no-lessons"), QStringLiteral("--worker"), worker});
        QVERIFY2(camp.code == 0, qPrintable(camp.out + camp.err));
        QVERIFY2(camp.out.contains(QString::fromStdString(fused->key)), qPrintable(camp.out));
        // A person accepts the fused card's fastest correct kernel, so the test does not hang on CPU noise.
        SessionStore store(session.toStdString(), SessionStore::Mode::ReadOnly);
        const NodeRecord *best = nullptr;
        std::vector<NodeRecord> nodes;
        for (const auto &sess : store.sessions())
            for (const auto &n : store.nodes(sess.id))
                nodes.push_back(n);
        for (const auto &n : nodes)
            if (n.templateId.rfind("cpu.scaled_masked_softmax", 0) == 0 && (n.status == "accepted" || n.status == "not_faster")
                && (!best || n.speedup > best->speedup))
                best = &n;
        QVERIFY2(best, qPrintable(camp.out));
        if (best->status != "accepted") {
            const auto d = cli({QStringLiteral("decide"), QStringLiteral("--session"), session, QStringLiteral("--node"), QString::number(best->id),
                                QStringLiteral("--accept"), QStringLiteral("--reason"), QStringLiteral("correct; the test needs the fused kernel")});
            QVERIFY2(d.code == 0, qPrintable(d.err));
        }
        const auto exp = cli({QStringLiteral("export"), session, QStringLiteral("--out"), QString::fromStdString(file("-pack"))});
        QVERIFY2(exp.code == 0, qPrintable(exp.out + exp.err));
        const auto r = cli({QStringLiteral("run"), QString::fromStdString(file(".json")), QStringLiteral("--pack"), QString::fromStdString(file("-pack")),
                            QStringLiteral("--compare"), QStringLiteral("--iters"), QStringLiteral("3"), QStringLiteral("--json"),
                            QString::fromStdString(file("-run.json")), QStringLiteral("--worker"), worker});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        const auto report = nlohmann::json::parse(readText(file("-run.json")));
        QVERIFY2(report.at("outputs_match").get<bool>(), report.dump().c_str());
        QCOMPARE(report.at("fused_chains").get<int>(), 1);
        QCOMPARE(report.at("counters").at(op.toStdString()).at("taken").get<int64_t>(), int64_t(3));
    }

    // python/kforge_fx.py, the FX pass: each eager module of tests/fx_pass_test.py rewritten as many times as
    // its chains are the fused operators' meaning (a spelling it covers), never for a near miss, and its
    // outputs bit for bit the module's (the operators' own implementation is the chain).
    void fxPassRewritesExactChains_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("rewrites");
        const std::pair<const char *, int> rows[] = {
            {"decoder_block", 1}, {"diffusion_block", 1}, {"functional_type_as", 1}, {"method_softmax_scores_dtype", 1},
            {"swapped_operands_module_softmax", 1}, {"torch_mul_add_alpha_flags", 1}, {"keyword_flags", 1}, {"method_add_mask_first", 1},
            {"int_scale", 1}, {"size_scale", 1}, {"two_layers", 2}, {"decoder_block_bfloat16", 1}, {"mask_argument", 1}, {"submodule", 1},
            // near misses: another meaning, or one the graph cannot prove
            {"softmax_dim_1", 0}, {"softmax_dim_3_of_4", 0}, {"module_softmax_dim_1", 0}, {"softmax_dtype_argument", 0},
            {"bool_scale", 0}, {"mask_subtracted", 0},
            {"alpha_2", 0}, {"upcast_to_double", 0}, {"upcast_copies", 0}, {"no_cast_back", 0}, {"cast_to_constant_dtype", 0},
            {"cast_to_constant_bfloat16", 0}, {"cast_to_another_tensors_dtype", 0}, {"cast_to_scaled_scores_dtype", 0},
            {"log_softmax", 0}, {"probabilities_used_twice", 0},
            // a scale the chain cannot take (a tensor, a division before casts, scores used again): as an
            // unscaled chain x would be the scaled scores, whose dtype the cast back (q's) does not read
            {"tensor_scale", 0}, {"divided_by_scale", 0}, {"scores_used_twice", 0},
            // no scale at all (CLIP, Swin, Whisper, T5): the masked operators with scale 1.0
            {"unscaled_native", 1}, {"unscaled_casts_type_as", 1}, {"unscaled_native_mask_first", 1}, {"unscaled_bias_then_mask", 1},
            {"unscaled_same_operand", 0}, {"unscaled_plus_number", 0},
            // the sum viewed back before the softmax (BART, OPT, Whisper, CLIP); a view to another last
            // dimension is rewritten too and takes the chain when it runs
            {"unscaled_view_bart", 1}, {"unscaled_view_tuple", 1}, {"unscaled_view_other_last_dim", 1}, {"unscaled_view_used_twice", 0},
            // the chains with no casts, computed in the scores' dtype (the native operators); an integer x is
            // rewritten and runs the chain as written
            {"native_float32", 1}, {"native_method_no_mask", 1}, {"native_module_mask_first", 1}, {"native_int_scale", 1},
            {"native_integer_scores", 1}, {"native_bfloat16", 1}, {"native_dim_1", 0}, {"native_scores_used_twice", 0},
            {"native_tensor_scale", 0}, {"native_mask_subtracted", 0}, {"native_dtype_argument", 0},
            // divided by a number (BERT's `/ math.sqrt(head_size)`): the `_div` operators, bit for bit the division
            {"native_divided", 1}, {"native_divided_sqrt_masked", 1}, {"native_method_div", 1}, {"native_true_divide_mask_first", 1},
            {"native_integer_scores_divided", 1}, {"native_divided_floor", 0}, {"native_number_over_scores", 0}, {"native_divided_by_tensor", 0},
            // a scale computed from sizes (`q.shape[-1] ** -0.5`) is a number when the graph runs; one read
            // from a tensor's values is not taken
            {"native_size_scale", 1}, {"native_size_divided_masked", 1}, {"native_scale_read_from_tensor", 0},
            // the upcast given to the softmax as its dtype (Llama's eager attention); not another dtype, nor
            // with no cast back, nor after an upcast of its own (softmax_dtype_argument above)
            {"llama_softmax_dtype", 1}, {"llama_softmax_dtype_bfloat16", 1}, {"softmax_dtype_method_no_mask", 1},
            {"softmax_dtype_unscaled_type_as", 1}, {"softmax_dtype_float64", 0}, {"softmax_dtype_no_cast_back", 0},
            // the pointwise chains, where the runtime registers their operators
            {"silu_mul_functional", 1}, {"silu_mul_module_swapped", 1}, {"silu_mul_torch_mul", 1}, {"silu_in_place", 0},
            {"silu_times_number", 0}, {"silu_used_twice", 0}, {"sigmoid_mul", 0}, {"rms_norm_decoder", 1}, {"rms_norm_other_spellings", 1},
            {"rms_norm_bfloat16", 1}, {"rms_norm_int_eps", 0}, {"rms_norm_over_dim_2", 0}, {"rms_norm_fourth_power", 0},
            {"rms_norm_keepdim_false", 0}, {"rms_norm_sqrt_divide", 0}, {"rms_norm_constant_dtype", 0},
            {"rotary_decoder", 1}, {"rotary_swapped", 1}, {"rotary_other_half", 1}, {"rotary_halves_swapped", 0}, {"rotary_minus", 0},
            {"rotary_q_used_twice", 1}, {"rotary_after_a_norm", 1}, {"rotary_number_tables", 0}, {"rotary_mismatched_halves", 0}, {"rotary_hugging_face", 1},
            {"rotary_size_method", 1}, {"rotary_half_of_another_tensor", 0},
            // (q used again, or not the transpose itself: q stays and the call transposes it, rotary_embedding_heads' form)
            // a residual add before the norm: one fused call either way, add_rms_norm_cast only where exact
            {"add_rms_decoder", 1}, {"add_rms_swapped_weight_last", 1}, {"add_rms_alpha_2", 1}, {"add_rms_h_used_before", 1},
            // the GELU gates and Gemma's norm (one plus the weight, the product in float32), its residual add fused
            {"gelu_tanh_mul_functional", 1}, {"gelu_mul_module_swapped", 1}, {"gelu_tanh_times_number", 0}, {"gelu_tanh_mul_bfloat16", 1},
            {"rms_norm_gemma", 1}, {"rms_norm_gemma_weight_first", 1}, {"rms_norm_gemma_plus_two", 0}, {"rms_norm_gemma_heads", 1},
            {"quick_gelu", 1}, {"quick_gelu_swapped", 1}, {"quick_gelu_other_scale", 0}, {"quick_gelu_of_another_tensor", 0}, {"rms_norm_gemma_bfloat16", 1},
            {"add_rms_gemma", 1},
            // NewGELU written out, alone and as a gate, in its spellings; never with other numbers or an inner value used again
            {"gelu_new", 1}, {"gelu_new_gate", 1}, {"gelu_new_other_spellings", 1}, {"gelu_new_times_number", 1}, {"gelu_new_gate_bfloat16", 1},
            {"gelu_new_int_exponent", 0}, {"gelu_new_rounded_constant", 0}, {"gelu_new_tanh_used_twice", 0}};
        for (const auto &[name, n] : rows)
            QTest::newRow(name) << QString::fromLatin1(name) << n;
    }

    void fxPassRewritesExactChains()
    {
        QFETCH(QString, name);
        QFETCH(int, rewrites);
        if (m_fx.is_null()) {
            const auto py = python();
            if (py.isEmpty())
                QSKIP("no Python with torch (install python3-torch: packaging/install-deps.sh does)");
            const auto r = run(py, {QStringLiteral(KFORGE_SOURCE_DIR "/tests/fx_pass_test.py"), QStringLiteral(KFORGE_RUNTIME_PATH)}, 180000);
            QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
            m_fx = nlohmann::json::parse(r.out.trimmed().split(QLatin1Char('\n')).last().toStdString());
            // Without the runtime library the pass says what to load.
            QVERIFY2(m_fx.at("refused_without_library").get<std::string>().find("torch.ops.load_library") != std::string::npos, m_fx.dump().c_str());
        }
        const auto &cases = m_fx.at("cases");
        QVERIFY2(cases.contains(name.toStdString()), qPrintable(QStringLiteral("fx_pass_test.py has no module ") + name));
        const auto &c = cases.at(name.toStdString());
        if (c.contains("skipped"))
            QSKIP(c.at("skipped").get<std::string>().c_str());
        QCOMPARE(c.at("count").get<int>(), rewrites);
        QCOMPARE(c.at("kforge_calls").get<int>(), rewrites);
        QCOMPARE(c.at("again").get<int>(), 0); // a GraphModule is rewritten in place, and nothing is left
        QVERIFY(c.at("in_place").get<bool>());
        QVERIFY2(c.at("equal").get<bool>(), c.dump().c_str());
    }

    // Which operator took the norm after a residual add: the fused add where h's other uses come after the
    // norm and alpha is 1, the norm alone otherwise.
    void fxPassFusesTheResidualAdd_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("op");
        QTest::newRow("add_rms_decoder") << "add_rms_decoder" << "kforge::add_rms_norm_cast";
        QTest::newRow("add_rms_swapped_weight_last") << "add_rms_swapped_weight_last" << "kforge::add_rms_norm_cast";
        QTest::newRow("add_rms_alpha_2") << "add_rms_alpha_2" << "kforge::rms_norm_cast";
        QTest::newRow("add_rms_h_used_before") << "add_rms_h_used_before" << "kforge::rms_norm_cast";
        QTest::newRow("add_rms_gemma") << "add_rms_gemma" << "kforge::add_rms_norm_offset";
    }

    void fxPassFusesTheResidualAdd()
    {
        QFETCH(QString, name);
        QFETCH(QString, op);
        if (m_fx.is_null())
            QSKIP("fxPassRewritesExactChains did not run the FX pass");
        const auto &c = m_fx.at("cases").at(name.toStdString());
        if (c.contains("skipped"))
            QSKIP(c.at("skipped").get<std::string>().c_str());
        QVERIFY2(c.at("ops") == nlohmann::json({{op.toStdString(), 1}}), c.dump().c_str());
    }

    // The rewritten eager module with fusedAttentionSoftmax's CPU pack: the covered chain takes the pack's
    // kernel (a buffer mask and a forward-argument mask alike), scores of another shape fall back on their
    // shape, and a near miss never reaches the fused operator.
    void fxPassWithPack()
    {
        const auto pack = path("attn-pack");
        if (!QFile::exists(QString::fromStdString(pack + "/manifest.json")))
            QSKIP("fusedAttentionSoftmax made no pack (no Python with torch)");
        const auto r = run(python(), {QStringLiteral(KFORGE_SOURCE_DIR "/tests/fx_pass_test.py"), QStringLiteral(KFORGE_RUNTIME_PATH),
                                      QString::fromStdString(pack)},
                           180000);
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        const auto j = nlohmann::json::parse(r.out.trimmed().split(QLatin1Char('\n')).last().toStdString()).at("pack");
        QCOMPARE(j.at("fused_chains").get<int>(), 1);
        const auto fused = [&](const char *which, const char *what) {
            const auto &c = j.at(which).at("counters");
            return c.contains("kforge::scaled_masked_softmax") ? c.at("kforge::scaled_masked_softmax").at(what).get<int64_t>() : int64_t(0);
        };
        for (const char *which : {"covered", "mask_argument"}) {
            QVERIFY2(fused(which, "taken") == 1 && fused(which, "fell_back") == 0, j.dump().c_str());
            QVERIFY2(j.at(which).at("max_diff").get<double>() < 1e-5, j.dump().c_str());
        }
        QVERIFY2(fused("other_shape", "taken") == 0 && fused("other_shape", "fell_back") == 1, j.dump().c_str());
        QCOMPARE(j.at("other_shape").at("counters").at("kforge::scaled_masked_softmax").at("why").at("shape").get<int64_t>(), int64_t(1));
        QVERIFY2(fused("near_miss", "taken") + fused("near_miss", "fell_back") == 0, j.dump().c_str());
        for (const char *which : {"other_shape", "near_miss"})
            QVERIFY2(j.at(which).at("max_diff").get<double>() < 1e-5, j.dump().c_str());
    }

    // The SiLU gate's rewrite follows data flow and keeps only silu(gate) * up with a tensor `up`, in either
    // order; the rewritten module computes the same bits.
    void rewriteSiluGate_data()
    {
        QTest::addColumn<QString>("body");
        QTest::addColumn<int>("replaced");
        QTest::newRow("silu(a) * b") << "torch.silu(a) * b" << 1;
        QTest::newRow("b * silu(a)") << "b * torch.silu(a)" << 1;
        QTest::newRow("two gates") << "torch.silu(a) * b + torch.silu(b) * a" << 2;
        QTest::newRow("by a number") << "torch.silu(a) * 2.0" << 0;
        QTest::newRow("the gate used twice") << "torch.silu(a) * b + torch.silu(a)" << 1;
        QTest::newRow("shared gate") << "s = torch.silu(a)\n    return s * b + s" << 0;
        QTest::newRow("sigmoid, not silu") << "torch.sigmoid(a) * b" << 0;
        // GELU's tanh form written out (Hugging Face's NewGELUActivation), alone and as a gate; only with its own
        // constants and the float exponent.
        const QString newGelu = QStringLiteral("0.5 * a * (1.0 + torch.tanh(0.7978845608028654 * (a + 0.044715 * torch.pow(a, 3.0))))");
        QTest::newRow("NewGELU") << newGelu << 1;
        QTest::newRow("NewGELU gate") << newGelu + QStringLiteral(" * b") << 1;
        QTest::newRow("up times NewGELU") << QStringLiteral("b * (") + newGelu + QStringLiteral(")") << 1;
        QTest::newRow("NewGELU times a number") << QStringLiteral("(") + newGelu + QStringLiteral(") * 2.0") << 1;
        QTest::newRow("NewGELU, sqrt(2 / pi) rounded (gelu_fast's)") << QString(newGelu).replace(QStringLiteral("0.7978845608028654"), QStringLiteral("0.7978845608")) << 0;
        QTest::newRow("NewGELU, an int exponent") << QString(newGelu).replace(QStringLiteral("3.0)"), QStringLiteral("3)")) << 0;
        QTest::newRow("QuickGELU") << "a * torch.sigmoid(1.702 * a)" << 1;
        QTest::newRow("QuickGELU swapped") << "torch.sigmoid(a * 1.702) * a" << 1;
        QTest::newRow("QuickGELU, another scale") << "a * torch.sigmoid(1.5 * a)" << 0;
        QTest::newRow("QuickGELU of another tensor") << "b * torch.sigmoid(1.702 * a)" << 0;
        QTest::newRow("NewGELU, another offset") << QString(newGelu).replace(QStringLiteral("(1.0 +"), QStringLiteral("(2.0 +")) << 0;
        // The attention softmax's filter in the same table: a mask is a tensor, never a number.
        QTest::newRow("softmax chain with a mask") << "torch.softmax((a * 0.5 + b).float(), -1).to(a.dtype)" << 1;
        QTest::newRow("softmax chain plus a number") << "torch.softmax((a * 0.5 + 1.0).float(), -1).to(a.dtype)" << 0;
        QTest::newRow("softmax chain, int scale") << "torch.softmax((a * 2).float(), -1).to(a.dtype)" << 1;
        // With no casts, the native operator: a double scale; an int one only where the graph says a is
        // floating (a scripted graph does not).
        QTest::newRow("native softmax chain") << "torch.softmax(a * 0.5 + b, -1)" << 1;
        QTest::newRow("native softmax, no mask") << "torch.softmax(a * 0.5, dim=-1)" << 1;
        QTest::newRow("native softmax plus a number") << "torch.softmax(a * 0.5 + 1.0, -1)" << 0;
        QTest::newRow("native softmax, int scale") << "torch.softmax(a * 2, -1)" << 0;
        QTest::newRow("native softmax over dim 0") << "torch.softmax(a * 0.5, 0)" << 0;
        // A scale the model computes (a float value, not a constant): the operator gets it as the model made it.
        QTest::newRow("native softmax, computed scale") << "torch.softmax(a * b.size(-1) ** -0.5, -1)" << 1;
        QTest::newRow("native softmax, computed int scale") << "torch.softmax(a * b.size(-1), -1)" << 0;
        // Divided by the scale (BERT's `/ math.sqrt(head_size)`): the `_div` operators, an int divisor too
        // (true division makes an integer x float either way); the division exact, not a reciprocal's product.
        QTest::newRow("native softmax divided, masked") << "torch.softmax(a / 8.0 + b, -1)" << 1;
        QTest::newRow("native softmax divided by sqrt(8)") << "torch.softmax(a / 2.8284271247461903, dim=-1)" << 1;
        QTest::newRow("native softmax divided by an int") << "torch.softmax(a / 3, -1)" << 1;
        QTest::newRow("native softmax divided, computed") << "torch.softmax(a / b.size(-1) ** 0.5 + b, -1)" << 1;
        QTest::newRow("native softmax, floor division") << "torch.softmax(torch.div(a, 8.0, rounding_mode='floor'), -1)" << 0;
        // TorchScript writes `8.0 / a` as reciprocal(a) * 8.0: the product is the multiplying chain's.
        QTest::newRow("native softmax, a number over the scores") << "torch.softmax(8.0 / a, -1)" << 1;
        QTest::newRow("native softmax, divided by a tensor") << "torch.softmax(a / b, -1)" << 0;
        QTest::newRow("cast softmax chain divided") << "torch.softmax((a / 8.0).float(), -1).to(a.dtype)" << 0;
        // No scale (CLIP, Swin, Whisper scale q first, T5 not at all): the masked operators with scale 1.0.
        QTest::newRow("unscaled, casts") << "torch.softmax((a + b).float(), -1).to(a.dtype)" << 1;
        QTest::newRow("unscaled, native") << "torch.softmax(a + b, -1)" << 1;
        QTest::newRow("unscaled, a tensor scale before") << "torch.softmax(a * b + b, -1)" << 1;
        QTest::newRow("unscaled plus a number") << "torch.softmax(a + 1.0, -1)" << 0;
        QTest::newRow("unscaled, alpha 2") << "torch.softmax(torch.add(a, b, alpha=2), -1)" << 0;
        QTest::newRow("unscaled over dim 0") << "torch.softmax(a + b, 0)" << 0;
        // A constant dtype: kforge::scaled_softmax_to, which runs the chain where it is not x's (float16 here).
        QTest::newRow("unscaled, casts to a constant dtype") << "torch.softmax((a + b).float(), -1).to(5)" << 1;
        // The upcast given to the softmax as its dtype (Llama's eager attention): the operators with casts
        // (a module defined from C++ writes a dtype as its number: 6 float32, 7 float64).
        QTest::newRow("softmax given float32") << "torch.softmax(a * 0.5 + b, -1, dtype=6).to(a.dtype)" << 1;
        QTest::newRow("softmax given float32, no mask") << "torch.softmax(a * 0.5, dim=-1, dtype=6).to(a.dtype)" << 1;
        QTest::newRow("softmax given float32, unscaled") << "torch.softmax(a + b, -1, dtype=6).to(a.dtype)" << 1;
        QTest::newRow("softmax given float64") << "torch.softmax(a * 0.5 + b, -1, dtype=7).to(a.dtype)" << 0;
        QTest::newRow("softmax given float32, no cast back") << "torch.softmax(a * 0.5 + b, -1, dtype=6)" << 0;
        QTest::newRow("softmax given float32 after an upcast") << "torch.softmax((a * 0.5 + b).float(), -1, dtype=6).to(a.dtype)" << 0;
        QTest::newRow("softmax given float32, divided") << "torch.softmax(a / 2.0 + b, -1, dtype=6).to(a.dtype)" << 0;
        // The sum viewed before the softmax (BART, OPT, Whisper, CLIP): kforge::masked_softmax_native_view, which
        // takes the fused operator where the view keeps the last dimension and the chain where it does not.
        QTest::newRow("unscaled, viewed keeping the last dim") << "torch.softmax((a + b).view(-1, 2, 40), -1)" << 1;
        QTest::newRow("unscaled, viewed to another last dim") << "torch.softmax((a + b).view(8, 20), -1)" << 1;
        QTest::newRow("unscaled, viewed, over dim 0") << "torch.softmax((a + b).view(-1, 40), 0)" << 0;
    }

    void rewriteSiluGate()
    {
        QFETCH(QString, body);
        QFETCH(int, replaced);
        const auto text = body.toStdString();
        torch::jit::Module module("m");
        module.define("def forward(self, a, b):\n    " + (text.find("return") == std::string::npos ? "return " + text : text) + "\n");
        auto clone = module.clone();
        QCOMPARE(runtime::rewriteFusedPatterns(clone), replaced);
        std::ostringstream os;
        os << *clone.get_method("forward").graph();
        int fused = 0;
        for (size_t at = os.str().find("kforge::"); at != std::string::npos; at = os.str().find("kforge::", at + 1))
            ++fused;
        QCOMPARE(fused, replaced);
        torch::NoGradGuard noGrad;
        for (const auto dtype : {at::kFloat, at::kBFloat16}) {
            const auto a = at::randn({4, 40}).to(dtype), b = at::randn({4, 40}).to(dtype);
            QVERIFY(at::equal(module.forward({a, b}).toTensor(), clone.forward({a, b}).toTensor()));
        }
    }

    // Traced attention with casts, as kforge-cli import traces a model: the scale a 0-dim float64 tensor
    // constant, the cast back `.to(q.dtype)` the dtype the trace saw, a constant. Llama's eager attention (and
    // the models written after it) gives the softmax the upcast as its dtype. Both become
    // kforge::scaled_softmax_to, which takes the fused operator where the constant is x's dtype when it runs
    // and the chain where it is not; the rewritten module computes the same bits either way.
    void rewriteTracedCasts_data()
    {
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<QString>("softmax");
        QTest::addColumn<int>("replaced");
        const QString llama = QStringLiteral("F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)");
        QTest::newRow("Llama, bfloat16") << "bfloat16" << llama << 1;
        QTest::newRow("Llama, float32") << "float32" << llama << 1;
        QTest::newRow("upcast, then the softmax, bfloat16") << "bfloat16" << "torch.softmax(w.float(), -1).to(q.dtype)" << 1;
        QTest::newRow("cast back to another dtype (the chain when it runs)") << "bfloat16"
                                                                            << "F.softmax(w, dim=-1, dtype=torch.float32).to(torch.float16)" << 1;
        QTest::newRow("softmax given float64") << "bfloat16" << "F.softmax(w, dim=-1, dtype=torch.float64).to(q.dtype)" << 0;
        QTest::newRow("no cast back but the model's to float64 (the chain)") << "bfloat16" << "F.softmax(w, dim=-1, dtype=torch.float32)" << 1;
    }

    void rewriteTracedCasts()
    {
        QFETCH(QString, dtype);
        QFETCH(QString, softmax);
        QFETCH(int, replaced);
        const auto py = python();
        if (py.isEmpty())
            QSKIP("no Python with torch to trace the model (install python3-torch)");
        const std::string script = "import sys\nimport torch\nimport torch.nn.functional as F\n\n"
                                   "class A(torch.nn.Module):\n"
                                   "    def __init__(self):\n"
                                   "        super().__init__()\n"
                                   "        self.scaling = 16 ** -0.5\n"
                                   "        self.register_buffer('mask', torch.triu(torch.full((1, 1, 64, 64), -1e4), 1))\n\n"
                                   "    def forward(self, q, k):\n"
                                   "        q, k = q.to(torch." + dtype.toStdString() + "), k.to(torch." + dtype.toStdString() + ")\n"
                                   "        w = torch.matmul(q, k.transpose(2, 3)) * self.scaling\n"
                                   "        w = w + self.mask.to(q.dtype)\n"
                                   "        w = " + softmax.toStdString() + "\n"
                                   "        return w.double()\n\n"
                                   "q = torch.randn(2, 2, 64, 16)\n"
                                   "torch.jit.trace(A(), (q, q)).save(sys.argv[1])\n";
        std::string why;
        auto module = traced(py, script, why);
        QVERIFY2(why.empty(), why.c_str());
        auto clone = module.clone();
        QCOMPARE(runtime::rewriteFusedPatterns(clone), replaced);
        std::ostringstream os;
        os << *clone.get_method("forward").graph();
        QCOMPARE(os.str().find("kforge::scaled_softmax_to(") != std::string::npos, replaced == 1);
        // The bits, and so the dtype the softmax's result was rounded to (the model returns it as float64).
        torch::NoGradGuard noGrad;
        const auto q = at::randn({2, 2, 64, 16}), k = at::randn({2, 2, 64, 16});
        QVERIFY(at::equal(module.forward({q, k}).toTensor(), clone.forward({q, k}).toTensor()));
    }

    // A residual add right before the written-out RMSNorm becomes kforge::add_rms_norm_cast, whose first
    // output takes the add's other uses; an add that is not a residual leaves the norm alone fused. The
    // rewritten module computes the same bits.
    void rewriteResidualNorm_data()
    {
        QTest::addColumn<QString>("body");
        QTest::addColumn<QString>("op");
        const char *norm = "(xf * torch.rsqrt(xf.pow(2).mean(-1, True) + 1e-06)).to(h.dtype)";
        const auto row = [&](const char *name, const std::string &add, const char *weighted, const char *result, const char *op) {
            QTest::newRow(name) << QString::fromStdString("h = " + add + "\n    xf = h.float()\n    y = " + weighted + "\n    return " + result)
                                << QString::fromLatin1(op);
        };
        const std::string wFirst = std::string("w * ") + norm, wLast = std::string(norm) + " * w";
        row("as the decoder writes it", "a + b", wFirst.c_str(), "h + y", "kforge::add_rms_norm_cast");
        row("the weight last, torch.add", "torch.add(a, b)", wLast.c_str(), "h * 2.0 + y", "kforge::add_rms_norm_cast");
        row("h used only by the norm", "b + a", wFirst.c_str(), "y", "kforge::add_rms_norm_cast");
        row("alpha 2", "torch.add(a, b, alpha=2)", wFirst.c_str(), "h + y", "kforge::rms_norm_cast");
        row("a number added", "a + 1.0", wFirst.c_str(), "h + y", "kforge::rms_norm_cast");
        // Control flow: h used in a branch after the norm is taken from the fused call.
        QTest::newRow("h used in a branch after the norm")
            << QString::fromStdString("h = a + b\n    xf = h.float()\n    y = " + wFirst + "\n    if bool(y.sum() > 0):\n        return h + y\n    return y")
            << QStringLiteral("kforge::add_rms_norm_cast");
    }

    void rewriteResidualNorm()
    {
        QFETCH(QString, body);
        QFETCH(QString, op);
        torch::jit::Module module("m");
        module.define("def forward(self, a, b, w):\n    " + body.toStdString() + "\n");
        auto clone = module.clone();
        QCOMPARE(runtime::rewriteFusedPatterns(clone), 1);
        std::ostringstream os;
        os << *clone.get_method("forward").graph();
        const auto graph = os.str();
        QVERIFY2(graph.find(op.toStdString() + "(") != std::string::npos, graph.c_str());
        QVERIFY2(graph.find("aten::rsqrt") == std::string::npos, graph.c_str());
        torch::NoGradGuard noGrad;
        for (const auto dtype : {at::kFloat, at::kBFloat16}) {
            const auto a = at::randn({3, 5, 64}).to(dtype), b = at::randn({3, 5, 64}).to(dtype), w = at::randn({64}).to(dtype);
            QVERIFY(at::equal(module.forward({a, b, w}).toTensor(), clone.forward({a, b, w}).toTensor()));
        }
    }

    // The rotary embedding's rewrite: the transpose of dims 1 and 2 and Llama's rotate_half at one `half`,
    // the sum in either order; on a q that is not that transpose, or is used again, the same chain goes to
    // kforge::rotary_embedding_heads (q kept); the rewritten module computes the same bits.
    void rewriteRotary_data()
    {
        QTest::addColumn<QString>("body");
        QTest::addColumn<int>("replaced");
        QTest::newRow("as the decoder writes it") << "q = x.transpose(1, 2)\n    return q * c + torch.cat([-q[..., 4:], q[..., :4]], -1) * s" << 1;
        QTest::newRow("transpose(2, 1), the sum swapped")
            << "q = x.transpose(2, 1)\n    return torch.cat([-q[..., 4:], q[..., :4]], -1) * s + q * c" << 1;
        QTest::newRow("q and k") << "q = x.transpose(1, 2)\n    k = (x * 2.0).transpose(1, 2)\n"
                                    "    return (q * c + torch.cat([-q[..., 4:], q[..., :4]], -1) * s) + (k * c + torch.cat([-k[..., 4:], k[..., :4]], -1) * s)"
                                 << 2;
        QTest::newRow("another half") << "q = x.transpose(1, 2)\n    return q * c + torch.cat([-q[..., 3:], q[..., :3]], -1) * s" << 1;
        QTest::newRow("halves swapped") << "q = x.transpose(1, 2)\n    return q * c + torch.cat([q[..., :4], -q[..., 4:]], -1) * s" << 0;
        QTest::newRow("a difference") << "q = x.transpose(1, 2)\n    return q * c - torch.cat([-q[..., 4:], q[..., :4]], -1) * s" << 0;
        QTest::newRow("q used again") << "q = x.transpose(1, 2)\n    return q * c + torch.cat([-q[..., 4:], q[..., :4]], -1) * s + q" << 1;
        QTest::newRow("transpose(0, 1)") << "q = x.transpose(0, 1)\n    return q * c + torch.cat([-q[..., 4:], q[..., :4]], -1) * s" << 1;
        QTest::newRow("q not a transpose") << "q = x * 2.0\n    return q * c + torch.cat([-q[..., 4:], q[..., :4]], -1) * s" << 1;
        QTest::newRow("the front half of another tensor")
            << "q = x.transpose(1, 2)\n    return q * c + torch.cat([-q[..., 4:], (q * 2.0)[..., :4]], -1) * s" << 0;
    }

    void rewriteRotary()
    {
        QFETCH(QString, body);
        QFETCH(int, replaced);
        torch::jit::Module module("m");
        module.define("def forward(self, x, c, s):\n    " + body.toStdString() + "\n");
        auto clone = module.clone();
        QCOMPARE(runtime::rewriteFusedPatterns(clone), replaced);
        std::ostringstream os;
        os << *clone.get_method("forward").graph();
        int fused = 0;
        for (size_t at = os.str().find("kforge::rotary_embedding"); at != std::string::npos; at = os.str().find("kforge::rotary_embedding", at + 1))
            ++fused;
        QCOMPARE(fused, replaced);
        torch::NoGradGuard noGrad;
        for (const auto dtype : {at::kFloat, at::kBFloat16}) {
            const auto x = at::randn({2, 5, 5, 8}).to(dtype), c = at::randn({5, 8}).to(dtype), s = at::randn({5, 8}).to(dtype);
            QVERIFY(at::equal(module.forward({x, c, s}).toTensor(), clone.forward({x, c, s}).toTensor()));
        }
    }

    // The rotary embedding as a trace records Hugging Face's rotate_half (`x[..., : x.shape[-1] // 2]`): each
    // half its own computed value read from q's size, the slices over dim 3, the back one open to the largest
    // int64. kforge::rotary_embedding_sliced takes kforge::rotary_embedding where the halves are one value and
    // the dims q's last when it runs, else the chain; the rewritten module computes the same bits.
    void rewriteTracedRotary_data()
    {
        QTest::addColumn<QString>("body");
        QTest::addColumn<int>("replaced");
        QTest::newRow("Hugging Face's rotate_half, tables [b, 1, s, d]") << "return q * cos + rotate_half(q) * sin" << 1;
        QTest::newRow("q and k, the sum swapped") << "return (q * cos + rotate_half(q) * sin) + (rotate_half(k) * sin + k * cos)" << 2;
        QTest::newRow("the back half's end written out")
            << "return q * cos + torch.cat((-q[..., q.shape[-1] // 2 : q.shape[-1]], q[..., : q.shape[-1] // 2]), dim=-1) * sin" << 0;
        QTest::newRow("halves swapped") << "return q * cos + torch.cat((q[..., : q.shape[-1] // 2], -q[..., q.shape[-1] // 2 :]), dim=-1) * sin" << 0;
    }

    void rewriteTracedRotary()
    {
        QFETCH(QString, body);
        QFETCH(int, replaced);
        const auto py = python();
        if (py.isEmpty())
            QSKIP("no Python with torch to trace the model (install python3-torch)");
        const std::string script = "import sys\nimport torch\n\n"
                                   "def rotate_half(x):\n"
                                   "    x1 = x[..., : x.shape[-1] // 2]\n"
                                   "    x2 = x[..., x.shape[-1] // 2 :]\n"
                                   "    return torch.cat((-x2, x1), dim=-1)\n\n"
                                   "class A(torch.nn.Module):\n"
                                   "    def forward(self, x, cos, sin):\n"
                                   "        q = x.view(2, 8, 4, 16).transpose(1, 2)\n"
                                   "        k = (x * 2.0).view(2, 8, 4, 16).transpose(1, 2)\n"
                                   "        " + body.toStdString() + "\n\n"
                                   "x = torch.randn(2, 8, 64)\nc = torch.randn(2, 1, 8, 16)\n"
                                   "torch.jit.trace(A(), (x, c, c)).save(sys.argv[1])\n";
        std::string why;
        auto module = traced(py, script, why);
        QVERIFY2(why.empty(), why.c_str());
        auto clone = module.clone();
        QCOMPARE(runtime::rewriteFusedPatterns(clone), replaced);
        std::ostringstream os;
        os << *clone.get_method("forward").graph();
        int fused = 0;
        for (size_t at = os.str().find("kforge::rotary_embedding_sliced("); at != std::string::npos;
             at = os.str().find("kforge::rotary_embedding_sliced(", at + 1))
            ++fused;
        QCOMPARE(fused, replaced);
        torch::NoGradGuard noGrad;
        const auto x = at::randn({2, 8, 64}), c = at::randn({2, 1, 8, 16}), s = at::randn({2, 1, 8, 16});
        QVERIFY(at::equal(module.forward({x, c, s}).toTensor(), clone.forward({x, c, s}).toTensor()));
        // Dim 3 and -1 are both q's last: the fused operator, whose chain is the same.
        const auto x4 = at::randn({2, 8, 4, 16});
        QVERIFY(at::equal(runtime::rotarySliced(x4, c, s, 3, 8, -1, 8), runtime::rotaryChain(x4, c, s, 8)));
    }

    // Hugging Face's LlamaRMSNorm traced: `.to(input_dtype)` a constant, so kforge::rms_norm_cast_to, and with the
    // residual add before it kforge::add_rms_norm_cast_to (h keeps its later uses); each takes the fused
    // operator where the constant is x's dtype when it runs, else the chain. The same bits either way.
    void rewriteTracedRmsNorm_data()
    {
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<QString>("body");
        QTest::addColumn<QString>("op"); // the one fused call, or "" for none
        QTest::newRow("LlamaRMSNorm, bfloat16") << "bfloat16" << "return self.norm(x) * r" << "kforge::rms_norm_cast_to";
        QTest::newRow("LlamaRMSNorm, float32") << "float32" << "return self.norm(x)" << "kforge::rms_norm_cast_to";
        QTest::newRow("the residual add before it") << "bfloat16" << "h = x + r\n        return h + self.norm(h)" << "kforge::add_rms_norm_cast_to";
        QTest::newRow("cast back to another dtype") << "bfloat16" << "return self.other(x)" << "kforge::rms_norm_cast_to";
        QTest::newRow("the mean not kept") << "bfloat16" << "return self.unkept(x)" << "";
    }

    void rewriteTracedRmsNorm()
    {
        QFETCH(QString, dtype);
        QFETCH(QString, body);
        QFETCH(QString, op);
        const auto py = python();
        if (py.isEmpty())
            QSKIP("no Python with torch to trace the model (install python3-torch)");
        const std::string dt = "torch." + dtype.toStdString();
        const std::string script = "import sys\nimport torch\n\n"
                                   "class RMS(torch.nn.Module):\n"
                                   "    def __init__(self, out=None, keep=True):\n"
                                   "        super().__init__()\n"
                                   "        self.weight = torch.nn.Parameter(torch.randn(64).to(" + dt + "))\n"
                                   "        self.eps, self.out, self.keep = 1e-6, out, keep\n\n"
                                   "    def forward(self, h):\n"
                                   "        input_dtype = h.dtype\n"
                                   "        h = h.to(torch.float32)\n"
                                   "        variance = h.pow(2).mean(-1, keepdim=self.keep)\n"
                                   "        if not self.keep:\n"
                                   "            variance = variance[..., None]\n"
                                   "        h = h * torch.rsqrt(variance + self.eps)\n"
                                   "        return self.weight * h.to(self.out or input_dtype)\n\n"
                                   "class A(torch.nn.Module):\n"
                                   "    def __init__(self):\n"
                                   "        super().__init__()\n"
                                   "        self.norm, self.other, self.unkept = RMS(), RMS(torch.float16), RMS(keep=False)\n\n"
                                   "    def forward(self, x, r):\n"
                                   "        x, r = x.to(" + dt + "), r.to(" + dt + ")\n"
                                   "        " + body.toStdString() + "\n\n"
                                   "x = torch.randn(2, 8, 64)\n"
                                   "torch.jit.trace(A(), (x, x)).save(sys.argv[1])\n";
        std::string why;
        auto module = traced(py, script, why);
        QVERIFY2(why.empty(), why.c_str());
        auto clone = module.clone();
        QCOMPARE(runtime::rewriteFusedPatterns(clone), op.isEmpty() ? 0 : 1);
        std::ostringstream os;
        os << *clone.get_method("forward").graph();
        if (!op.isEmpty())
            QVERIFY2(os.str().find(op.toStdString() + "(") != std::string::npos, os.str().c_str());
        torch::NoGradGuard noGrad;
        const auto x = at::randn({2, 8, 64}), r = at::randn({2, 8, 64});
        const auto want = module.forward({x, r}).toTensor(), got = clone.forward({x, r}).toTensor();
        QCOMPARE(got.scalar_type(), want.scalar_type());
        QVERIFY(at::equal(want, got));
    }

    // A whole Hugging Face Llama decoder layer traced as kforge-cli import traces it (bench/problems/models/
    // llama_decoder_layer.py at a small size, bfloat16): its six chains are rewritten, the RMSNorm, the
    // residual add with the second RMSNorm, the rotary embedding of q and of k, attention's softmax and the
    // SiLU gate, and the rewritten layer computes the same bits.
    void rewriteTracedLlamaLayer()
    {
        const auto py = python();
        if (py.isEmpty())
            QSKIP("no Python with torch to trace the model (install python3-torch)");
        std::string why;
        auto module = traced(py, kLlamaLayerTrace, why);
        QVERIFY2(why.empty(), why.c_str());
        auto clone = module.clone();
        QCOMPARE(runtime::rewriteFusedPatterns(clone), 6);
        std::ostringstream os;
        os << *clone.get_method("forward").graph();
        const auto count = [&](const std::string &op) { return callsIn(os.str(), op); };
        QCOMPARE(count("kforge::rms_norm_cast_to"), 1);
        QCOMPARE(count("kforge::add_rms_norm_cast_to"), 1);
        QCOMPARE(count("kforge::rotary_embedding_sliced"), 2);
        QCOMPARE(count("kforge::scaled_softmax_to"), 1);
        QCOMPARE(count("kforge::silu_mul"), 1);
        torch::NoGradGuard noGrad;
        const auto x = at::randn({2, 64, 256}).to(at::kBFloat16);
        const auto am = at::ge(at::arange(64).unsqueeze(0), at::tensor({int64_t(8), int64_t(40)}).unsqueeze(1)).to(at::kLong);
        QVERIFY(at::equal(module.forward({x, am}).toTensor(), clone.forward({x, am}).toTensor()));
    }

    // A traced Gemma 3 layer: its six norms (Gemma's, one plus the weight; the pre-MLP one with the residual
    // add before it), attention's softmax with casts, the GELU tanh gate and both rotary embeddings (which
    // read q's and k's norms, not the projection's transposed view: rotary_embedding_heads) are rewritten,
    // and the outputs keep their bits. In float32 the trace's type_as reads the norm's no-op upcast: the
    // `_to` operators with float32.
    void rewriteTracedGemmaLayer_data()
    {
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<QString>("norm");
        QTest::newRow("bfloat16") << "bfloat16" << "rms_norm_offset";
        QTest::newRow("float32") << "float32" << "rms_norm_offset_to";
    }

    void rewriteTracedGemmaLayer()
    {
        QFETCH(QString, dtype);
        QFETCH(QString, norm);
        const auto py = python();
        if (py.isEmpty())
            QSKIP("no Python with torch to trace the model (install python3-torch)");
        std::string why;
        auto module = traced(py, kGemmaLayerTrace, why, {dtype});
        QVERIFY2(why.empty(), why.c_str());
        auto clone = module.clone();
        QCOMPARE(runtime::rewriteFusedPatterns(clone), 10);
        std::ostringstream os;
        os << *clone.get_method("forward").graph();
        const auto count = [&](const std::string &op) { return callsIn(os.str(), op); };
        // input, q, k, post-attention, post-MLP; q's and k's over the transposed view in bfloat16 (a float32
        // trace's rms_norm_offset_to takes that layout when it runs)
        const bool heads = dtype == QStringLiteral("bfloat16");
        QCOMPARE(count("kforge::" + norm.toStdString()), heads ? 3 : 5);
        QCOMPARE(count("kforge::rms_norm_offset_heads"), heads ? 2 : 0);
        QCOMPARE(count("kforge::add_" + norm.toStdString()), 1);
        QCOMPARE(count("kforge::scaled_softmax_to"), 1);
        QCOMPARE(count("kforge::gelu_tanh_mul"), 1);
        QCOMPARE(count("kforge::rotary_embedding_heads"), 2); // q and k after their norms
        QCOMPARE(count("aten::neg"), 0);
        QCOMPARE(count("aten::type_as"), 0);
        torch::NoGradGuard noGrad;
        const auto x = at::randn({2, 64, 256}).to(dtype == QStringLiteral("float32") ? at::kFloat : at::kBFloat16);
        const auto am = at::ge(at::arange(64).unsqueeze(0), at::tensor({int64_t(8), int64_t(40)}).unsqueeze(1)).to(at::kLong);
        QVERIFY(at::equal(module.forward({x, am}).toTensor(), clone.forward({x, am}).toTensor()));
    }

    // NewGELU traced (its numbers 0-dim float64 tensor constants): GPT-2's MLP gets kforge::gelu_new, T5 v1.1's
    // gate kforge::gelu_new_mul; the rewritten module computes the same bits without a pack.
    void rewriteTracedNewGelu_data()
    {
        QTest::addColumn<QString>("dtype");
        QTest::newRow("bfloat16") << "bfloat16";
        QTest::newRow("float32") << "float32";
    }

    void rewriteTracedNewGelu()
    {
        QFETCH(QString, dtype);
        const auto py = python();
        if (py.isEmpty())
            QSKIP("no Python with torch to trace the model (install python3-torch)");
        std::string why;
        auto module = traced(py, readText(KFORGE_SOURCE_DIR "/tests/new_gelu_block.py"), why, {dtype});
        QVERIFY2(why.empty(), why.c_str());
        auto clone = module.clone();
        QCOMPARE(runtime::rewriteFusedPatterns(clone), 2);
        std::ostringstream os;
        os << *clone.get_method("forward").graph();
        QCOMPARE(callsIn(os.str(), "kforge::gelu_new"), 1);
        QCOMPARE(callsIn(os.str(), "kforge::gelu_new_mul"), 1);
        QCOMPARE(callsIn(os.str(), "aten::tanh"), 0);
        torch::NoGradGuard noGrad;
        const auto x = (at::randn({2, 16, 64}) * 3).to(dtype == QStringLiteral("float32") ? at::kFloat : at::kBFloat16);
        QVERIFY(at::equal(module.forward({x}).toTensor(), clone.forward({x}).toTensor()));
    }

    // T5's LayerNorm traced: both norms rewritten (the second with the residual add before it) in bfloat16,
    // where the trace casts back to the weight's dtype, and in float32, where it does not cast; same bits.
    void rewriteTracedT5Norm_data()
    {
        QTest::addColumn<QString>("dtype");
        QTest::newRow("bfloat16") << "bfloat16";
        QTest::newRow("float32") << "float32";
    }

    void rewriteTracedT5Norm()
    {
        QFETCH(QString, dtype);
        const auto py = python();
        if (py.isEmpty())
            QSKIP("no Python with torch to trace the model (install python3-torch)");
        const auto file = path(("t5norm-" + dtype.toStdString() + ".pt").c_str());
        writeText(path("t5norm.py"), kT5NormTrace);
        const auto r = run(py, QStringList{QString::fromStdString(path("t5norm.py")), QString::fromStdString(file), dtype}, 120000);
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        auto module = torch::jit::load(file);
        auto clone = module.clone();
        QCOMPARE(runtime::rewriteFusedPatterns(clone), 2);
        std::ostringstream os;
        os << *clone.get_method("forward").graph();
        QCOMPARE(callsIn(os.str(), "kforge::rms_norm_cast_to"), 1);
        QCOMPARE(callsIn(os.str(), "kforge::add_rms_norm_cast_to"), 1);
        QCOMPARE(callsIn(os.str(), "aten::rsqrt"), 0);
        torch::NoGradGuard noGrad;
        const auto x = at::randn({2, 16, 64}).to(dtype == QStringLiteral("bfloat16") ? at::kBFloat16 : at::kFloat);
        const auto want = module.forward({x}).toTuple();
        const auto got = clone.forward({x}).toTuple();
        QVERIFY(at::equal(want->elements()[0].toTensor(), got->elements()[0].toTensor()));
        QVERIFY(at::equal(want->elements()[1].toTensor(), got->elements()[1].toTensor()));
    }

    // The float64 copy the references judge by: a traced bfloat16 layer's dtype constants (its casts back, the
    // softmax's float32, the mask's dtype) made float64 with its parameters, so it runs in float64 on float64
    // inputs; the module it was cloned from is untouched.
    void float64CopyOfATrace()
    {
        const auto py = python();
        if (py.isEmpty())
            QSKIP("no Python with torch to trace the model (install python3-torch)");
        std::string why;
        auto module = traced(py, kLlamaLayerTrace, why);
        QVERIFY2(why.empty(), why.c_str());
        torch::NoGradGuard noGrad;
        const auto x = at::randn({2, 64, 256}).to(at::kBFloat16);
        const auto am = at::ge(at::arange(64).unsqueeze(0), at::tensor({int64_t(0), int64_t(24)}).unsqueeze(1)).to(at::kLong);
        const auto before = module.forward({x, am}).toTensor();
        auto plain = module.clone();
        plain.to(at::kDouble);
        QVERIFY_THROWS_EXCEPTION(std::exception, plain.forward({x.to(at::kDouble), am})); // the constants' casts meet float64
        auto copy = module.clone();
        QVERIFY(worker::retargetFloatingDtypes(copy, at::kDouble) >= 4); // casts back, softmax, mask, rotary tables
        copy.to(at::kDouble);
        const auto y = copy.forward({x.to(at::kDouble), am}).toTensor();
        QCOMPARE(y.scalar_type(), at::kDouble);
        QVERIFY(at::allclose(y, before.to(at::kDouble), 0.05, 0.05)); // bfloat16's rounding from the float64 result
        QVERIFY(at::equal(module.forward({x, am}).toTensor(), before));
    }

    // The decoder block's chains in its TorchScript module: both RMS norms, both rotary embeddings, attention's softmax and the SiLU
    // gate are rewritten, and the outputs keep their bits. A CPU pack with a kernel for one fused operator
    // at the decoder's shape takes its calls in kforge-cli run --compare, the outputs within the guard's
    // bounds of the model's.
    void fusedDecoderChains_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("shape");
        QTest::addColumn<int>("calls"); // per forward
        QTest::newRow("silu_mul") << "silu_mul" << "rows=64,cols=344" << 1;
        QTest::newRow("rms_norm_cast") << "rms_norm_cast" << "rows=64,cols=128" << 1;
        QTest::newRow("add_rms_norm_cast") << "add_rms_norm_cast" << "rows=64,cols=128" << 1;
        QTest::newRow("rotary_embedding") << "rotary_embedding" << "b=2,s=32,h=4,d=32" << 2;
    }

    void fusedDecoderChains()
    {
        QFETCH(QString, family);
        QFETCH(QString, shape);
        QFETCH(int, calls);
        const auto worker = QStringLiteral(KFORGE_WORKER_PATH);
        if (!QFile::exists(QString::fromStdString(path("fdec.json")))) {
            const auto made = cli({QStringLiteral("model"), QStringLiteral("decoder"), QStringLiteral("--batch=2"), QStringLiteral("--seq=32"),
                                   QStringLiteral("--hidden=128"), QStringLiteral("--heads=4"), QStringLiteral("--intermediate=344"),
                                   QStringLiteral("--out"), QString::fromStdString(path("fdec.json")), QStringLiteral("--worker"), worker});
            QVERIFY2(made.code == 0, qPrintable(made.out + made.err));
        }
        auto module = torch::jit::load(path("fdec.pt"));
        auto clone = module.clone();
        QCOMPARE(runtime::rewriteFusedPatterns(clone), 6);
        std::ostringstream os;
        os << *clone.get_method("forward").graph();
        const auto graph = os.str();
        for (const char *op : {"kforge::silu_mul", "kforge::rms_norm_cast", "kforge::add_rms_norm_cast", "kforge::scaled_masked_softmax",
                               "kforge::rotary_embedding"})
            QVERIFY2(graph.find(op) != std::string::npos, graph.c_str());
        for (const char *op : {"aten::silu", "aten::rsqrt", "aten::softmax", "aten::cat", "aten::neg"})
            QVERIFY2(graph.find(op) == std::string::npos, graph.c_str());
        {
            torch::NoGradGuard noGrad;
            const auto x = at::randn({2, 32, 128});
            QVERIFY(at::equal(module.forward({x}).toTensor(), clone.forward({x}).toTensor()));
        }

        const auto f = family.toStdString();
        const auto session = QString::fromStdString(path((f + ".kforge").c_str()));
        const auto search = cli({QStringLiteral("search"), QStringLiteral("--family"), family, QStringLiteral("--shape"), shape,
                                 QStringLiteral("--backend"), QStringLiteral("cpu"), QStringLiteral("--nodes"), QStringLiteral("3"),
                                 QStringLiteral("--samples"), QStringLiteral("5"), QStringLiteral("--session"), session, QStringLiteral("--worker"),
                                 worker});
        QVERIFY2(search.code == 0, qPrintable(search.out + search.err));
        const auto pack = path((f + "-pack").c_str()), report = path((f + "-run.json").c_str());
        const auto exported = exportBest(session, pack);
        QVERIFY2(exported.code == 0, qPrintable(exported.out + exported.err));
        const auto r = cli({QStringLiteral("run"), QString::fromStdString(path("fdec.json")), QStringLiteral("--pack"), QString::fromStdString(pack),
                            QStringLiteral("--compare"), QStringLiteral("--iters"), QStringLiteral("3"), QStringLiteral("--json"),
                            QString::fromStdString(report), QStringLiteral("--worker"), worker});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        const auto j = nlohmann::json::parse(readText(report));
        QVERIFY2(j.at("outputs_match").get<bool>(), j.dump().c_str());
        QCOMPARE(j.at("fused_chains").get<int>(), 6);
        const auto &c = j.at("counters").at("kforge::" + f);
        QVERIFY2(c.at("taken").get<int64_t>() == int64_t(3 * calls), c.dump().c_str());
    }

    // kforge-cli run --compare: the worker runs the model without and with the pack, interleaved.
    void runCompare()
    {
        const auto py = python();
        if (py.isEmpty())
            QSKIP("no Python with torch to make the TorchScript model (install python3-torch)");
        writeText(path("model.py"), kModel);
        const auto made = run(py, {QString::fromStdString(path("model.py")), QString::fromStdString(path("m.pt"))}, 120000);
        QVERIFY2(made.code == 0, qPrintable(made.err));
        writeText(path("m.json"), nlohmann::json{{"kforge_workload", 1}, {"name", "m"}, {"model", {{"kind", "torchscript"}, {"path", "m.pt"}}},
                                                 {"inputs", {{"seed", 3}, {"tensors", {{{"shape", {2, kRows / 2, kCols}}, {"dtype", "float32"}}}}}}}
                                      .dump());
        const auto r = cli({QStringLiteral("run"), QString::fromStdString(path("m.json")), QStringLiteral("--pack"), QString::fromStdString(m_pack),
                            QStringLiteral("--compare"), QStringLiteral("--iters"), QStringLiteral("3"), QStringLiteral("--json"),
                            QString::fromStdString(path("run.json")), QStringLiteral("--worker"), QStringLiteral(KFORGE_WORKER_PATH)});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        QVERIFY2(r.out.contains(QStringLiteral("outputs match")), qPrintable(r.out));
        const auto report = nlohmann::json::parse(readText(path("run.json")));
        QCOMPARE(report.at("iters").get<int>(), 3);
        QVERIFY(report.at("outputs_match").get<bool>());
        QCOMPARE(report.at("outputs").size(), size_t(2));
        for (const char *side : {"without", "with"}) {
            QCOMPARE(report.at(side).at("samples_ms").size(), size_t(3));
            QVERIFY2(report.at(side).at("median_ms").get<double>() > 0, report.dump().c_str());
        }
        // Per timed run: the covered softmax took the kernel, the 256-row one fell back on its shape.
        const auto &c = report.at("counters").at("aten::_softmax");
        QCOMPARE(c.at("taken").get<int64_t>(), int64_t(3));
        QCOMPARE(c.at("fell_back").get<int64_t>(), int64_t(3));
        QCOMPARE(c.at("why").at("shape").get<int64_t>(), int64_t(3));
        QCOMPARE(report.at("executor").get<std::string>(), std::string("as_written"));

        // TorchScript's own executor gives the same outputs and counters.
        const auto d = cli({QStringLiteral("run"), QString::fromStdString(path("m.json")), QStringLiteral("--pack"), QString::fromStdString(m_pack),
                            QStringLiteral("--compare"), QStringLiteral("--iters"), QStringLiteral("2"), QStringLiteral("--executor"),
                            QStringLiteral("default"), QStringLiteral("--json"), QString::fromStdString(path("run-default.json")),
                            QStringLiteral("--worker"), QStringLiteral(KFORGE_WORKER_PATH)});
        QVERIFY2(d.code == 0, qPrintable(d.out + d.err));
        QVERIFY2(d.out.contains(QStringLiteral("TorchScript's default executor")), qPrintable(d.out));
        const auto dr = nlohmann::json::parse(readText(path("run-default.json")));
        QCOMPARE(dr.at("executor").get<std::string>(), std::string("default"));
        QCOMPARE(dr.at("counters").at("aten::_softmax").at("taken").get<int64_t>(), int64_t(2));
        const auto bad = cli({QStringLiteral("run"), QString::fromStdString(path("m.json")), QStringLiteral("--pack"), QString::fromStdString(m_pack),
                              QStringLiteral("--compare"), QStringLiteral("--executor"), QStringLiteral("fused")});
        QCOMPARE(bad.code, 2);
        QVERIFY2(bad.err.contains(QStringLiteral("--executor takes as-written or default, not 'fused'")), qPrintable(bad.err));
    }

    // kforge-cli profile WORKLOAD --pack PACK: the model profiled again with the pack's kernels, beside its
    // own profile: the covered softmax pattern is marked as the pack's, the workload file is left alone.
    void profileWithPack()
    {
        if (!QFile::exists(QString::fromStdString(path("m.json"))))
            QSKIP("runCompare made no model (no Python with torch)");
        const auto worker = QStringLiteral(KFORGE_WORKER_PATH);
        const auto first = cli({QStringLiteral("profile"), QString::fromStdString(path("m.json")), QStringLiteral("--device"), QStringLiteral("cpu"),
                                QStringLiteral("--worker"), worker});
        QVERIFY2(first.code == 0, qPrintable(first.out + first.err));
        const auto profiled = readText(path("m.json"));
        const auto r = cli({QStringLiteral("profile"), QString::fromStdString(path("m.json")), QStringLiteral("--device"), QStringLiteral("cpu"),
                            QStringLiteral("--pack"), QString::fromStdString(m_pack), QStringLiteral("--runs"), QStringLiteral("2"),
                            QStringLiteral("--worker"), worker});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        QCOMPARE(readText(path("m.json")), profiled); // the workload's own profile is kept
        const auto with = loadWorkloadFile(path("m.with-pack.json"));
        QVERIFY(with.cards.empty());
        QVERIFY(!with.calls.empty());
        // Two runs: each the covered softmax (kernel) and the 256-row one (fell back).
        QVERIFY2(r.out.contains(QStringLiteral("aten::_softmax: 2 calls took the pack's kernel, 2 fell back")), qPrintable(r.out));
        const auto before = loadWorkloadFile(path("m.json"));
        const auto cmp = compareProfiles(before, with, {"aten::_softmax"});
        int marked = 0;
        for (const auto &c : cmp.changes)
            if (c.byPack) {
                ++marked;
                QCOMPARE(c.op, std::string("aten::softmax.int")); // the model's call; the pack's _softmax is inside it
                QVERIFY(c.beforeUs > 0 && c.afterUs > 0);
                QCOMPARE(c.callsAfter, 2 * c.callsBefore);
            }
        QCOMPARE(marked, 2); // the two softmax shapes are two patterns
        QVERIFY2(r.out.contains(QStringLiteral("top level:")), qPrintable(r.out));

        const auto refused = cli({QStringLiteral("profile"), QStringLiteral("builtin:decoder"), QStringLiteral("--pack"), QString::fromStdString(m_pack)});
        QCOMPARE(refused.code, 2);
        QVERIFY2(refused.err.contains(QStringLiteral("not builtin:NAME")), qPrintable(refused.err));
        const auto missing = cli({QStringLiteral("profile"), QString::fromStdString(path("m.json")), QStringLiteral("--pack"),
                                  QString::fromStdString(path("no-pack"))});
        QCOMPARE(missing.code, 2);
        QVERIFY2(QFile::exists(QString::fromStdString(path("m.json"))), "a refused pack must leave the workload");
    }
};

QTEST_GUILESS_MAIN(TestPack)
#include "tst_pack.moc"
