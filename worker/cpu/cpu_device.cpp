#include "worker/cpu/cpu_device.h"

#include <ATen/Parallel.h>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sched.h>
#include <thread>
#include <unistd.h>

#include "util/text.h"
#include "util/host_memory.h"
#include "worker/cpu/cpu_compiler.h"
#include "worker/sandbox/jail.h"

namespace kforge::worker {

#ifdef KFORGE_HAVE_CPU_SANDBOX
namespace {

using Clock = std::chrono::steady_clock;
namespace sb = kforge::sandbox;

int32_t dtypeCode(at::ScalarType t)
{
    switch (t) {
    case at::kFloat: return 0;
    case at::kHalf: return 1;
    case at::kBFloat16: return 2;
    case at::kDouble: return 3;
    case at::kLong: return 4;
    case at::kInt: return 5;
    case at::kBool: return 6;
    default: return -1;
    }
}

int64_t lastLevelCacheBytes()
{
    int64_t best = 0;
    for (int i = 0; i < 8; ++i) {
        std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size");
        std::string s;
        if (!(in >> s) || s.empty())
            continue;
        int64_t v = std::atoll(s.c_str());
        if (s.back() == 'K')
            v <<= 10;
        else if (s.back() == 'M')
            v <<= 20;
        best = std::max(best, v);
    }
    if (best == 0)
        best = std::max<long>(::sysconf(_SC_LEVEL3_CACHE_SIZE), ::sysconf(_SC_LEVEL2_CACHE_SIZE));
    return best > 0 ? best : int64_t(32) << 20;
}

// The arena's bookkeeping: first-fit blocks, 256-byte aligned, freed when the last tensor viewing one
// goes. Shared with every tensor's deleter, so a tensor may outlive its program.
struct ArenaState {
    std::unique_ptr<sb::Arena> arena;
    std::mutex lock;
    std::map<int64_t, int64_t> free; // offset -> bytes
    int64_t used = 0;

    int64_t take(int64_t bytes)
    {
        bytes = (std::max<int64_t>(bytes, 1) + 255) / 256 * 256;
        std::lock_guard<std::mutex> g(lock);
        for (auto it = free.begin(); it != free.end(); ++it)
            if (it->second >= bytes) {
                const int64_t off = it->first, left = it->second - bytes;
                free.erase(it);
                if (left > 0)
                    free.emplace(off + bytes, left);
                used += bytes;
                return off;
            }
        return -1;
    }
    void give(int64_t off, int64_t bytes)
    {
        bytes = (std::max<int64_t>(bytes, 1) + 255) / 256 * 256;
        std::lock_guard<std::mutex> g(lock);
        used -= bytes;
        auto it = free.emplace(off, bytes).first;
        if (auto next = std::next(it); next != free.end() && it->first + it->second == next->first) {
            it->second += next->second;
            free.erase(next);
        }
        if (it != free.begin())
            if (auto prev = std::prev(it); prev->first + prev->second == it->first) {
                prev->second += it->second;
                free.erase(it);
            }
    }
};

// Lets `pid` (0: the calling thread) run on `cpu` alone; false where the affinity cannot be set.
bool holdOn(pid_t pid, int cpu)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return ::sched_setaffinity(pid, sizeof one, &one) == 0;
}

LaunchOutcome toLaunch(const sb::CallOutcome &c)
{
    LaunchOutcome o;
    o.micros = c.micros;
    o.detail = c.detail;
    switch (c.kind) {
    case sb::CallOutcome::Kind::Ok: o.kind = LaunchOutcome::Kind::Ok; break;
    case sb::CallOutcome::Kind::Failed: o.kind = LaunchOutcome::Kind::Failed; break;
    case sb::CallOutcome::Kind::Crashed: o.kind = LaunchOutcome::Kind::Crashed; break;
    case sb::CallOutcome::Kind::Timeout: o.kind = LaunchOutcome::Kind::Timeout; break;
    case sb::CallOutcome::Kind::Violation: o.kind = LaunchOutcome::Kind::SandboxViolation; break;
    }
    return o;
}

class CpuProgram : public Program {
public:
    CpuProgram(std::shared_ptr<ArenaState> arena, sb::JailOptions options, std::unique_ptr<sb::Jail> jail, int deadlineMs)
        : m_arena(std::move(arena)), m_options(std::move(options)), m_jail(std::move(jail)),
          // A call that hangs is stopped here, before the pool's deadline for the whole evaluation
          // would take the worker down: a tenth of it (at most 5 s) is left for the report.
          m_deadline(Clock::now() + std::chrono::milliseconds(deadlineMs - std::min(deadlineMs / 10, 5000))), m_deadlineMs(deadlineMs)
    {
    }

