#include "guard/timing.h"

#include <algorithm>
#include <cstdio>

namespace kforge::guard {

VerdictStatus decideSpeed(double speedup, double noise)
{
    return speedup > 1.0 + noise ? VerdictStatus::Accepted : VerdictStatus::NotFaster;
}

void judgeTiming(const TimingInput &t, Verdict &v)
{
    v.candidate.samplesUs = t.candidateUs;
    v.baseline.samplesUs = t.baselineUs;
    v.candidate.summary = summarize(t.candidateUs);
    v.baseline.summary = summarize(t.baselineUs);
    const double c = v.candidate.summary.median, b = v.baseline.summary.median;
    v.speedup = c > 0 ? b / c : 0.0;
    v.noise = std::max({v.candidate.summary.relativeSpread(), v.baseline.summary.relativeSpread(), kMinNoise});
    v.rooflineUs = t.floorUs;
    char buf[400];
    if (t.candidateUs.empty() || t.baselineUs.empty() || c <= 0) {
        v.status = VerdictStatus::Error;
        v.reasons.push_back({reason::BadRequest, "no timing samples were taken"});
        return;
    }
    if (t.floorUs > 0 && c < t.floorUs * kFloorMargin) {
        std::snprintf(buf, sizeof buf,
                      "the candidate's median %.2f us is below the roofline floor %.2f us (%.0f bytes at the device's fastest measured "
                      "rate of %.0f GB/s) by more than %.0f%%: the measurement is being fooled",
                      c, t.floorUs, t.floorBytes, t.bandwidth / 1e9, (1 - kFloorMargin) * 100);
        v.status = VerdictStatus::Suspect;
        v.reasons.push_back({reason::BelowRoofline, buf});
        return;
    }
    v.status = decideSpeed(v.speedup, v.noise);
    if (v.status == VerdictStatus::NotFaster) {
        std::snprintf(buf, sizeof buf, "%.3fx the baseline does not clear the noise band of %.1f%% (%s timing)", v.speedup, v.noise * 100,
                      t.method.c_str());
        v.reasons.push_back({reason::NotFaster, buf});
    }
}

} // namespace kforge::guard
