#pragma once
// The guard's rule for speed, pure: timing samples, the roofline floor and the noise band become a
// status with its reasons.
//
// The speedup is the ratio of medians (baseline over candidate), candidate and baseline interleaved in
// one run. It must clear the noise band: the larger relative spread of the two sides, never under
// kMinNoise, because the same kernel timed in separate runs moved by 1.5-3% on an H200. The floor is
// the card's fewest bytes at the device's fastest measured rate (the larger of its copy rate and its
// rate of streaming reads: a reduction to a scalar reads at 110% of the copy rate on the H200); one-pass
// kernels beat those slightly (101-103%), so a median is suspect only more than kFloorMargin below it.
#include <string>
#include <vector>

#include "protocol/verdict.h"

namespace kforge::guard {

inline constexpr double kMinNoise = 0.02;
inline constexpr double kFloorMargin = 0.93;

struct TimingInput {
    std::vector<double> candidateUs, baselineUs;
    double floorUs = 0;       // 0: no roofline known
    double floorBytes = 0;    // for the message
    double bandwidth = 0;     // bytes per second, for the message
    std::string method;       // "eager", "graph replay", "in the sandbox": said in the reasons
};

// A correct candidate is accepted only when faster than the baseline by more than the noise band.
VerdictStatus decideSpeed(double speedup, double noise);

// Fills the verdict's timing fields (summaries, speedup, noise, roofline) and decides Accepted,
// NotFaster or Suspect with the reason.
void judgeTiming(const TimingInput &t, Verdict &v);

} // namespace kforge::guard