    std::string checkShape(const ShapeBindings &) override { return {}; }
    std::vector<int64_t> workspaceBytes(const ShapeBindings &) override { return {}; }

    at::Tensor allocate(int64_t bytes) override
    {
        const int64_t off = m_arena->take(bytes);
        if (off < 0)
            throw std::runtime_error("the CPU sandbox's arena of " + std::to_string(m_arena->arena->bytes() >> 20) + " MiB cannot hold " +
                                     std::to_string(bytes) + " more bytes (" + std::to_string(m_arena->used) + " in use)");
        auto state = m_arena;
        return at::from_blob(
            m_arena->arena->base() + off, {bytes}, [state, off, bytes](void *) { state->give(off, bytes); },
            at::TensorOptions().dtype(at::kByte).device(at::kCPU));
    }

    LaunchOutcome launch(const ShapeBindings &shape, const std::vector<at::Tensor> &in, const std::vector<at::Tensor> &out,
                         const std::vector<at::Tensor> &ws) override
    {
        std::vector<sb::wire::Tensor> din, dout;
        std::string bad;
        if (!describe(in, din, bad) || !describe(out, dout, bad) || !describe(ws, dout, bad)) {
            LaunchOutcome o;
            o.kind = LaunchOutcome::Kind::Failed;
            o.detail = bad;
            return o;
        }
        // A jail that a timeout, a crash or a violation ended is replaced: the arena (and every
        // tensor in it) stays.
        if (!m_jail || !m_jail->alive()) {
            auto started = sb::Jail::start(m_options, *m_arena->arena);
            if (!started.jail) {
                LaunchOutcome o;
                o.kind = started.failure == sb::StartResult::Failure::Violation ? LaunchOutcome::Kind::SandboxViolation
                                                                                : LaunchOutcome::Kind::Crashed;
                o.detail = "the CPU sandbox could not be restarted: " + started.detail;
                return o;
            }
            m_jail = std::move(started.jail);
            m_runnerCpu = -1;
        }
        runOnThisCore();
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(m_deadline - Clock::now()).count();
        auto o = toLaunch(m_jail->call(din, dout, shape, int(std::max<int64_t>(left, 200))));
        if (o.kind == LaunchOutcome::Kind::Timeout)
            o.detail += " (stopped ahead of the evaluation's deadline of " + std::to_string(m_deadlineMs) + " ms)";
        return o;
    }

private:
    // The call runs on the core the worker is on (CpuDevice::holdCore keeps the worker there while it
    // times): on this 2-core VM, with the two on different cores, one evaluation in four or five had its
    // candidate run at half speed throughout, the baseline not (a neighbour on the jail's core, most
    // likely); on one core both sides meet whatever the host does there.
    void runOnThisCore()
    {
        const int cpu = ::sched_getcpu();
        if (cpu >= 0 && cpu != m_runnerCpu && holdOn(m_jail->runnerPid(), cpu))
            m_runnerCpu = cpu;
    }

    bool describe(const std::vector<at::Tensor> &ts, std::vector<sb::wire::Tensor> &out, std::string &bad) const
    {
        const auto *base = m_arena->arena->base();
        const auto size = uint64_t(m_arena->arena->bytes());
        for (const auto &t : ts) {
            sb::wire::Tensor d{};
            d.dtype = dtypeCode(t.scalar_type());
            d.ndim = int32_t(t.dim());
            if (t.dim() > sb::wire::kMaxDims) {
                bad = "a tensor of " + std::to_string(t.dim()) + " dimensions (the CPU ABI passes 8)";
                return false;
            }
            int64_t last = 0; // the furthest element from the first, in elements
            for (int64_t i = 0; i < t.dim(); ++i) {
                d.sizes[i] = t.size(i);
                d.strides[i] = t.stride(i);
                last += (t.size(i) - 1) * t.stride(i);
            }
            const auto *p = static_cast<const unsigned char *>(t.data_ptr());
            if (p < base || uint64_t(p - base) > size) {
                bad = "a tensor outside the CPU sandbox's arena (it must come from Program::allocate)";
                return false;
            }
            d.offset = uint64_t(p - base);
            d.bytes = t.numel() == 0 ? 0 : uint64_t(last + 1) * uint64_t(t.element_size());
            if (d.bytes > size - d.offset) {
                bad = "a tensor that runs past the end of the CPU sandbox's arena";
                return false;
            }
            out.push_back(d);
        }
        return true;
    }

    std::shared_ptr<ArenaState> m_arena;
    sb::JailOptions m_options;
    std::unique_ptr<sb::Jail> m_jail;
    Clock::time_point m_deadline;
    int m_deadlineMs;
    int m_runnerCpu = -1; // the core the jail's runner is held on (-1: none yet)
};

class CpuDevice : public Device {
public:
    explicit CpuDevice(const CpuDeviceOptions &o) : m_options(o), m_cacheBytes(lastLevelCacheBytes()) {}

