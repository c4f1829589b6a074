#include "worker/cuda/cuda_device.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "pool/compile_ahead.h"
#include "util/hash.h"
#include "util/text.h"
#include "worker/cuda/cuda_driver.h"
#include "worker/cuda/harness_passes.h"
#include "worker/cuda/launch_plan.h"
#include "worker/cuda/nvrtc_compiler.h"

namespace kforge::worker {

namespace {

using namespace cudadrv;

// The worker's own helpers, not candidates (no static checks). kf_spin keeps the GPU busy on the global
// timer while the host enqueues the timed work, so no launch gap lands inside a timed region.
// kf_flush_read evicts the L2 by reading twice its size: a flush that writes (a memset) leaves an L2's
// worth of dirty lines that the timed kernel must then write back, charging it for bytes it never moved.
// The loads are kept by an XOR that is stored only when it equals a value the caller never passes.
const char *kHelpers = R"(
extern "C" __global__ void kf_spin(unsigned long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
// kf_read_rate: the device's rate of streaming reads, four independent 16-byte loads in flight per thread.
extern "C" __global__ void kf_read_rate(const uint4 *p, unsigned long long n, unsigned *sink, unsigned never)
{
    unsigned acc = 0;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        const uint4 a = p[i], b = p[i + stride], c = p[i + 2 * stride], d = p[i + 3 * stride];
        acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
    }
    for (; i < n; i += stride) {
        const uint4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == never)
        *sink = acc;
}
extern "C" __global__ void kf_flush_read(const uint4 *p, unsigned long long n, unsigned *sink, unsigned never)
{
    unsigned acc = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        const uint4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == never)
        *sink = acc;
}
)";

constexpr int kFaultExit = 70;
constexpr double kGraphBelowUs = 10.0;  // kernels shorter than this are timed as CUDA-graph replays
constexpr unsigned long long kSpinNs = 50000;
constexpr double kWarmupMs = 100; // of the candidate and baseline alternating, before timing
constexpr double kBusyWarmupMs = 20; // the same when the device was busy until moments ago
constexpr double kBusyWithinMs = 250; // "moments ago"
constexpr int kAheadThreads = 3;  // NVRTC compiles at once for prepare hints (the pool hints up to this many)
constexpr size_t kMaxAhead = 8;   // builds compiled ahead and not yet claimed by a load: the memory bound

// The caching allocator's segments: libtorch 1.13's snapshot() is the list, 2.x wraps it in a struct.
template<class Snapshot>
const auto &segmentsOf(const Snapshot &snap)
{
    if constexpr (requires { snap.segments; })
        return snap.segments;
    else
        return snap;
}

template<class Segment>
bool isExpandable(const Segment &seg)
{
    if constexpr (requires { seg.is_expandable; })
        return seg.is_expandable;
    else
        return false;
}

[[noreturn]] void fatal(const std::string &what)
{
    std::fprintf(stderr,
                 "kforge-worker: cuda_fault: %s; the CUDA context cannot be used again, so this worker exits and the pool starts a new one\n",
                 what.c_str());
    std::fflush(stderr);
    std::_Exit(kFaultExit);
}

LoadResult reject(LoadResult r, VerdictStatus status, const char *code, const std::string &message)
{
    r.status = status;
    r.reason = {code, message};
    return r;
}

CUdeviceptr ptr(const at::Tensor &t)
{
    return reinterpret_cast<CUdeviceptr>(t.data_ptr());
}

std::vector<CUdeviceptr> pointers(const std::vector<at::Tensor> &ts)
{
    std::vector<CUdeviceptr> p;
    for (const auto &t : ts)
        p.push_back(ptr(t));
    return p;
}

class CudaRecording : public Recording {
public:
    explicit CudaRecording(std::unique_ptr<at::cuda::CUDAGraph> g) : m_graph(std::move(g)) {}
    void replay() override { m_graph->replay(); }

private:
    std::unique_ptr<at::cuda::CUDAGraph> m_graph;
};

// A loaded module and its launch plan. Plans are resolved once per shape: the timed loop must not
// parse expressions.
class CudaProgram : public Program {
public:
    CudaProgram(at::Device device, DeviceLimits limits, LaunchPlan plan, std::unique_ptr<Module> module, std::vector<CUfunction> functions)
        : m_device(device), m_limits(limits), m_plan(std::move(plan)), m_module(std::move(module)), m_functions(std::move(functions))
    {
    }

