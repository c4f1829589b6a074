#pragma once
// A backend's device primitives. The one evaluation pipeline (pipeline/evaluation.h) holds every step
// of an evaluation and core/guard/ every rule; a backend only compiles and loads, allocates, launches,
// synchronizes, times, flushes caches and scrubs freed memory. A new backend (HIP) implements these
// two interfaces and adds no rule.
#include <ATen/ATen.h>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ops/operator_card.h"
#include "protocol/messages.h"
#include "protocol/verdict.h"

namespace kforge::worker {

// What one launch of the candidate (or the wait for it) came to.
struct LaunchOutcome {
    enum class Kind {
        Ok,
        Failed,           // the candidate refused or the driver rejected the launch; the device is still usable
        Crashed,          // the candidate's process died (CPU sandbox): a signal, an abort
        Timeout,          // the candidate did not finish before its deadline and was stopped
        SandboxViolation, // the candidate tried something its sandbox forbids (a system call, a limit)
    };
    Kind kind = Kind::Ok;
    std::string detail; // what happened, said for the trial report
    double micros = -1; // a time measured around the call by the backend itself (CPU: inside the sandbox)
    bool ok() const { return kind == Kind::Ok; }
};

// A compiled and loaded candidate. Tensors it is given come from its allocate(): on CPU they live in
// memory shared with its sandbox, on CUDA in device memory.
class Program {
public:
    virtual ~Program() = default;
    // Empty when the candidate can run at this shape, else why not (a CUDA plan beyond device limits).
    virtual std::string checkShape(const ShapeBindings &shape) = 0;
    // Bytes of each workspace buffer the candidate asks for at this shape (CUDA launch plans).
    virtual std::vector<int64_t> workspaceBytes(const ShapeBindings &shape) = 0;
    // `bytes` of uninitialised memory the candidate may read and write, as a byte tensor.
    virtual at::Tensor allocate(int64_t bytes) = 0;
    // Runs (CPU) or enqueues (CUDA) the candidate once on these tensors.
    virtual LaunchOutcome launch(const ShapeBindings &shape, const std::vector<at::Tensor> &in, const std::vector<at::Tensor> &out,
                                 const std::vector<at::Tensor> &ws) = 0;
    // Kernel names, for a profiler (CUDA).
    virtual std::vector<std::string> kernelNames() const { return {}; }
};

struct LoadResult {
    std::unique_ptr<Program> program; // null when the candidate was rejected before running
    CompileReport compile;
    VerdictStatus status = VerdictStatus::CompileError; // when rejected
    Reason reason;                                      // when rejected
};

// A recorded piece of work replayed cheaply (CUDA graphs), for timing kernels shorter than a launch.
class Recording {
public:
    virtual ~Recording() = default;
    virtual void replay() = 0;
};

class Device {
public:
    virtual ~Device() = default;
    virtual std::string backend() const = 0;     // "cpu", "cuda": matches Candidate::backend
    virtual nlohmann::json describe() const = 0; // this device, for the worker's hello
    virtual at::Device torchDevice() const = 0;  // where inputs, references and checks live
    // Compiles (cached by content; a cache entry is checked before use) and loads the candidate.
    // `arenaBytes` is the most memory the pipeline will ask of Program::allocate at once.
    virtual LoadResult load(const OperatorCard &card, const Candidate &candidate, int64_t arenaBytes, int deadlineMs) = 0;
    // Starts compiling a candidate that is likely to be evaluated next, in the background, so that its
    // load() finds the build ready: the compiler's CPU time overlaps the device time of the evaluation
    // in hand. A hint only: it runs no candidate code and decides nothing; a device that cannot compile
    // ahead ignores it (compilesAhead() false).
    virtual void prepare(const Candidate &) {}
    virtual bool compilesAhead() const { return false; }
    // How many hinted candidates it compiles at once (the hello's "prepare_threads"): the pool tells it
    // of no more queued evaluations ahead than this.
    virtual int prepareThreads() const { return compilesAhead() ? 1 : 0; }
    // Waits for queued work; Ok, or what failed. A fault that leaves the device unusable ends the
    // worker process with a `cuda_fault:` line on stderr (the pool restarts it).
    virtual LaunchOutcome synchronize(const std::string &context) = 0;
    // Evicts what the last run left in caches, so a timed run starts cold (CUDA: reads twice the L2).
    virtual void flushCaches() = 0;
    // Overwrites memory the allocator has freed, so no buffer a candidate gets holds an earlier result.
    virtual void scrubFreeMemory(int64_t recentBytes) = 0;
    // Hands memory an allocator keeps cached back to the device, so that one large allocation finds it
    // in one piece (CUDA: the caching allocator's blocks, which fragment); a no-op where nothing caches.
    virtual void releaseCachedMemory() {}
    // One timed sample of `work` on the device's clock, in microseconds, caches flushed first. When
    // `work` reports its own time (LaunchOutcome::micros), that time is the sample. `prime`, when given,
    // is the same work on other buffers: a device whose samples depend on what ran just before them
    // runs it untimed first (the CPU); one that times on its own clock ignores it. Only the baseline is
    // primed: an untimed call between a candidate's timed ones would let it move work out of them.
    virtual double sample(const std::function<LaunchOutcome()> &work, LaunchOutcome &outcome,
                          const std::function<LaunchOutcome()> &prime) = 0;
    // Records work for replay where the device can (CUDA graphs); null where it cannot.
    virtual std::unique_ptr<Recording> record(const std::function<void()> &work) { return nullptr; }
    // Copy bandwidth in bytes per second (read plus written), what reports compare kernels with; 0 when
    // unknown.
    virtual double copyBandwidth() const = 0;
    // The fastest rate the device was measured to move bytes at by any means (a copy, a stream of reads):
    // the roofline floor's rate, which no kernel can beat. A kernel that mostly reads (a reduction to a
    // scalar) runs above the copy rate, so the copy rate alone would call it impossibly fast.
    virtual double streamBandwidth() const { return copyBandwidth(); }
    // Measures that rate again and keeps the best ever (a device whose rate is measured once, at a slow
    // moment, would call honest kernels faster than possible for its whole life); returns streamBandwidth.
    virtual double remeasureStreamBandwidth() { return streamBandwidth(); }
    // Memory the harness may still use on this device, in bytes.
    virtual int64_t freeMemory() = 0;
    // The last-level cache, so rotating input sets can outsize it (0: unknown).
    virtual int64_t cacheBytes() const { return 0; }
    // The most input sets a benchmark rotates through. Where the flush reaches every cache the timed
    // work sees (a GPU's L2), a few suffice; where it does not, the rotation itself must turn them over.
    virtual int maxInputSets() const { return 8; }
    // Keeps the calling thread, and the candidate's calls, on the core it is on until the returned
    // handle goes (the CPU: both sides then share one core and whatever else the host runs on it).
    virtual std::shared_ptr<void> holdCore() { return {}; }
    // Warm-up before timing, at least this long of candidate and baseline alternating: an H200 timed
    // both sides 10% slow for a while after the idle of a compile. It may be shorter when the device
    // has just been busy (compiling ahead leaves it almost no idle between evaluations).
    virtual double warmupMillis() const { return 0; }
    // Kernels shorter than this are timed as recordings (0: never).
    virtual double graphBelowMicros() const { return 0; }
};

} // namespace kforge::worker