    std::string backend() const override { return "cpu"; }

    nlohmann::json describe() const override
    {
        std::string model = "cpu";
        std::ifstream in("/proc/cpuinfo");
        for (std::string line; std::getline(in, line);)
            if (line.rfind("model name", 0) == 0) {
                model = line.substr(line.find(':') + 2);
                break;
            }
        return {{"backend", "cpu"},
                {"name", model},
                {"threads", at::get_num_threads()},
                {"cores", std::thread::hardware_concurrency()},
                {"cache_bytes", m_cacheBytes},
                {"sandbox", "bubblewrap + seccomp (kforge-cpu-runner)"}};
    }

    at::Device torchDevice() const override { return at::Device(at::kCPU); }

    LoadResult load(const OperatorCard &, const Candidate &candidate, int64_t arenaBytes, int deadlineMs) override
    {
        LoadResult r;
        auto build = m_compiler.compile(candidate.source);
        r.compile = build.report;
        if (!build.report.ok) {
            r.status = VerdictStatus::CompileError;
            r.reason = {reason::CompileError, "the candidate did not compile:\n" + firstLines(build.report.log, 12)};
            return r;
        }
        std::string error;
        auto state = std::make_shared<ArenaState>();
        state->arena = sb::Arena::create(arenaBytes, &error);
        if (!state->arena) {
            r.status = VerdictStatus::Error;
            r.reason = {reason::HarnessLimit, "the CPU sandbox's arena: " + error};
            return r;
        }
        state->free.emplace(0, state->arena->bytes() / 256 * 256);
        sb::JailOptions jo;
        jo.sharedObject = build.sharedObject;
        jo.memoryBytes = m_options.memoryBytes;
        jo.cpuSeconds = m_options.cpuSeconds;
        jo.fileBytes = m_options.scratchBytes;
        jo.startTimeoutMs = std::min(std::max(deadlineMs, 1000), 30000);
        auto started = sb::Jail::start(jo, *state->arena);
        using F = sb::StartResult::Failure;
        switch (started.failure) {
        case F::None:
            r.program = std::make_unique<CpuProgram>(std::move(state), std::move(jo), std::move(started.jail), deadlineMs);
            return r;
        case F::Unavailable:
            r.status = VerdictStatus::Error;
            r.reason = {kSandboxUnavailable, started.detail};
            return r;
        case F::LoadFailed:
        case F::NoEntry:
            r.status = VerdictStatus::CompileError;
            r.reason = {reason::MissingEntry, started.detail};
            return r;
        case F::Violation:
            r.status = VerdictStatus::Incorrect;
            r.reason = {reason::SandboxViolation, started.detail};
            return r;
        case F::Crashed:
            r.status = VerdictStatus::Crashed;
            r.reason = {reason::Crashed, started.detail};
            return r;
        case F::Timeout:
            r.status = VerdictStatus::Timeout;
            r.reason = {reason::Timeout, started.detail};
            return r;
        }
        return r;
    }

    // Calls are synchronous: the work is done when launch returns.
    LaunchOutcome synchronize(const std::string &) override { return {}; }

    // Reads a buffer the size of the last-level cache, so a timed run finds none of its own data there.
    // It runs on the worker's core; the jail's core keeps its own L2, which the input sets' rotation
    // (maxInputSets) turns over.
    void flushCaches() override
    {
        if (m_flush.empty())
            m_flush.assign(size_t(m_cacheBytes), 1);
        uint64_t sum = 0;
        for (size_t i = 0; i < m_flush.size(); i += 64)
            sum += m_flush[i];
        m_sink = sum;
    }

    // Reference results never enter the arena, and each program's arena is fresh memory.
    void scrubFreeMemory(int64_t) override {}

    // The baseline runs once untimed first, on other buffers. Without it its samples depended on what
    // ran before them: ATen's 128 x 512 layer norm ran 45-55 us right after another baseline and
    // 60-120 us right after a candidate's call (the allocator's and the code's state: the caches were
    // flushed either way), and with the sides alternating its median fell between the two modes, 30%
    // apart across evaluations of one kernel. Primed, it is timed in the warmer state, which a candidate
    // (always just switched into its jail) never beats. Other buffers, because a core keeps what it read
    // in its own L2 and the flush runs on the worker's core only.
    double sample(const std::function<LaunchOutcome()> &work, LaunchOutcome &outcome, const std::function<LaunchOutcome()> &prime) override
    {
        if (prime) {
            outcome = prime();
            if (!outcome.ok())
                return 0;
        }
        flushCaches();
        const auto t0 = Clock::now();
        outcome = work();
        const double wall = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
        return outcome.micros >= 0 ? outcome.micros : wall;
    }

