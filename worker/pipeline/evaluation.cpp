#include "worker/pipeline/evaluation.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>

#include "guard/numerics.h"
#include "guard/timing.h"
#include "guard/verification.h"
#include "ops/trial_plan.h"
#include "util/error.h"
#include "worker/profile/captured_inputs.h"
#include "worker/torch/checks.h"
#include "worker/torch/reference.h"

namespace kforge::worker {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kBandBytes = 64 << 10; // guard band before and after every buffer a candidate sees
constexpr int kSpotChecks = 3;           // timed runs whose outputs are checked in full

// Adds the time until it goes out of scope to a phase's total (KFORGE_WORKER_VERBOSE's breakdown).
class PhaseTimer {
public:
    explicit PhaseTimer(double &total) : m_total(total), m_t0(Clock::now()) {}
    ~PhaseTimer() { m_total += std::chrono::duration<double, std::milli>(Clock::now() - m_t0).count(); }
    PhaseTimer(const PhaseTimer &) = delete;
    PhaseTimer &operator=(const PhaseTimer &) = delete;

private:
    double &m_total;
    Clock::time_point m_t0;
};

// Thrown when the worker's own deadline for this evaluation passes between steps.
struct DeadlineReached {
    std::string during;
};

// A buffer the candidate sees: band | data | band, all from the program's allocator.
struct Guarded {
    at::Tensor whole, data;
    uint64_t bandSeed = 0;
    int64_t bytes = 0;

    at::Tensor band(int which) const
    {
        return which == 0 ? whole.narrow(0, 0, kBandBytes) : whole.narrow(0, kBandBytes + bytes, whole.numel() - kBandBytes - bytes);
    }
};

int64_t roundUp(int64_t n, int64_t to)
{
    return (n + to - 1) / to * to;
}

class Evaluation {
public:
    Evaluation(Device &device, const OperatorCard &card, const EvalOptions &options)
        : m_device(device), m_card(card), m_options(options), m_rng(std::random_device{}()),
          m_deadline(Clock::now() + std::chrono::milliseconds(std::max(1, options.deadlineMs)))
    {
    }

    Verdict run(const Candidate &candidate)
    {
        try {
            return runSteps(candidate);
        } catch (const DeadlineReached &d) {
            Verdict v = m_verdict;
            v.status = VerdictStatus::Timeout;
            v.reasons.insert(v.reasons.begin(), {reason::Timeout, "the worker stopped the evaluation at its deadline of "
                                                                      + std::to_string(m_options.deadlineMs) + " ms, " + d.during});
            return v;
        }
    }

private:
    Verdict runSteps(const Candidate &candidate)
    {
        Verdict &v = m_verdict;
        const auto trials = trialPlan(m_card);
        const auto load0 = Clock::now();
        auto load = m_device.load(m_card, candidate, arenaBytes(trials), m_options.deadlineMs);
        m_loadMs = millisSince(load0);
        v.compile = load.compile;
        if (!load.program) {
            v.status = load.status;
            v.reasons.push_back(load.reason);
            return v;
        }
        m_program = std::move(load.program);
        for (const auto &t : trials)
            if (auto why = m_program->checkShape(t.shape); !why.empty()) {
                v.status = VerdictStatus::CompileError;
                v.reasons.push_back({reason::LaunchPlanInvalid, why});
                return v;
            }
        const auto verify0 = Clock::now();
        if (m_options.inputSeed) // a re-verification: inputs from a seed of its own
            at::manual_seed(m_options.inputSeed);
        for (size_t i = 0; i < trials.size(); ++i) {
            v.trials.push_back(runTrial(trials[i], i % 2 == 1, i == 0 ? 3 : 1));
            if (!v.trials.back().passed)
                break;
        }
        if (auto r = guard::vacuousTrials(v, m_referenceFinite))
            v.reasons.push_back(*r);
        m_verifyMs = millisSince(verify0);
        if (guard::finishVerification(v, m_options))
            return v;
        const auto bench0 = Clock::now();
        benchmark();
        m_benchMs = millisSince(bench0);
        log();
        return v;
    }

