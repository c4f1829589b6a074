#pragma once
// The result of evaluating one candidate against one operator card: did it compile, was it correct
// on every trial, how fast was it against the baseline measured in the same run, and why it was
// rejected if it was.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/stats.h"

namespace kforge {

enum class VerdictStatus {
    Accepted,     // correct on every trial and faster than the baseline by more than the noise
    NotFaster,    // correct, but not faster than the baseline by more than the noise
    CompileError, // the compiler refused it
    Incorrect,    // compiled and ran, failed a check (the reasons say which)
    Suspect,      // faster than the roofline allows: a measurement is being fooled
    Crashed,      // the worker died while running it
    Timeout,      // it did not finish before the deadline
    Error,        // the request could not be carried out (bad card, missing backend, ...)
};
std::string statusName(VerdictStatus s);
VerdictStatus statusFromName(const std::string &s);
bool statusIsFailure(VerdictStatus s); // the candidate itself is broken

// Stable reason codes; the message says the specifics.
namespace reason {
inline constexpr const char *CompileError = "compile_error";
inline constexpr const char *MissingEntry = "missing_entry_point";
inline constexpr const char *EntryFailed = "entry_returned_error";
inline constexpr const char *OutputNotWritten = "output_not_written";
inline constexpr const char *InputModified = "input_modified";
inline constexpr const char *Mismatch = "mismatch";
inline constexpr const char *UnexpectedNonFinite = "unexpected_nan_or_inf";
inline constexpr const char *InvariantViolated = "invariant_violated";
inline constexpr const char *NotFaster = "not_faster";
inline constexpr const char *BelowRoofline = "below_roofline";
inline constexpr const char *Crashed = "worker_crashed";
inline constexpr const char *Timeout = "timeout";
inline constexpr const char *BadRequest = "bad_request";
inline constexpr const char *StaticCheck = "static_check";               // device launch, clock read, persistent device global
inline constexpr const char *LaunchPlanInvalid = "launch_plan_invalid"; // the CUDA launch plan cannot run on this device
inline constexpr const char *LaunchFailed = "launch_failed";            // the driver refused a launch (recoverable)
inline constexpr const char *OutOfBoundsWrite = "out_of_bounds_write";  // wrote into the guard band around an output
inline constexpr const char *SandboxViolation = "sandbox_violation";    // a CPU candidate broke its sandbox's rules
inline constexpr const char *VacuousTrials = "vacuous_trials";         // every trial's reference was NaN/Inf everywhere
inline constexpr const char *HarnessLimit = "harness_limit";            // the harness could not afford a check (said, not a failure)
} // namespace reason

struct Reason {
    std::string code;
    std::string message;
};

struct CompileReport {
    bool ok = false;
    bool cached = false;
    double millis = 0;
    std::string log;
    std::string target; // "x86_64-g++-O3" or "sm_90"
    // Compiled in the background while the evaluation before it ran (Device::prepare): how long this
    // evaluation still waited for it; -1 when it was compiled in line.
    double aheadWaitMs = -1;
};

struct TrialReport {
    std::string label; // "scale=8", "held-out 7x1027", "order=candidate-first"
    std::string shape; // "512x1024"
    bool passed = false;
    double maxAbsError = 0;
    double maxRelError = 0;
    std::string failure; // reason code when it failed
    std::string detail;
    // Against the float64 reference, in units of the operation's error bound (core/guard/numerics.h):
    // the candidate's worst error, ATen's own worst error on the same inputs, and what was allowed.
    double candidateError = 0;
    double atenError = 0;
    double allowedError = 0;
};

struct TimingReport {
    std::vector<double> samplesUs;
    SampleSummary summary;
};

struct Verdict {
    VerdictStatus status = VerdictStatus::Error;
    std::vector<Reason> reasons;
    CompileReport compile;
    std::vector<TrialReport> trials;
    TimingReport candidate;
    TimingReport baseline;
    double speedup = 0;     // baseline median / candidate median
    double noise = 0;       // relative noise band the speedup had to clear
    double rooflineUs = 0;  // the floor from the card's bytes model
    std::string worker;     // which worker evaluated it
    std::string device;     // the device both sides were timed on (deviceLabel of its worker's hello)
    std::vector<std::string> notes; // what the harness did differently and why (fewer input sets, a check on the host)

    bool correct() const;
    std::string summaryLine() const;
};

void to_json(nlohmann::json &j, const Verdict &v);
void from_json(const nlohmann::json &j, Verdict &v);
void to_json(nlohmann::json &j, const TimingReport &t);
void from_json(const nlohmann::json &j, TimingReport &t);

// A verdict for a candidate whose evaluation never produced one (crash, timeout, bad request).
Verdict failureVerdict(VerdictStatus status, const std::string &code, const std::string &message);

} // namespace kforge
