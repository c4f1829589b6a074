#pragma once
// The one evaluation pipeline, for every backend: load, verify, time, judge.
//
//  1. Load: the device compiles (cached, the cache entry checked) and loads the candidate; every trial
//     shape is checked against what the device can launch.
//  2. Verify (trialPlan): reference first on odd trials (freed memory scrubbed after it, so no buffer
//     holds its result) and candidate first on even ones (so a candidate that searches for the live
//     result finds none); the captured shape runs three times in the first trial, to catch races.
//     Before every run, outputs get a fresh fill of signalling NaNs and workspaces random bytes; every
//     buffer the candidate sees sits between guard bands of random bytes. After a run: bands intact,
//     inputs unchanged, nothing unwritten, errors against float64 within what ATen's own error allows
//     (core/guard/numerics.h), the card's invariants. The first failed trial ends verification.
//  3. Time: rotating input sets (enough that no two consecutive runs share buffers), candidate and
//     baseline interleaved, warmed up, caches flushed before each sample; outputs and workspaces filled
//     afresh before every run, exactly as in a checked run, and the outputs of randomly chosen timed runs
//     checked in full. A final check runs the candidate on inputs copied before it ran.
//  4. Judge (core/guard/timing.h): the speedup against the noise band and the roofline floor.
// The harness fits its copies to the device's free memory (fewer sets, a float64 reference on the
// host) and says so in the verdict's notes; it never fails a candidate for its own memory.
#include "worker/pipeline/device.h"

namespace kforge::worker {

Verdict evaluate(Device &device, const OperatorCard &card, const Candidate &candidate, const EvalOptions &options);

} // namespace kforge::worker