    static double millisSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

    void checkDeadline(const std::string &during)
    {
        if (Clock::now() > m_deadline)
            throw DeadlineReached{during};
    }

    // The most the pipeline holds in the program's memory at once: the larger of a trial's buffers
    // and the benchmark's sets (workspaces are not known before loading; CPU candidates have none).
    int64_t arenaBytes(const std::vector<TrialSpec> &trials) const
    {
        int64_t most = 0;
        for (const auto &t : trials)
            most = std::max(most, tensorBytes(t.shape));
        return (most + bandBytes()) * (setsFor(tensorBytes(m_card.shape) + bandBytes()) + 1) + (64 << 20);
    }

    // The guard bands before and after every buffer of one set.
    int64_t bandBytes() const { return 2 * kBandBytes * int64_t(m_card.inputs.size() + m_card.outputs.size()); }

    // Enough input sets of `bytesPerSet` to outsize the cache twice, at least three and at most the device's.
    int setsFor(int64_t bytesPerSet) const
    {
        return int(std::clamp<int64_t>(2 * m_device.cacheBytes() / std::max<int64_t>(bytesPerSet, 1) + 1, 3, std::max(3, m_device.maxInputSets())));
    }

    int64_t tensorBytes(const ShapeBindings &shape) const
    {
        int64_t n = 0;
        for (const auto &t : m_card.inputs)
            n += roundUp(m_card.numel(t, shape) * dtypeSize(t.dtype), 256);
        for (const auto &t : m_card.outputs)
            n += roundUp(m_card.numel(t, shape) * dtypeSize(t.dtype), 256);
        return n;
    }

    uint64_t seed() { return m_rng(); }

    Guarded guarded(const std::vector<int64_t> &sizes, at::ScalarType type)
    {
        int64_t numel = 1;
        for (int64_t s : sizes)
            numel *= s;
        Guarded g;
        g.bytes = numel * int64_t(at::elementSize(type));
        g.whole = m_program->allocate(2 * kBandBytes + roundUp(std::max<int64_t>(g.bytes, 1), 256));
        g.data = at::from_blob(static_cast<char *>(g.whole.data_ptr()) + kBandBytes, sizes, at::TensorOptions().dtype(type).device(g.whole.device()));
        g.bandSeed = seed();
        for (int which : {0, 1}) {
            auto b = g.band(which);
            fillBytes(b, g.bandSeed + uint64_t(which));
        }
        return g;
    }

    static int64_t bandDamage(const Guarded &g)
    {
        return countChangedBytes(g.band(0), g.bandSeed) + countChangedBytes(g.band(1), g.bandSeed + 1);
    }

    struct Buffers {
        std::vector<Guarded> in, out, ws;
        std::vector<uint64_t> outSeeds;
        std::vector<at::Tensor> views(const std::vector<Guarded> &g) const
        {
            std::vector<at::Tensor> v;
            for (const auto &x : g)
                v.push_back(x.data);
            return v;
        }
    };

    Buffers buffers(const ShapeBindings &shape, const std::vector<at::Tensor> &inputs)
    {
        Buffers b;
        for (const auto &t : inputs) {
            b.in.push_back(guarded(t.sizes().vec(), t.scalar_type()));
            b.in.back().data.copy_(t);
        }
        for (const auto &t : m_card.outputs)
            b.out.push_back(guarded(m_card.sizes(t, shape), scalarType(t.dtype)));
        for (int64_t bytes : m_program->workspaceBytes(shape))
            b.ws.push_back(guarded({std::max<int64_t>(bytes, 1)}, at::kByte));
        b.outSeeds.assign(b.out.size(), 0);
        return b;
    }

    // Before every run, checked or timed: a fresh fill of every output and workspace.
    void refill(Buffers &b)
    {
        for (size_t i = 0; i < b.out.size(); ++i) {
            b.outSeeds[i] = seed();
            fillUnwritten(b.out[i].data, b.outSeeds[i]);
        }
        for (auto &w : b.ws)
            fillBytes(w.data, seed());
    }