    double copyBandwidth() const override
    {
        std::call_once(m_bandwidthOnce, [this] { measureRates(); });
        return m_bandwidth;
    }

    // The floor's rate: the faster of the copy and a stream of reads. A kernel's stores land in the
    // cache and are written back after its timed run, so within the run it mostly reads (its inputs,
    // and its outputs' lines before it writes them); memcpy writes past the cache. Honest 1 MB
    // pointwise kernels ran at 28 GB/s against a copy rate of 26 here, and the copy-rate floor called
    // them suspect; one thread reads 29-33 GB/s.
    double streamBandwidth() const override
    {
        std::call_once(m_bandwidthOnce, [this] { measureRates(); });
        return std::max(m_bandwidth, m_readRate);
    }

    double remeasureStreamBandwidth() override
    {
        std::call_once(m_bandwidthOnce, [this] { measureRates(); });
        measureRates(); // keeps the best of every measurement
        return std::max(m_bandwidth, m_readRate);
    }

    int64_t freeMemory() override { return availableHostMemory(); }

    // The last-level cache (Device::cacheBytes where the interface has it).
    int64_t cacheBytes() const override { return m_cacheBytes; }
    // The flush runs on the worker's core, and the jail's core keeps its own L2: with 8 sets of a 128 x
    // 512 problem (1 MB in all, half of it the candidate's) a candidate found its inputs still there
    // and ran below the memory floor. Up to 64 sets rotate twice the last-level cache through it.
    int maxInputSets() const override { return 64; }

    std::shared_ptr<void> holdCore() override
    {
        cpu_set_t before;
        const int cpu = ::sched_getcpu();
        if (cpu < 0 || ::sched_getaffinity(0, sizeof before, &before) != 0 || !holdOn(0, cpu))
            return {};
        return std::shared_ptr<void>(new cpu_set_t(before), [](void *p) {
            auto *mask = static_cast<cpu_set_t *>(p);
            ::sched_setaffinity(0, sizeof *mask, mask);
            delete mask;
        });
    }

private:
    // One thread's memcpy rate (bytes read plus written) and read rate (four independent sums) over a
    // buffer four times the last-level cache, the best of eight (a VM's rates move 10-20% with its
    // neighbours): the roofline of a single-threaded candidate.
    void measureRates() const
    {
        const size_t bytes = size_t(std::max<int64_t>(4 * m_cacheBytes, int64_t(64) << 20)) / 32 * 32;
        std::vector<uint64_t> a(bytes / 8, 1), b(bytes / 8, 2);
        for (int i = 0; i < 8; ++i) {
            auto t0 = Clock::now();
            std::memcpy(b.data(), a.data(), bytes);
            double s = std::chrono::duration<double>(Clock::now() - t0).count();
            if (s > 0)
                m_bandwidth = std::max(m_bandwidth, 2.0 * double(bytes) / s);
            t0 = Clock::now();
            uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            for (size_t j = 0; j < b.size(); j += 4) {
                s0 += b[j];
                s1 += b[j + 1];
                s2 += b[j + 2];
                s3 += b[j + 3];
            }
            m_sink = s0 + s1 + s2 + s3;
            s = std::chrono::duration<double>(Clock::now() - t0).count();
            if (s > 0)
                m_readRate = std::max(m_readRate, double(bytes) / s);
            std::swap(a, b);
        }
    }

    CpuDeviceOptions m_options;
    CpuCompiler m_compiler;
    int64_t m_cacheBytes;
    std::vector<unsigned char> m_flush;
    mutable volatile uint64_t m_sink = 0;
    mutable std::once_flag m_bandwidthOnce;
    mutable double m_bandwidth = 0; // copy
    mutable double m_readRate = 0;
};

} // namespace

std::unique_ptr<Device> makeCpuDevice(std::string *whyNot, const CpuDeviceOptions &options)
{
    if (std::string why = sb::probeSandbox(); !why.empty()) {
        if (whyNot)
            *whyNot = why;
        return nullptr;
    }
    return std::make_unique<CpuDevice>(options);
}
#else
// Built without libseccomp: no runner, so no CPU device (never an unconfined one).
std::unique_ptr<Device> makeCpuDevice(std::string *whyNot, const CpuDeviceOptions &)
{
    if (whyNot)
        *whyNot = "this worker was built without libseccomp, so without the CPU sandbox's runner (kforge-cpu-runner); "
                  "CPU candidates are not evaluated here (install libseccomp-dev and reconfigure)";
    return nullptr;
}
#endif

} // namespace kforge::worker