    std::string checkShape(const ShapeBindings &shape) override
    {
        try {
            checkAgainstFunctions(resolved(shape), m_functions, *m_module, m_limits);
            return {};
        } catch (const std::exception &e) {
            return e.what();
        }
    }

    std::vector<int64_t> workspaceBytes(const ShapeBindings &shape) override { return resolved(shape).workspaceBytes; }

    at::Tensor allocate(int64_t bytes) override { return at::empty({bytes}, at::TensorOptions().dtype(at::kByte).device(m_device)); }

    LaunchOutcome launch(const ShapeBindings &shape, const std::vector<at::Tensor> &in, const std::vector<at::Tensor> &out,
                         const std::vector<at::Tensor> &ws) override
    {
        const PlanPointers p{pointers(in), pointers(out), pointers(ws)};
        std::string failed;
        const CUresult r = launchPlan(resolved(shape), m_functions, p, reinterpret_cast<CUstream>(c10::cuda::getCurrentCUDAStream().stream()), &failed);
        if (r == CUDA_SUCCESS)
            return {};
        if (isSticky(r))
            fatal(errorName(r) + " launching kernel '" + failed + "'");
        return {LaunchOutcome::Kind::Failed, "launching kernel '" + failed + "' failed: " + errorName(r)};
    }

    std::vector<std::string> kernelNames() const override
    {
        std::vector<std::string> n;
        for (const auto &k : m_plan.kernels)
            n.push_back(k.name);
        return n;
    }

private:
    const ResolvedPlan &resolved(const ShapeBindings &shape)
    {
        auto it = m_resolved.find(shape);
        if (it == m_resolved.end())
            it = m_resolved.emplace(shape, resolveLaunchPlan(m_plan, shape, m_limits)).first;
        return it->second;
    }

    at::Device m_device;
    DeviceLimits m_limits;
    LaunchPlan m_plan;
    std::unique_ptr<Module> m_module;
    std::vector<CUfunction> m_functions;
    std::map<ShapeBindings, ResolvedPlan> m_resolved;
};

class CudaDevice : public Device {
public:
    explicit CudaDevice(int index) : m_info(queryDevice(index)), m_device(at::kCUDA, c10::DeviceIndex(index))
    {
        c10::cuda::set_device(c10::DeviceIndex(index));
        at::empty({1}, at::TensorOptions().device(m_device)); // creates the primary context through torch
        CUcontext ctx = nullptr;
        check(cuDevicePrimaryCtxRetain(&ctx, m_info.device), "cuDevicePrimaryCtxRetain");
        check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
        // One stream of our own from torch's pool for everything, made current so the reference runs on
        // it too: graphs cannot be captured on the legacy default stream.
        c10::cuda::setCurrentCUDAStream(c10::cuda::getStreamFromPool(false, m_device.index()));
        auto helpers = m_compiler.compile(kHelpers, m_info.arch(), false);
        if (!helpers.report.ok)
            throw Error("the worker's helper kernels did not compile for " + m_info.arch() + ": " + helpers.report.log);
        check(m_helpers.load(helpers.cubin), "loading the helper kernels");
        m_spin = m_helpers.function("kf_spin");
        m_flushRead = m_helpers.function("kf_flush_read");
        // The guard's passes over large tensors as one kernel each; KFORGE_HARNESS_PASSES=torch keeps
        // the libtorch passes (to compare both on the same kernels).
        if (const char *v = std::getenv("KFORGE_HARNESS_PASSES"); !v || std::string(v) != "torch") {
            m_passes = std::make_unique<CudaHarnessPasses>(m_compiler, m_info.arch(), m_info.sms, [this] { return stream(); });
            useFastPasses(m_passes.get());
        }
        // The L2 flush buffer: reading twice the L2's size evicts whatever the last run left there. Its
        // contents are set once; the sink word after it is written only if the XOR of the buffer matches
        // `never`, which it cannot be asked to.
        m_flushBytes = std::max<size_t>(size_t(m_info.l2Bytes) * 2, 8u << 20) / 16 * 16;
        check(cuMemAlloc(&m_flush, m_flushBytes + 16), "allocating the L2 flush buffer");
        check(cuMemsetD32(m_flush, 0x9e3779b9u, (m_flushBytes + 16) / 4), "filling the L2 flush buffer");
        check(cuEventCreate(&m_e0, CU_EVENT_DEFAULT), "creating timing events");
        check(cuEventCreate(&m_e1, CU_EVENT_DEFAULT), "creating timing events");
        measureBandwidths();
    }