    LaunchOutcome launch(const ShapeBindings &shape, Buffers &b)
    {
        return m_program->launch(shape, b.views(b.in), b.views(b.out), b.views(b.ws));
    }

    // Where the float64 reference fits: on the device beside the harness's copies, else on the host.
    at::Device reference64Device(const ShapeBindings &shape)
    {
        const auto dev = m_device.torchDevice();
        const int64_t bytes = reference64Bytes(m_card, shape);
        if (!dev.is_cpu() && bytes >= (int64_t(1) << 30))
            m_device.releaseCachedMemory(); // free memory then means memory in one piece
        if (dev.is_cpu() || bytes < (int64_t(1) << 30) || double(bytes) < 0.9 * double(m_device.freeMemory()))
            return dev;
        note("the float64 reference was computed on the host: it did not fit in device memory beside the harness's copies");
        return at::Device(at::kCPU);
    }

    void note(const std::string &n)
    {
        if (std::find(m_verdict.notes.begin(), m_verdict.notes.end(), n) == m_verdict.notes.end())
            m_verdict.notes.push_back(n);
    }

    static std::string failureCode(LaunchOutcome::Kind k)
    {
        switch (k) {
        case LaunchOutcome::Kind::Crashed: return reason::Crashed;
        case LaunchOutcome::Kind::Timeout: return reason::Timeout;
        case LaunchOutcome::Kind::SandboxViolation: return reason::SandboxViolation;
        default: return reason::LaunchFailed;
        }
    }

    // Everything checked after one run of the candidate on `b`, against `kept` (the inputs as they
    // were before it ran). Empty when the run passed; fills the report's errors either way.
    std::optional<Reason> check(const ShapeBindings &shape, const Buffers &b, const std::vector<at::Tensor> &kept,
                                const std::vector<at::Tensor> &aten, const std::vector<Reference64> &ref64, TrialReport &tr)
    {
        const auto bands = [&](const std::vector<Guarded> &gs, auto name) -> std::optional<Reason> {
            for (size_t i = 0; i < gs.size(); ++i)
                if (const int64_t n = bandDamage(gs[i]); n > 0)
                    return Reason{reason::OutOfBoundsWrite, std::to_string(n) + " bytes in the guard bands around " + name(i) + " were written"};
            return std::nullopt;
        };
        if (auto r = bands(b.in, [&](size_t i) { return "input '" + m_card.inputs[i].name + "'"; }))
            return r;
        if (auto r = bands(b.out, [&](size_t i) { return "output '" + m_card.outputs[i].name + "'"; }))
            return r;
        if (auto r = bands(b.ws, [](size_t i) { return "workspace " + std::to_string(i); }))
            return r;
        for (size_t i = 0; i < b.in.size(); ++i)
            if (const int64_t n = countChanged(b.in[i].data, kept[i]); n > 0)
                return Reason{reason::InputModified, "input '" + m_card.inputs[i].name + "' was modified: " + std::to_string(n) + " of "
                                                         + std::to_string(kept[i].numel()) + " elements changed"};
        std::optional<Reason> failure;
        for (size_t i = 0; i < ref64.size() && !m_referenceFinite; ++i)
            m_referenceFinite = ref64[i].value.numel() == 0 || ref64[i].value.isfinite().any().item<bool>();
        for (size_t i = 0; i < b.out.size() && !failure; ++i) {
            const auto e = measureOutput(m_card.outputs[i].name, b.out[i].data, aten[i], ref64[i], m_card.errorModel, m_card.outputs[i].dtype,
                                         b.outSeeds[i]);
            tr.candidateError = std::max(tr.candidateError, e.candidateUnits);
            tr.atenError = std::max(tr.atenError, e.atenUnits);
            tr.allowedError = std::max(tr.allowedError, guard::allowedUnits(e.atenUnits));
            failure = guard::judgeOutput(e, m_card.errorModel);
            if (e.worstIndex >= 0) {
                tr.maxAbsError = std::max(tr.maxAbsError, std::abs(e.worstGot - e.worstExpected));
                tr.maxRelError = std::max(tr.maxRelError, std::abs(e.worstGot - e.worstExpected) / std::max(std::abs(e.worstExpected), 1e-30));
            }
        }
        for (size_t k = 0; k < m_card.invariants.size() && !failure; ++k)
            failure = checkInvariant(m_card.invariants[k], b.out.front().data);
        return failure;
    }

