// The NVRTC compile path of the cuda backend, without a GPU: real kernels compiled to sm_90 cubins,
// ptxas's resource report parsed, the disk cache, compile errors in the log, and the static checks
// that reject device launches, clock reads and persistent device globals.
#include <QTemporaryDir>
#include <QtTest>

#include "gpu/guard_cases.h"
#include "ops/scan_ops.h"
#include "proposers/template_library.h"
#include "proposers/templates/cuda_prelude.h"
#include "worker/cuda/launch_plan.h"
#include "worker/cuda/nvrtc_compiler.h"
#include "worker/cuda/source_checks.h"

using namespace kforge;
using namespace kforge::worker;

namespace {

const char *kSaxpy = R"(
extern "C" __global__ void saxpy(const float *x, float *y, float a, long long n)
{
    __shared__ float tile[256];
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.f;
    __syncthreads();
    if (i < n) y[i] = a * tile[255 - threadIdx.x] + y[i];
}
)";

bool hasCheck(const std::vector<StaticFinding> &fs, const std::string &check)
{
    for (const auto &f : fs)
        if (f.check == check)
            return true;
    return false;
}

} // namespace

class TestNvrtc : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_cache;

private slots:
    void compilesToSm90AndParsesResources()
    {
        NvrtcCompiler nv(m_cache.path().toStdString());
        const auto b = nv.compile(kSaxpy, "sm_90");
        QVERIFY2(b.report.ok, b.report.log.c_str());
        QVERIFY(!b.report.cached);
        QCOMPARE(b.report.target, std::string("sm_90"));
        QVERIFY(b.report.millis > 0);
        QVERIFY(b.cubin.size() > 1000);
        QVERIFY(b.cubin.compare(0, 4, "\x7f" "ELF") == 0); // a cubin is an ELF image
        QVERIFY(b.ptx.find(".target sm_90") != std::string::npos);
        const auto *k = findKernel(b, "saxpy");
        QVERIFY2(k, b.report.log.c_str());
        QVERIFY(k->registers > 0);
        QCOMPARE(k->sharedBytes, int64_t(1024));
        QCOMPARE(k->barriers, 1);
        QCOMPARE(k->spillStores, int64_t(0));
        QCOMPARE(b.globalBytes, int64_t(0));
        qInfo("saxpy: %d registers, %lld bytes smem, compiled in %.0f ms with NVRTC %s", k->registers, (long long)k->sharedBytes,
              b.report.millis, NvrtcCompiler::version().c_str());
    }

    void secondCompileHitsTheCache()
    {
        NvrtcCompiler nv(m_cache.path().toStdString());
        const auto first = nv.compile(std::string(kSaxpy) + "// variant for the cache test\n", "sm_90");
        QVERIFY(first.report.ok && !first.report.cached);
        const auto second = nv.compile(std::string(kSaxpy) + "// variant for the cache test\n", "sm_90");
        QVERIFY(second.report.ok);
        QVERIFY(second.report.cached);
        QCOMPARE(second.cubin, first.cubin);
        QCOMPARE(second.kernels.size(), first.kernels.size());
        QCOMPARE(second.kernels[0].registers, first.kernels[0].registers);
        QVERIFY(second.report.millis < first.report.millis);
        // Another architecture is another entry.
        const auto other = nv.compile(std::string(kSaxpy) + "// variant for the cache test\n", "sm_80");
        QVERIFY(other.report.ok && !other.report.cached);
    }

    void stackFrameAndSpillsAreParsed()
    {
        // A register array indexed at run time goes to local memory: a stack frame.
        const char *src = R"(
extern "C" __global__ void local_array(const float *x, float *y, int k)
{
    float a[64];
    for (int i = 0; i < 64; ++i) a[i] = x[(threadIdx.x * i) % 1024];
    y[threadIdx.x] = a[k & 63];
}
)";
        NvrtcCompiler nv(m_cache.path().toStdString());
        const auto b = nv.compile(src, "sm_90");
        QVERIFY2(b.report.ok, b.report.log.c_str());
        const auto *k = findKernel(b, "local_array");
        QVERIFY(k);
        QVERIFY2(k->stackBytes >= 256, b.report.log.c_str());
    }

    void ptxasLogParsing()
    {
        const std::string log = "ptxas info    : 8 bytes gmem\n"
                                "ptxas info    : Compiling entry function 'a' for 'sm_90'\n"
                                "ptxas info    : Function properties for a\n"
                                "ptxas         .     16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
                                "ptxas info    : Used 40 registers, used 1 barriers, 2048 bytes smem, 380 bytes cmem[0]\n"
                                "ptxas info    : Compiling entry function 'b' for 'sm_90'\n"
                                "ptxas info    : Function properties for b\n"
                                "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                                "ptxas info    : Used 8 registers, used 0 barriers\n";
        int64_t gmem = 0;
        const auto ks = parsePtxasLog(log, &gmem);
        QCOMPARE(ks.size(), size_t(2));
        QCOMPARE(gmem, int64_t(8));
        QCOMPARE(ks[0].name, std::string("a"));
        QCOMPARE(ks[0].registers, 40);
        QCOMPARE(ks[0].stackBytes, int64_t(16));
        QCOMPARE(ks[0].spillStores, int64_t(8));
        QCOMPARE(ks[0].spillLoads, int64_t(12));
        QCOMPARE(ks[0].sharedBytes, int64_t(2048));
        QCOMPARE(ks[0].constBytes, int64_t(380));
        QCOMPARE(ks[1].registers, 8);
        QCOMPARE(ks[1].sharedBytes, int64_t(0));
    }

    void compileErrorSurfacesInTheLog()
    {
        NvrtcCompiler nv(m_cache.path().toStdString());
        const auto b = nv.compile("extern \"C\" __global__ void broken(float *y) { y[0] = undeclared_rows; }\n", "sm_90");
        QVERIFY(!b.report.ok);
        QVERIFY(b.findings.empty());
        QVERIFY2(b.report.log.find("undeclared_rows") != std::string::npos, b.report.log.c_str());
        QVERIFY2(b.report.log.find("candidate.cu(1)") != std::string::npos, b.report.log.c_str());
        // Failures are not cached: the same source fails again, with its log.
        const auto again = nv.compile("extern \"C\" __global__ void broken(float *y) { y[0] = undeclared_rows; }\n", "sm_90");
        QVERIFY(!again.report.ok && !again.report.cached);
        QVERIFY(again.report.log.find("undeclared_rows") != std::string::npos);
    }

    void staticChecks_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("check"); // empty: no finding
        QTest::addColumn<int>("line");
        auto row = [](const char *name, const char *src, const char *check, int line) {
            QTest::newRow(name) << QString::fromUtf8(src) << QString::fromUtf8(check) << line;
        };
        row("device launch", "__global__ void c(float *y) {}\n__global__ void p(float *y) { c<<<1, 32>>>(y); }\n", "device_launch", 2);
        row("cudaLaunchDevice", "__global__ void p(void *b) {\n  cudaLaunchDevice(0, b, dim3(1), dim3(1), 0, 0);\n}\n", "device_launch", 2);
        row("launch in a macro", "#define GO(k) k<<<1,1>>>()\n__global__ void p() {}\n", "device_launch", 1);
        row("clock()", "__global__ void k(float *y) { y[0] = clock(); }\n", "clock_read", 1);
        row("clock64()", "__global__ void k(float *y) {\n\n  long long t = clock64 ();\n  y[0] = t;\n}\n", "clock_read", 3);
        row("globaltimer asm", "__global__ void k(unsigned long long *y) { asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(y[0])); }\n",
            "clock_read", 0); // inside a string: found in the PTX
        row("nanosleep is allowed", "__global__ void k(float *y) { __nanosleep(100); y[0] = 1.f; }\n", "", 0);
        row("mutable __device__ global", "__device__ float cache[1024];\n__global__ void k(float *y) { y[0] = cache[0]; }\n",
            "device_global", 1);
        row("__device__ global with initializer", "\n__device__ int calls = 0;\n__global__ void k(int *y) { y[0] = ++calls; }\n",
            "device_global", 2);
        row("__managed__", "__managed__ int flag;\n__global__ void k(int *y) { y[0] = flag; }\n", "device_global", 1);
        row("global in a namespace", "namespace kf { __device__ float last; }\n__global__ void k(float *y) { y[0] = kf::last; }\n",
            "device_global", 1);
        row("global in extern C block", "extern \"C\" {\n__device__ float last;\n__global__ void k(float *y) { y[0] = last; }\n}\n",
            "device_global", 2);
        row("pointer to const is mutable", "__device__ const float *p;\n__global__ void k(float *y) { y[0] = *p; }\n", "device_global", 1);
        row("static local", "__global__ void k(int *y) {\n  static int n;\n  y[0] = ++n;\n}\n", "device_global", 2);
        row("global hidden by a macro", "#define DEV __device__\nDEV float last;\n__global__ void k(float *y) { y[0] = last; }\n",
            "device_global", 0); // only the PTX shows it
        row("const __device__ table is global memory (a cast writes it)",
            "__device__ const float tbl[4] = {1, 2, 3, 4};\n__global__ void k(float *y) { y[0] = tbl[threadIdx.x & 3]; }\n", "device_global", 1);
        row("mutable global shares a const one's name",
            "__constant__ float k1 = 2.f;\nnamespace n { __device__ float k1; }\n__global__ void k(float *y) { y[0] = n::k1 * k1; }\n",
            "device_global", 2);
        row("a macro hides the clock", "#define T clock64\n__global__ void k(long long *y) { y[0] = T(); }\n", "clock_read", 0);
        row("a macro hides a device launch", "#define L(k) k<<<1, 1>>>\n__global__ void c() {}\n__global__ void p() { L(c)(); }\n",
            "device_launch", 1);
        row("includes a host file", "#include \"/etc/passwd\"\n__global__ void k(float *y) { y[0] = 1; }\n", "include", 1);
        row("includes a host header", "\n#include <stdio.h>\n__global__ void k(float *y) { y[0] = 1; }\n", "include", 2);
        row("includes through a macro", "#define H \"/etc/shadow\"\n#include H\n__global__ void k(float *y) { y[0] = 1; }\n", "include", 2);
        row("toolkit headers are fine", "#include <cuda_fp16.h>\n__global__ void k(__half *y) { y[0] = __float2half(1.f); }\n", "", 0);
        row("__constant__ is fine", "__constant__ float c[4];\n__global__ void k(float *y) { y[0] = c[0]; }\n", "", 0);
        row("__device__ functions are fine", "__device__ __forceinline__ float sq(float v) { return v * v; }\n__global__ void k(float *y) { y[0] = sq(y[0]); }\n",
            "", 0);
        row("static const local is fine", "__global__ void k(float *y) { static const float s = 2.f; y[0] *= s; }\n", "", 0);
        row("__shared__ is fine", "__global__ void k(float *y) { __shared__ float s[32]; s[threadIdx.x] = 1; __syncthreads(); y[0] = s[0]; }\n",
            "", 0);
        row("words in comments are ignored", "// clock64() and <<< and __device__ int x;\n__global__ void k(float *y) { y[0] = 1; }\n", "", 0);
    }

    void staticChecks()
    {
        QFETCH(QString, source);
        QFETCH(QString, check);
        QFETCH(int, line);
        NvrtcCompiler nv(m_cache.path().toStdString());
        const auto b = nv.compile(source.toStdString(), "sm_90");
        const std::string all = describeFindings(b.findings) + "\n" + b.report.log;
        if (check.isEmpty()) {
            QVERIFY2(b.findings.empty(), all.c_str());
            QVERIFY2(b.report.ok, all.c_str());
            return;
        }
        QVERIFY2(hasCheck(b.findings, check.toStdString()), all.c_str());
        QVERIFY(!b.report.ok);
        QCOMPARE(b.findings.front().line, line);
        QVERIFY(b.report.log.find(check.toStdString()) != std::string::npos);
    }

    void everyTestKernelCompilesOrIsFlagged_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("expect"); // "ok", "compile_error" or a static check
        for (const char *f : {"good_softmax.cu", "stale_output.cu", "no_work.cu", "first_row_only.cu", "fixed_shape.cu", "one_shape_only.cu",
                              "race.cu", "hang.cu", "oob_write.cu", "nan_output.cu", "modifies_input.cu", "control_relu.cu", "control_sum.cu"})
            QTest::newRow(f) << QString::fromUtf8(f) << QStringLiteral("ok");
        QTest::newRow("caches_result.cu") << QStringLiteral("caches_result.cu") << QStringLiteral("device_global");
        QTest::newRow("clock_read.cu") << QStringLiteral("clock_read.cu") << QStringLiteral("clock_read");
        QTest::newRow("device_launch.cu") << QStringLiteral("device_launch.cu") << QStringLiteral("device_launch");
        QTest::newRow("compile_error.cu") << QStringLiteral("compile_error.cu") << QStringLiteral("compile_error");
    }

    void everyTestKernelCompilesOrIsFlagged()
    {
        QFETCH(QString, file);
        QFETCH(QString, expect);
        NvrtcCompiler nv(m_cache.path().toStdString());
        for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
            const auto cand = test::cudaKernel(file.toStdString(), dt);
            QVERIFY(cand.launch.contains("kernels"));
            const auto b = nv.compile(cand.source, "sm_90");
            if (expect == QStringLiteral("ok")) {
                QVERIFY2(b.report.ok, b.report.log.c_str());
                for (const auto &k : cand.launch["kernels"])
                    QVERIFY2(findKernel(b, k["name"].get<std::string>()), k.dump().c_str());
            } else if (expect == QStringLiteral("compile_error")) {
                QVERIFY(!b.report.ok && b.findings.empty());
            } else {
                QVERIFY2(hasCheck(b.findings, expect.toStdString()), describeFindings(b.findings).c_str());
            }
        }
    }

    void everyCudaTemplateCompiles_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("shape");
        const std::vector<std::pair<const char *, const char *>> cases = {
            {"softmax", "rows=16384,cols=4096"}, {"softmax", "rows=4096,cols=32000"}, {"log_softmax", "rows=1024,cols=262144"},
            {"layer_norm", "rows=16384,cols=8192"}, {"rms_norm", "rows=65536,cols=2048"}, {"group_norm", "n=64,c=128,hw=16384,groups=32"},
            {"gelu", "rows=16384,cols=4096"}, {"gelu_tanh", "rows=16384,cols=4096"}, {"silu", "rows=16384,cols=4096"},
            {"relu", "rows=16384,cols=4096"}, {"add_gelu", "rows=16384,cols=4096"}, {"sum", "rows=16384,cols=4096"},
            {"mean", "rows=16384,cols=4096"}, {"max", "rows=16384,cols=4096"}, {"argmax", "rows=16384,cols=4096"},
            {"sigmoid", "rows=4096,cols=4095"}, {"leaky_relu", "rows=16384,cols=4096"}, {"elu", "rows=16384,cols=4096"},
            {"selu", "rows=16384,cols=4096"}, {"celu", "rows=16384,cols=4096"}, {"hardtanh", "rows=16384,cols=4096"},
            {"relu6", "rows=16384,cols=4096"}, {"hardsigmoid", "rows=16384,cols=4096"}, {"hardswish", "rows=16384,cols=4096"},
            {"softplus", "rows=16384,cols=4096"}, {"mish", "rows=16384,cols=4096"}, {"tanh", "rows=16384,cols=4096"},
            {"softmax", "rows=262144,cols=32"}, {"log_softmax", "rows=65536,cols=63"}, {"layer_norm", "rows=262144,cols=48"},
            {"rms_norm", "rows=65536,cols=33"}, {"silu_mul", "rows=16384,cols=11008"}, {"rms_norm_cast", "rows=16384,cols=4096"},
            {"cumsum", "rows=4096,cols=4096"}, {"cross_entropy", "rows=4096,vocab=128256"},
            {"sum_dim", "outer=128,dim=4096,inner=4095"}, {"mean_dim", "outer=16,dim=256,inner=256"}, {"max_dim", "outer=128,dim=4096,inner=4095"},
            {"min_dim", "outer=2,dim=100000,inner=8"}, {"argmax_dim", "outer=128,dim=4096,inner=4095"}, {"argmin_dim", "outer=1,dim=65536,inner=64"},
            {"prod_dim", "outer=16,dim=256,inner=256"}, {"softmax_dim", "outer=16,dim=64,inner=4096"}, {"log_softmax_dim", "outer=8,dim=5000,inner=512"},
            {"rms_norm_dim", "outer=112,dim=64,inner=262144"}, {"l2_norm_dim", "outer=64,dim=256,inner=1024"},
            {"l2_norm_dim", "outer=32768,dim=65535,inner=1"}, {"rms_norm_dim", "outer=4096,dim=4096,inner=1"},
            {"softmax_dim", "outer=1024,dim=8192,inner=1"}, {"log_softmax_dim", "outer=64,dim=5001,inner=1"},
            {"l1_norm_dim", "outer=32768,dim=65535,inner=1"}, {"l1_norm_dim", "outer=16,dim=64,inner=4096"},
            {"argmax_dim", "outer=4,dim=1024,inner=4096"}, {"sum_dim", "outer=64,dim=512,inner=8192"},
            {"instance_norm", "n=112,c=64,hw=262144"}, {"instance_norm", "n=112,c=8,hw=2097152"}, {"rms_norm_dim", "outer=64,dim=524288,inner=1"},
            {"scaled_softmax", "rows=262144,cols=4096"},
            {"batch_norm", "n=64,c=64,hw=262144"}, {"batch_norm_affine", "n=8,c=3,hw=1001"}, {"batch_norm_eval", "n=64,c=64,hw=262144"},
            {"batch_norm", "n=4096,c=16,hw=1"}, {"frobenius_norm", "rows=7168,cols=262144"}, {"frobenius_norm", "rows=33,cols=1001"},
            {"layer_norm", "rows=16,cols=4194304"}, {"rms_norm", "rows=64,cols=262147"}, {"group_norm", "n=1,c=64,hw=262144,groups=8"},
            {"scaled_masked_softmax", "rows=524288,cols=2048,mrows=2048"},
            // Attention over few tokens, a warp a row: ViT's 197 and CLIP's 77.
            {"scaled_softmax", "rows=151296,cols=197"}, {"scaled_masked_softmax", "rows=39424,cols=77,mrows=77"},
            {"add_rms_norm_cast", "rows=16384,cols=4096"}, {"add_rms_norm_cast", "rows=64,cols=262147"},
            // Gemma 3's norms (hidden 1152, heads of 256) and GELU gate.
            {"rms_norm_offset", "rows=2048,cols=1152"}, {"rms_norm_offset", "rows=16384,cols=256"}, {"add_rms_norm_offset", "rows=2048,cols=1152"}, {"add_rms_norm_cast", "rows=2048,cols=1152"},
            {"gelu_tanh_mul", "rows=2048,cols=6912"}, {"gelu_mul", "rows=2048,cols=6912"},
            // GPT-2 medium's MLP (4096 wide) and T5 v1.1 XL's gate (5120 wide), NewGELU written out
            {"gelu_new", "rows=4096,cols=4096"}, {"gelu_new_mul", "rows=1024,cols=5120"},
            {"quick_gelu", "rows=77,cols=3072"}, // CLIP ViT-L's text encoder MLP (77 tokens)
            {"rotary_embedding", "b=8,s=2048,h=32,d=128"}, {"rotary_embedding", "b=1,s=4097,h=40,d=80"},
            {"rotary_embedding_batched", "b=4,s=4096,h=32,d=128"},
            {"mse_loss", "rows=32768,cols=32768"}, {"mse_loss_sum", "rows=4096,cols=4095"}, {"l1_loss", "rows=4096,cols=4095"},
            {"smooth_l1_loss", "rows=32768,cols=32768"}, {"huber_loss", "rows=4096,cols=4095"},
            {"kl_div", "rows=16384,cols=16384"}, {"soft_margin_loss", "rows=32768,cols=32768"}, {"soft_margin_loss", "rows=7,cols=33"},
            {"triplet_margin_loss", "rows=32768,cols=8192"}, {"triplet_margin_loss", "rows=65536,cols=33"},
            // Widths of real models (16-bit norms hold 32 values a thread; 768 fills the registers only
            // partly), and a loss of few rows. (Not here: 12288-wide float32 layer norm, whose pipe seed
            // spills 32-64 bytes and still beats streaming from shared memory; see DESIGN.md.)
            {"rms_norm", "rows=2048,cols=16384"}, {"layer_norm", "rows=8192,cols=768"}, {"cross_entropy", "rows=64,vocab=128256"},
            {"rms_norm", "rows=4096,cols=5120"}, {"log_softmax", "rows=4096,cols=3000"}};
        for (const auto &[f, shape] : cases)
            QTest::newRow((std::string(f) + " " + shape).c_str()) << QString::fromLatin1(f) << QString::fromLatin1(shape);
    }

    void everyCudaTemplateCompiles()
    {
        // The seed of every CUDA template, in every dtype, compiles for sm_90 without local memory (spills or stack), passes
        // the static checks, and its launch plan resolves at the card's shape and its held-out shapes
        // and names kernels the build has.
        QFETCH(QString, family);
        QFETCH(QString, shape);
        const ShapeBindings b = parseShape(shape.toStdString());
        NvrtcCompiler nv(m_cache.path().toStdString());
        int compiled = 0;
        std::string spills;
        for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
            const auto card = makeCard(family.toStdString(), b, dt);
            for (const auto *t : TemplateLibrary::builtin().forFamily(card.family, "cuda")) {
                const auto p = t->seed(card);
                if (!t->valid(p, card))
                    continue;
                const std::string what = t->id + " " + p.dump() + " " + dtypeName(dt);
                const auto build = nv.compile(t->render(p, card), "sm_90");
                QVERIFY2(build.report.ok, (what + "\n" + build.report.log + describeFindings(build.findings)).c_str());
                const auto plan = parseLaunchPlan(t->launch(p, card), card);
                for (const auto &k : plan.kernels) {
                    const auto *res = findKernel(build, k.name);
                    QVERIFY2(res, (what + ": no kernel " + k.name).c_str());
                    if (res->spillStores > 0 || res->stackBytes > 0)
                        spills += what + ": " + k.name + " uses local memory (" + std::to_string(res->spillStores) + " bytes of spills, "
                                  + std::to_string(res->stackBytes) + " bytes of stack)\n";
                }
                resolveLaunchPlan(plan, card.shape);
                for (const auto &held : card.heldOutShapes)
                    resolveLaunchPlan(plan, held);
                ++compiled;
            }
        }
        QVERIFY2(spills.empty(), spills.c_str());
        QVERIFY(compiled >= 3);
    }

    // The scan kernels serve every scan family (core/ops/scan_ops.h): each family's block-per-row and
    // look-back variants compile at every point of their spaces but the block size (the seed's), in every
    // dtype, without local memory or static-check findings, the masked ones with a bool mask (bytes) and
    // with a mask of x's dtype; the seed is among them and its plan resolves at KernelBench's 32768 x 32768
    // and the held-out shapes.
    void scanVariantsCompile_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<bool>("floatMask");
        for (const auto &op : scanOps())
            QTest::newRow(op.family.c_str()) << QString::fromStdString(op.family) << false;
        QTest::newRow("masked_cumsum, mask of x's dtype") << QStringLiteral("masked_cumsum") << true;
    }

    void scanVariantsCompile()
    {
        QFETCH(QString, family);
        QFETCH(bool, floatMask);
        NvrtcCompiler nv(m_cache.path().toStdString());
        const auto templates = TemplateLibrary::builtin().forFamily(family.toStdString(), "cuda");
        QCOMPARE(templates.size(), size_t(2));
        std::map<std::string, int> compiled, seeds;
        for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
            auto card = makeCard(family.toStdString(), {{"rows", 32768}, {"cols", 32768}}, dt);
            if (floatMask)
                card.inputs.at(1).dtype = dt;
            for (const auto *t : templates) {
                const auto seed = t->seed(card);
                std::vector<nlohmann::json> points = {{{"block", seed.at("block")}}};
                for (const auto &[name, values] : t->space) {
                    if (name == "block")
                        continue;
                    std::vector<nlohmann::json> grown;
                    for (const auto &p : points)
                        for (const auto &v : values) {
                            auto q = p;
                            q[name] = v;
                            grown.push_back(q);
                        }
                    points = grown;
                }
                for (const auto &p : points) {
                    if (!t->valid(p, card))
                        continue;
                    seeds[t->id] += p == seed;
                    const std::string what = t->id + " " + p.dump() + " " + dtypeName(dt);
                    const auto source = t->render(p, card);
                    const int mask = card.inputs.size() < 2 ? 0 : card.inputs[1].dtype == DType::Bool ? 1 : 2;
                    QVERIFY2(source.find("#define SCAN_MASK " + std::to_string(mask) + "\n") != std::string::npos, what.c_str());
                    const auto scan = scanSource(source);
                    QVERIFY2(scan.findings.empty(), (what + ": " + describeFindings(scan.findings)).c_str());
                    const auto build = nv.compile(source, "sm_90");
                    QVERIFY2(build.report.ok, (what + "\n" + build.report.log + describeFindings(build.findings)).c_str());
                    const auto plan = parseLaunchPlan(t->launch(p, card), card);
                    for (const auto &k : plan.kernels) {
                        const auto *res = findKernel(build, k.name);
                        QVERIFY2(res, (what + ": no kernel " + k.name).c_str());
                        QVERIFY2(res->spillStores == 0 && res->stackBytes == 0, (what + ": " + k.name + " uses local memory").c_str());
                    }
                    resolveLaunchPlan(plan, card.shape);
                    for (const auto &held : card.heldOutShapes)
                        resolveLaunchPlan(plan, held);
                    ++compiled[t->id];
                }
            }
        }
        const auto f = family.toStdString();
        // Packs of up to 16 bytes: float32 up to 4 elements, 16-bit up to 8; look-back chunks of at most 16 per thread.
        QCOMPARE(compiled["cuda." + f + ".block_scan"], 2 * (3 + 4 + 4));
        QCOMPARE(compiled["cuda." + f + ".lookback"], 9 + 11 + 11);
        QCOMPARE(seeds["cuda." + f + ".block_scan"], 3);
        QCOMPARE(seeds["cuda." + f + ".lookback"], 3);
    }

    // A problem's fused pointwise card (two inputs, an expression with where, pow and max) compiles in
    // every dtype with its launch plan's four input pointers.
    void fusedPointwiseCardCompiles()
    {
        NvrtcCompiler nv(m_cache.path().toStdString());
        for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
            auto card = makeCard("add_gelu", {{"rows", 4096}, {"cols", 4095}}, dt);
            card.family = "pointwise";
            card.expression = "where(x > 0, x * residual, pow(x, 3) - max(residual, -1) / 2)";
            const auto templates = TemplateLibrary::builtin().forFamily("pointwise", "cuda");
            QCOMPARE(templates.size(), size_t(1));
            const auto *t = templates.front();
            const auto p = t->seed(card);
            QVERIFY(t->valid(p, card));
            const auto build = nv.compile(t->render(p, card), "sm_90");
            QVERIFY2(build.report.ok, build.report.log.c_str());
            const auto plan = parseLaunchPlan(t->launch(p, card), card);
            QCOMPARE(plan.kernels.at(0).args.size(), size_t(6));
            QVERIFY(findKernel(build, "kf_pointwise"));
            resolveLaunchPlan(plan, card.shape);
        }
    }

    // The fused loss cards of KernelBench's problems (hinge's targets one row broadcast over the rows, KL's
    // batchmean) compile in every dtype at the corners of the reduce template's space without local memory,
    // and their plans resolve; so does the triplet row kernel at every threads-per-row.
    void lossTemplatesCompileAcrossTheirSpace_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("expression");
        QTest::addColumn<bool>("perColumnTarget");
        QTest::newRow("hinge") << "loss_mean" << "max(1 - x0 * x1, 0)" << true;
        QTest::newRow("kl batchmean") << "loss_batchmean" << "where(x1 == 0, 0, x1 * log(x1)) - x1 * log(x0)" << false;
        QTest::newRow("mse sum") << "loss_sum" << "pow(x0 - x1, 2)" << false;
        QTest::newRow("triplet") << "triplet_margin_loss" << "max(0.5 + positive - negative, 0)" << false;
    }

    void lossTemplatesCompileAcrossTheirSpace()
    {
        QFETCH(QString, family);
        QFETCH(QString, expression);
        QFETCH(bool, perColumnTarget);
        NvrtcCompiler nv(m_cache.path().toStdString());
        const bool triplet = family == QStringLiteral("triplet_margin_loss");
        std::vector<nlohmann::json> points;
        if (triplet)
            for (int tpr : {32, 64, 256, 1024})
                for (const char *acc : {"double", "float"})
                    points.push_back({{"tpr", tpr}, {"rpb", tpr == 1024 ? 1 : 2}, {"vec", 8}, {"acc", acc}});
        else
            for (int unroll : {1, 4})
                for (int vec : {1, 8})
                    for (const char *acc : {"double", "float"})
                        points.push_back({{"block", unroll == 4 ? 1024 : 128}, {"vec", vec}, {"unroll", unroll}, {"bps", unroll == 4 ? 1 : 8}, {"acc", acc}});
        int compiled = 0;
        std::string spills;
        for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
            auto card = makeCard(triplet ? "triplet_margin_loss" : "mse_loss", {{"rows", 4096}, {"cols", 4095}}, dt);
            card.family = family.toStdString();
            card.expression = expression.toStdString();
            if (!triplet) {
                card.inputs[0].name = "x0";
                card.inputs[1].name = "x1";
                if (perColumnTarget)
                    card.inputs[1].dims = {"cols"};
            }
            const auto templates = TemplateLibrary::builtin().forFamily(card.family, "cuda");
            QCOMPARE(templates.size(), size_t(1));
            const auto *t = templates.front();
            for (const auto &p : points) {
                if (!t->valid(p, card))
                    continue;
                const std::string what = t->id + " " + p.dump() + " " + dtypeName(dt);
                const auto build = nv.compile(t->render(p, card), "sm_90");
                QVERIFY2(build.report.ok, (what + "\n" + build.report.log + describeFindings(build.findings)).c_str());
                const auto plan = parseLaunchPlan(t->launch(p, card), card);
                QCOMPARE(plan.kernels.size(), size_t(2));
                for (const auto &k : plan.kernels) {
                    const auto *res = findKernel(build, k.name);
                    QVERIFY2(res, (what + ": no kernel " + k.name).c_str());
                    if (res->spillStores > 0 || res->stackBytes > 0)
                        spills += what + ": " + k.name + " uses local memory\n";
                }
                resolveLaunchPlan(plan, card.shape);
                for (const auto &held : card.heldOutShapes)
                    resolveLaunchPlan(plan, held);
                ++compiled;
            }
        }
        QVERIFY2(spills.empty(), spills.c_str());
        QVERIFY(compiled >= 12);
    }

    // The templates that cut statistics across blocks fill an H200 (132 SMs) at KernelBench's shapes, where
    // a block per row or per channel would not: 16 layer-norm rows of 4M elements, 64 batch-norm channels,
    // 8 groups, one Frobenius norm. Every kernel but the one-warp combines gets at least two blocks per SM.
    void splitNormsFillTheDevice_data()
    {
        QTest::addColumn<QString>("templateId");
        QTest::addColumn<QString>("shape");
        const std::vector<std::pair<const char *, const char *>> cases = {
            {"cuda.layer_norm.split", "rows=16,cols=4194304"},      {"cuda.rms_norm.split", "rows=16,cols=4194304"},
            {"cuda.group_norm.split", "n=1,c=64,hw=262144,groups=8"}, {"cuda.batch_norm.split", "n=64,c=64,hw=262144"},
            {"cuda.batch_norm_affine.split", "n=2,c=3,hw=1048576"},   {"cuda.batch_norm_eval.split", "n=64,c=64,hw=262144"},
            {"cuda.batch_norm.split", "n=4096,c=16,hw=1"},            {"cuda.frobenius_norm.grid", "rows=3670016,cols=512"}};
        for (const auto &[t, shape] : cases)
            QTest::newRow((std::string(t) + " " + shape).c_str()) << QString::fromLatin1(t) << QString::fromLatin1(shape);
    }

    void splitNormsFillTheDevice()
    {
        QFETCH(QString, templateId);
        QFETCH(QString, shape);
        const auto *t = TemplateLibrary::builtin().find(templateId.toStdString());
        QVERIFY(t);
        for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
            const auto card = makeCard(t->family, parseShape(shape.toStdString()), dt);
            const auto p = t->seed(card);
            QVERIFY2(t->valid(p, card), p.dump().c_str());
            const auto plan = resolveLaunchPlan(parseLaunchPlan(t->launch(p, card), card), card.shape);
            for (const auto &k : plan.kernels) {
                if (k.threadsPerBlock() == 32)
                    continue; // a combine: one warp per channel, or one in all
                const int64_t blocks = int64_t(k.grid[0]) * k.grid[1] * k.grid[2];
                QVERIFY2(blocks >= 264, (k.name + " " + p.dump() + ": " + std::to_string(blocks) + " blocks").c_str());
            }
        }
    }

    void templatesPassTheStaticChecks()
    {
        // The proposer's own CUDA templates must never trip the checks.
        NvrtcCompiler nv(m_cache.path().toStdString());
        int checked = 0;
        for (const char *family : {"softmax", "layer_norm", "sum", "relu", "cumsum"}) {
            ShapeBindings shape = {{"rows", 256}, {"cols", 1024}};
            const auto card = makeCard(family, shape, DType::F32);
            for (const auto *t : TemplateLibrary::builtin().forFamily(family, "cuda")) {
                if (!t->seed)
                    continue;
                const auto p = t->seed(card);
                if (t->valid && !t->valid(p, card))
                    continue;
                const auto scan = scanSource(t->render(p, card));
                QVERIFY2(scan.findings.empty(), (t->id + ": " + describeFindings(scan.findings)).c_str());
                ++checked;
            }
        }
        QVERIFY(checked >= 5);
    }
};

QTEST_GUILESS_MAIN(TestNvrtc)
#include "tst_nvrtc.moc"
