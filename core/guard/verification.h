#pragma once
// The guard's rule for verification, pure: a candidate's trials become its verdict's status.
#include <optional>

#include "protocol/messages.h"
#include "protocol/verdict.h"

namespace kforge::guard {

// After verification: each kind of trial failure becomes one reason (with the first trial that showed
// it); a candidate with failure reasons is Incorrect, or a SandboxViolation's own status when that was
// the failure; a correct one that is not to be benchmarked is NotFaster with that said. Returns true
// when the verdict is final.
bool finishVerification(Verdict &v, const EvalOptions &options);

// Trials that all passed but on which the float64 reference was NaN or Inf in every element of every
// output compared nothing (a forward through log on normal draws): a kernel writing NaN would pass them.
// The reason to refuse the candidate, or nothing when some trial had a finite reference element.
std::optional<Reason> vacuousTrials(const Verdict &v, bool someReferenceFinite);

// The status of a candidate that failed with this reason: a crash or a timeout is what happened to it,
// anything else is a wrong or forbidden result.
VerdictStatus statusForFailure(const std::string &code);

} // namespace kforge::guard