    struct References {
        std::vector<at::Tensor> aten;
        std::vector<Reference64> exact;
    };

    // ATen's result on its own copies of the inputs, and the float64 reference.
    References references(const std::vector<at::Tensor> &kept, const ShapeBindings &shape)
    {
        PhaseTimer t(m_phases.refs);
        References r;
        std::vector<at::Tensor> own;
        for (const auto &t : kept)
            own.push_back(t.clone());
        r.aten = callReference(m_card, own, &shape);
        own.clear();
        const auto where = reference64Device(shape);
        try {
            r.exact = callReference64(m_card, kept, shape, where);
        } catch (const c10::OutOfMemoryError &) {
            // The harness's own copy did not fit after all: never the candidate's failure.
            if (where.is_cpu())
                throw;
            m_device.releaseCachedMemory();
            note("the float64 reference ran out of device memory and was computed on the host");
            r.exact = callReference64(m_card, kept, shape, at::Device(at::kCPU));
        }
        return r;
    }

    TrialReport runTrial(const TrialSpec &trial, bool candidateFirst, int runs)
    {
        checkDeadline("before trial '" + trial.label + "'");
        TrialReport tr;
        tr.label = trial.label + (candidateFirst ? ", candidate first" : ", reference first");
        tr.shape = shapeString(m_card, trial.shape);
        // The inputs as made (or as the workload had them): the candidate sees guarded copies, never these.
        const auto kept = trial.special == kCapturedInputs ? capturedInputs(m_card, m_device.torchDevice())
                                                           : makeInputs(m_card, trial.shape, trial.scale, m_device.torchDevice(), trial.special);
        References refs;
        if (!candidateFirst) {
            refs = references(kept, trial.shape);
            int64_t bytes = 0;
            for (const auto &t : refs.aten)
                bytes += int64_t(t.nbytes());
            PhaseTimer t(m_phases.scrub);
            m_device.scrubFreeMemory(3 * bytes);
        }
        auto b = buffers(trial.shape, kept);
        for (int run = 0; run < runs; ++run) {
            LaunchOutcome outcome;
            {
                PhaseTimer t(m_phases.runs);
                refill(b);
                outcome = launch(trial.shape, b);
                if (outcome.ok())
                    outcome = m_device.synchronize("in trial '" + tr.label + "' (" + tr.shape + ")");
            }
            if (!outcome.ok()) {
                tr.failure = failureCode(outcome.kind);
                tr.detail = outcome.detail;
                return tr;
            }
            if (refs.aten.empty())
                refs = references(kept, trial.shape);
            PhaseTimer t(m_phases.checks);
            if (auto f = check(trial.shape, b, kept, refs.aten, refs.exact, tr)) {
                tr.failure = f->code;
                tr.detail = f->message + (runs > 1 ? " (run " + std::to_string(run + 1) + " of " + std::to_string(runs) + ")" : "");
                return tr;
            }
            checkDeadline("in trial '" + trial.label + "'");
        }
        tr.passed = true;
        return tr;
    }