    ~CudaDevice() override
    {
        if (m_passes)
            useFastPasses(nullptr);
        cuEventDestroy(m_e0);
        cuEventDestroy(m_e1);
        if (m_flush)
            cuMemFree(m_flush);
    }

    std::string backend() const override { return "cuda"; }
    at::Device torchDevice() const override { return m_device; }
    double copyBandwidth() const override { return m_bandwidth; }
    double streamBandwidth() const override { return std::max(m_bandwidth, m_readBandwidth); }
    int64_t cacheBytes() const override { return m_info.l2Bytes; }
    // The long warm-up after an idle (a compile in line, a first evaluation), the short one when the
    // last synchronize was moments ago; KFORGE_CUDA_WARMUP_MS fixes it (to time the same kernels both ways).
    double warmupMillis() const override
    {
        static const double fixed = [] {
            const char *v = std::getenv("KFORGE_CUDA_WARMUP_MS");
            return v && *v ? std::atof(v) : -1.0;
        }();
        if (fixed >= 0)
            return fixed;
        const double idle = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - m_lastSync).count();
        return idle < kBusyWithinMs ? kBusyWarmupMs : kWarmupMs;
    }
    double graphBelowMicros() const override { return kGraphBelowUs; }

    nlohmann::json describe() const override
    {
        return {{"backend", "cuda"},
                {"index", m_info.index},
                {"name", m_info.name},
                {"sm", m_info.arch()},
                {"sms", m_info.sms},
                {"memory_bytes", m_info.memoryBytes},
                {"l2_bytes", m_info.l2Bytes},
                {"copy_bandwidth_gbs", m_bandwidth / 1e9},
                {"read_bandwidth_gbs", m_readBandwidth / 1e9},
                {"nvrtc", NvrtcCompiler::version()}};
    }

    bool compilesAhead() const override { return true; }
    int prepareThreads() const override { return m_ahead.threads(); }

    // NVRTC on the compile-ahead threads; the build is claimed by the load() of the same source and
    // options. Nothing is loaded or run here; a build nobody claims is dropped (pool/compile_ahead.h).
    void prepare(const Candidate &candidate) override
    {
        if (candidate.backend != "cuda" || candidate.source.empty())
            return;
        const auto arch = m_info.arch();
        m_ahead.hint(CompileAhead<CudaBuild>::keyOf(candidate.source, m_compiler.options(arch)),
                     [this, source = candidate.source, arch] { return m_compiler.compile(source, arch); });
    }

    LoadResult load(const OperatorCard &card, const Candidate &candidate, int64_t, int) override
    {
        LoadResult r;
        const auto build = compileOrClaim(candidate.source);
        r.compile = build.report;
        if (!build.findings.empty())
            return reject(std::move(r), VerdictStatus::CompileError, reason::StaticCheck,
                          "the candidate failed a static check:\n" + describeFindings(build.findings));
        if (!build.report.ok)
            return reject(std::move(r), VerdictStatus::CompileError, reason::CompileError,
                          "the candidate did not compile:\n" + firstLines(build.report.log, 12));
        LaunchPlan plan;
        try {
            plan = parseLaunchPlan(candidate.launch, card);
        } catch (const std::exception &e) {
            return reject(std::move(r), VerdictStatus::CompileError, reason::LaunchPlanInvalid, e.what());
        }
        auto module = std::make_unique<Module>();
        if (const CUresult res = module->load(build.cubin); res != CUDA_SUCCESS) {
            if (isSticky(res))
                fatal(errorName(res) + " while loading the module");
            return reject(std::move(r), VerdictStatus::CompileError, reason::CompileError, "the cubin could not be loaded: " + errorName(res));
        }
        std::vector<CUfunction> functions;
        for (const auto &k : plan.kernels) {
            CUfunction f = module->function(k.name);
            if (!f) {
                std::string have;
                for (const auto &kr : build.kernels)
                    have += (have.empty() ? "" : ", ") + kr.name;
                return reject(std::move(r), VerdictStatus::CompileError, reason::MissingEntry,
                              "the launch plan names kernel '" + k.name + "', but the module has no extern \"C\" __global__ function by that name (it has: "
                                  + (have.empty() ? "none" : have) + ")");
            }
            functions.push_back(f);
        }
        r.program = std::make_unique<CudaProgram>(m_device, m_info.limits, std::move(plan), std::move(module), std::move(functions));
        return r;
    }

    LaunchOutcome synchronize(const std::string &context) override
    {
        const CUresult r = cuCtxSynchronize();
        m_lastSync = std::chrono::steady_clock::now();
        if (r == CUDA_SUCCESS)
            return {};
        if (isSticky(r))
            fatal(errorName(r) + " " + context);
        return {LaunchOutcome::Kind::Failed, "the candidate's kernels failed " + context + ": " + errorName(r)};
    }

    void flushCaches() override
    {
        CUdeviceptr p = m_flush;
        unsigned long long n = m_flushBytes / 16;
        CUdeviceptr sink = m_flush + m_flushBytes;
        unsigned never = 1; // every 16-byte word XORs to zero
        void *args[] = {&p, &n, &sink, &never};
        cuLaunchKernel(m_flushRead, unsigned(m_info.sms) * 4, 1, 1, 512, 1, 1, 0, stream(), args, nullptr);
    }

    // Overwrites every block torch's caching allocator holds free with all-ones bytes (NaN in every
    // float type), so no buffer a candidate is handed holds an earlier result. The cache itself is kept:
    // emptying it, as this once did, sent every later allocation back to cudaMalloc, which cost more
    // than the scrub. Memory the allocator never cached is not handed out again by it. Ordered on the
    // one stream everything runs on, so no wait is needed.
    void scrubFreeMemory(int64_t) override
    {
        const auto snap = c10::cuda::CUDACachingAllocator::snapshot();
        const CUstream s = stream();
        for (const auto &seg : segmentsOf(snap)) {
            if (int64_t(seg.device) != int64_t(m_device.index()))
                continue;
            if (isExpandable(seg)) // partly unmapped: its blocks are not one contiguous range
                continue;
            int64_t covered = 0;
            for (const auto &b : seg.blocks)
                covered += int64_t(b.size);
            if (covered != int64_t(seg.total_size))
                continue;
            uint64_t addr = uint64_t(seg.address);
            for (const auto &b : seg.blocks) {
                if (!b.allocated && b.size > 0)
                    cuMemsetD8Async(CUdeviceptr(addr), 0xff, size_t(b.size), s);
                addr += uint64_t(b.size);
            }
        }
    }

    void releaseCachedMemory() override { c10::cuda::CUDACachingAllocator::emptyCache(); }

    // One timed sample: flush L2, spin so the host gets ahead, then events around the work, on the
    // stream the work runs on; the device sync after it leaves nothing running into the next sample.
    // No priming: the events time the kernel alone, and a run more per sample would cost device time.
    double sample(const std::function<LaunchOutcome()> &work, LaunchOutcome &outcome, const std::function<LaunchOutcome()> &) override
    {
        const CUstream s = stream();
        flushCaches();
        unsigned long long ns = kSpinNs;
        void *args[] = {&ns};
        cuLaunchKernel(m_spin, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr);
        cuEventRecord(m_e0, s);
        outcome = work();
        cuEventRecord(m_e1, s);
        if (const auto o = synchronize("while benchmarking"); !o.ok() && outcome.ok())
            outcome = o;
        float ms = 0;
        cuEventElapsedTime(&ms, m_e0, m_e1);
        return double(ms) * 1000.0;
    }

    std::unique_ptr<Recording> record(const std::function<void()> &work) override
    {
        try {
            auto g = std::make_unique<at::cuda::CUDAGraph>();
            g->capture_begin();
            work();
            g->capture_end();
            return std::make_unique<CudaRecording>(std::move(g));
        } catch (const std::exception &e) {
            std::fprintf(stderr, "kforge-worker: graph capture failed: %s\n", e.what());
            cuStreamSynchronize(stream());
            return nullptr;
        }
    }

    // Free device memory plus what torch's caching allocator holds unused, without emptying its cache:
    // the next allocations would all go back to cudaMalloc.
    int64_t freeMemory() override
    {
        size_t freeBytes = 0, total = 0;
        cuMemGetInfo(&freeBytes, &total);
        const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(m_device.index());
        const auto &reserved = stats.reserved_bytes[0], &allocated = stats.allocated_bytes[0]; // aggregate pools
        return int64_t(freeBytes) + std::max<int64_t>(0, reserved.current - allocated.current);
    }