    void benchmark()
    {
        Verdict &v = m_verdict;
        const auto &shape = m_card.shape;
        // Enough sets to outsize the cache twice and to rotate, within half of free memory and leaving
        // room for a spot check's copies and float64 reference beside them (else it would go to the host).
        const int64_t setBytes = tensorBytes(shape) + bandBytes();
        int sets = setsFor(setBytes);
        const int64_t freeBytes = m_device.freeMemory();
        const int64_t spotReserve = m_device.torchDevice().is_cpu() ? 0 : reference64Bytes(m_card, shape) + 2 * tensorBytes(shape);
        const int64_t budget = std::min(freeBytes / 2, freeBytes - spotReserve);
        while (sets > 1 && int64_t(sets) * setBytes > budget)
            --sets;
        if (sets < 3)
            note("the benchmark rotated " + std::to_string(sets) + " input set" + (sets == 1 ? "" : "s")
                 + " (more did not fit in memory), so consecutive runs may share buffers");
        std::vector<Buffers> bufs;
        std::vector<std::vector<int64_t>> prints;
        for (int i = 0; i < sets; ++i) {
            const auto in = makeInputs(m_card, shape, 1.0, m_device.torchDevice());
            bufs.push_back(buffers(shape, in));
            std::vector<int64_t> p;
            for (const auto &t : bufs.back().in)
                p.push_back(fingerprint(t.data));
            prints.push_back(std::move(p));
        }
        int next = 0; // every run, either side, takes the next set: no two consecutive runs share one
        auto candidateRun = [&](int s) { return launch(shape, bufs[size_t(s)]); };
        auto baselineRun = [&](int s) {
            callReference(m_card, bufs[size_t(s)].views(bufs[size_t(s)].in), &shape);
            return LaunchOutcome{};
        };
        auto fail = [&](const LaunchOutcome &o, const std::string &when) { failTimed(when, {failureCode(o.kind), o.detail}, {}); };

        const auto onOneCore = m_device.holdCore();
        std::optional<PhaseTimer> warmTimer(std::in_place, m_phases.warmup);
        const auto warm0 = Clock::now();
        const double warmupMs = m_device.warmupMillis(); // asked once: it depends on how long the device was idle
        // Every set is run by each side at least once before timing: a CPU candidate's jail otherwise
        // paid page faults in the first timed run on a set (120-190 us against 20 on a 128 x 512 layer norm).
        for (int i = 0; i < std::max({1, m_options.warmup, sets}) || millisSince(warm0) < warmupMs; ++i) {
            const int s = i % sets;
            refill(bufs[size_t(s)]);
            if (auto o = candidateRun(s); !o.ok())
                return fail(o, "while warming up");
            baselineRun((i + 1) % sets);
            next = i + 2;
            if (i % 8 == 7)
                if (auto o = m_device.synchronize("while warming up"); !o.ok())
                    return fail(o, "while warming up");
            checkDeadline("while warming up");
        }
        if (auto o = m_device.synchronize("while warming up"); !o.ok())
            return fail(o, "while warming up");

        warmTimer.reset();
        PhaseTimer timedTimer(m_phases.timed);
        // Short kernels are timed as recordings (graph replays), both sides alike.
        std::string method = m_device.torchDevice().is_cpu() ? "in the sandbox" : "eager";
        std::vector<std::unique_ptr<Recording>> candRec, baseRec;
        if (m_device.graphBelowMicros() > 0) {
            std::vector<double> pc, pb;
            for (int i = 0; i < 5; ++i) {
                LaunchOutcome o;
                const int s = next++ % sets;
                refill(bufs[size_t(s)]);
                pc.push_back(m_device.sample([&] { return candidateRun(s); }, o, {}));
                if (!o.ok())
                    return fail(o, "while timing");
                const int b = next++ % sets;
                pb.push_back(m_device.sample([&] { return baselineRun(b); }, o, [&] { return baselineRun((b + 1) % sets); }));
            }
            if (std::min(quantile(pc, 0.5), quantile(pb, 0.5)) < m_device.graphBelowMicros()) {
                for (int s = 0; s < sets; ++s) {
                    auto c = m_device.record([&] { candidateRun(s); });
                    auto b = m_device.record([&] { baselineRun(s); });
                    if (!c || !b) {
                        candRec.clear();
                        baseRec.clear();
                        note("kernels this short are usually timed as graph replays; capture failed, so they were timed eagerly");
                        break;
                    }
                    candRec.push_back(std::move(c));
                    baseRec.push_back(std::move(b));
                }
                if (!candRec.empty())
                    method = "graph replay";
            }
        }
        auto candidateOnce = [&](int s) {
            if (candRec.empty())
                return candidateRun(s);
            candRec[size_t(s)]->replay();
            return LaunchOutcome{};
        };
        auto baselineOnce = [&](int s) {
            if (baseRec.empty())
                return baselineRun(s);
            baseRec[size_t(s)]->replay();
            return LaunchOutcome{};
        };

        // Which timed runs of the candidate are checked in full: chosen now, unknowable to it.
        std::vector<int> spots(size_t(std::max(1, m_options.benchSamples)));
        for (size_t i = 0; i < spots.size(); ++i)
            spots[i] = int(i);
        std::shuffle(spots.begin(), spots.end(), m_rng);
        spots.resize(std::min<size_t>(spots.size(), kSpotChecks));

        guard::TimingInput timing;
        timing.method = method;
        for (int i = 0; i < m_options.benchSamples; ++i) {
            const auto candidateSample = [&]() -> bool {
                const int s = next++ % sets;
                refill(bufs[size_t(s)]);
                LaunchOutcome o;
                timing.candidateUs.push_back(m_device.sample([&] { return candidateOnce(s); }, o, {}));
                if (!o.ok()) {
                    fail(o, "in timed run " + std::to_string(i + 1));
                    return false;
                }
                if (std::find(spots.begin(), spots.end(), i) != spots.end())
                    return spotCheck(bufs[size_t(s)], prints[size_t(s)], "timed run " + std::to_string(i + 1) + " (" + method + ")");
                return true;
            };
            const auto baselineSample = [&] {
                LaunchOutcome o;
                const int b = next++ % sets;
                timing.baselineUs.push_back(m_device.sample([&] { return baselineOnce(b); }, o, [&] { return baselineOnce((b + 1) % sets); }));
            };
            // Alternate which side goes first so drift (clocks, temperature) hits both equally.
            if (i % 2 == 0) {
                if (!candidateSample())
                    return;
                baselineSample();
            } else {
                baselineSample();
                if (!candidateSample())
                    return;
            }
            checkDeadline("while timing");
        }
        if (!finalCheck(bufs[0], candidateOnce, method))
            return;
        const double bytes = m_card.minBytes(shape);
        timing.bandwidth = m_device.streamBandwidth();
        timing.floorBytes = bytes;
        timing.floorUs = timing.bandwidth > 0 ? bytes / timing.bandwidth * 1e6 : 0.0;
        // Below the floor: the rate may have been measured at a slow moment (on the VM one worker measured
        // 24 GB/s, others 29-33, and called 35 honest points of a sweep suspect), so it is measured
        // again, the best kept, before the guard judges the timing against it.
        if (timing.floorUs > 0 && quantile(timing.candidateUs, 0.5) < timing.floorUs) {
            const double was = timing.bandwidth;
            timing.bandwidth = m_device.remeasureStreamBandwidth();
            timing.floorUs = timing.bandwidth > 0 ? bytes / timing.bandwidth * 1e6 : 0.0;
            if (timing.bandwidth > was) {
                char text[160];
                std::snprintf(text, sizeof text, "the candidate ran below the memory floor, so the device's rate was measured again: "
                                                 "%.1f GB/s, where it was %.1f", timing.bandwidth / 1e9, was / 1e9);
                note(text);
            }
        }
        guard::judgeTiming(timing, v);
    }

    // A timed run's outputs, checked as a trial would check them.
    bool spotCheck(Buffers &b, const std::vector<int64_t> &prints, const std::string &which)
    {
        PhaseTimer t(m_phases.spots);
        if (auto o = m_device.synchronize("after " + which); !o.ok())
            return failTimed(which, {failureCode(o.kind), o.detail}, {});
        for (size_t i = 0; i < b.in.size(); ++i)
            if (fingerprint(b.in[i].data) != prints[i])
                return failTimed(which, {reason::InputModified, "input '" + m_card.inputs[i].name + "' was modified"}, {});
        std::vector<at::Tensor> kept;
        for (const auto &g : b.in)
            kept.push_back(g.data.clone());
        const auto refs = references(kept, m_card.shape);
        TrialReport tr;
        if (auto f = check(m_card.shape, b, kept, refs.aten, refs.exact, tr))
            return failTimed(which, *f, tr);
        return true;
    }

    // The last run: inputs copied before it runs, then everything a trial checks.
    template<typename Once>
    bool finalCheck(Buffers &b, Once &candidateOnce, const std::string &method)
    {
        PhaseTimer t(m_phases.last);
        std::vector<at::Tensor> kept;
        for (const auto &g : b.in)
            kept.push_back(g.data.clone());
        refill(b);
        auto o = candidateOnce(0);
        if (o.ok())
            o = m_device.synchronize("after the benchmark");
        const std::string which = "after the benchmark (" + method + ")";
        if (!o.ok())
            return failTimed(which, {failureCode(o.kind), o.detail}, {});
        const auto refs = references(kept, m_card.shape);
        TrialReport tr;
        if (auto f = check(m_card.shape, b, kept, refs.aten, refs.exact, tr))
            return failTimed(which, *f, tr);
        return true;
    }