private:
    // The build prepare() started for this source, waited for, or a compile here and now.
    CudaBuild compileOrClaim(const std::string &source)
    {
        const auto arch = m_info.arch();
        auto c = m_ahead.claim(CompileAhead<CudaBuild>::keyOf(source, m_compiler.options(arch)),
                               [&] { return m_compiler.compile(source, arch); });
        if (c.ahead)
            c.build.report.aheadWaitMs = c.waitedMs;
        return std::move(c.build);
    }

    CUstream stream() const { return reinterpret_cast<CUstream>(c10::cuda::getCurrentCUDAStream(m_device.index()).stream()); }

    // The copy rate (cuMemcpy, bytes read plus written) and the rate of streaming reads (kf_read_rate),
    // each the best of 7 runs over 1 GiB after one untimed run.
    void measureBandwidths()
    {
        size_t bytes = size_t(1) << 30;
        CUdeviceptr a = 0, b = 0;
        while (bytes >= (size_t(64) << 20) && (cuMemAlloc(&a, bytes) != CUDA_SUCCESS || cuMemAlloc(&b, bytes) != CUDA_SUCCESS)) {
            if (a)
                cuMemFree(a);
            a = 0;
            bytes /= 2;
        }
        if (!a || !b)
            return;
        const CUstream s = stream();
        cuMemsetD8Async(a, 0x3c, bytes, s);
        auto best = [&](const std::function<void()> &work) {
            float fastest = 1e30f;
            for (int i = 0; i < 8; ++i) {
                cuEventRecord(m_e0, s);
                work();
                cuEventRecord(m_e1, s);
                cuEventSynchronize(m_e1);
                float ms = 0;
                if (i > 0 && cuEventElapsedTime(&ms, m_e0, m_e1) == CUDA_SUCCESS && ms > 0)
                    fastest = std::min(fastest, ms);
            }
            return fastest < 1e29f ? double(fastest) * 1e-3 : 0.0;
        };
        const double copy = best([&] { cuMemcpyDtoDAsync(b, a, bytes, s); });
        m_bandwidth = copy > 0 ? 2.0 * double(bytes) / copy : 0.0; // bytes read plus written
        CUfunction readRate = m_helpers.function("kf_read_rate");
        CUdeviceptr p = a, sink = b;
        unsigned long long n = bytes / 16;
        unsigned never = 1; // the buffer is all 0x3c bytes: its words XOR to zero
        void *args[] = {&p, &n, &sink, &never};
        const double read = best([&] { cuLaunchKernel(readRate, unsigned(m_info.sms) * 4, 1, 1, 512, 1, 1, 0, s, args, nullptr); });
        m_readBandwidth = read > 0 ? double(bytes) / read : 0.0;
        cuMemFree(a);
        cuMemFree(b);
    }

    DeviceInfo m_info;
    at::Device m_device;
    NvrtcCompiler m_compiler;
    Module m_helpers;
    std::unique_ptr<CudaHarnessPasses> m_passes;
    CUfunction m_spin = nullptr;
    CUfunction m_flushRead = nullptr;
    CUdeviceptr m_flush = 0;
    size_t m_flushBytes = 0;
    CUevent m_e0 = nullptr, m_e1 = nullptr;
    double m_bandwidth = 0; // bytes per second, read plus written
    double m_readBandwidth = 0; // bytes per second, read
    std::chrono::steady_clock::time_point m_lastSync{}; // the device's last wait: how long it has been idle
    // After m_compiler, which its threads use: destroyed (and joined) first.
    CompileAhead<CudaBuild> m_ahead{kAheadThreads, kMaxAhead};
};

} // namespace

std::unique_ptr<Device> makeCudaDevice(std::string *whyNot)
{
    auto fail = [&](const std::string &why) -> std::unique_ptr<Device> {
        if (whyNot)
            *whyNot = why;
        return nullptr;
    };
    if (const CUresult r = cuInit(0); r != CUDA_SUCCESS)
        return fail("cuInit failed: " + errorName(r));
    int count = 0;
    cuDeviceGetCount(&count);
    if (count < 1)
        return fail("no CUDA device is visible");
    int index = 0;
    const char *visible = std::getenv("CUDA_VISIBLE_DEVICES");
    const char *slot = std::getenv("KFORGE_WORKER_SLOT");
    if (!visible && slot && *slot)
        index = std::max(0, std::atoi(slot)) % count;
    try {
        return std::make_unique<CudaDevice>(index);
    } catch (const std::exception &e) {
        return fail(std::string("device ") + std::to_string(index) + ": " + e.what());
    }
}

} // namespace kforge::worker