    bool failTimed(const std::string &which, const Reason &r, TrialReport tr)
    {
        tr.label = which;
        tr.shape = shapeString(m_card, m_card.shape);
        tr.failure = r.code;
        tr.detail = r.message;
        m_verdict.trials.push_back(tr);
        m_verdict.status = guard::statusForFailure(r.code);
        m_verdict.reasons.push_back({r.code, which + ": " + r.message});
        m_verdict.candidate = {};
        m_verdict.baseline = {};
        return false;
    }

    void log() const
    {
        // With KFORGE_WORKER_VERBOSE, one line per evaluation in the worker's log: where the time went.
        static const bool verbose = std::getenv("KFORGE_WORKER_VERBOSE") != nullptr;
        if (verbose)
            std::fprintf(stderr,
                         "kforge-worker: %s %s %s: compile %.0f ms%s%s, load %.0f ms, verify %.0f ms (%zu trials: references %.0f, scrub %.0f, "
                         "runs %.0f, checks %.0f), benchmark %.0f ms (warm-up %.0f, timed %.0f, spot-checks %.0f, final-check %.0f)\n",
                         m_device.backend().c_str(), m_card.key.c_str(), statusName(m_verdict.status).c_str(), m_verdict.compile.millis,
                         m_verdict.compile.cached ? " (cached)" : "",
                         m_verdict.compile.aheadWaitMs >= 0 ? (", ahead, waited " + std::to_string(int(m_verdict.compile.aheadWaitMs)) + " ms").c_str() : "",
                         m_loadMs, m_verifyMs, m_verdict.trials.size(), m_phases.refs, m_phases.scrub, m_phases.runs, m_phases.checks, m_benchMs,
                         m_phases.warmup, m_phases.timed, m_phases.spots, m_phases.last);
    }

    Device &m_device;
    const OperatorCard &m_card;
    const EvalOptions &m_options;
    std::mt19937_64 m_rng;
    Clock::time_point m_deadline;
    std::unique_ptr<Program> m_program;
    Verdict m_verdict;
    double m_loadMs = 0, m_verifyMs = 0, m_benchMs = 0;
    bool m_referenceFinite = false; // some trial's reference had a finite element to compare
    struct {
        double refs = 0, scrub = 0, runs = 0, checks = 0, warmup = 0, timed = 0, spots = 0, last = 0;
    } m_phases;
};

} // namespace

Verdict evaluate(Device &device, const OperatorCard &card, const Candidate &candidate, const EvalOptions &options)
{
    return Evaluation(device, card, options).run(candidate);
}

} // namespace kforge::worker
