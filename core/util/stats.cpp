#include "util/stats.h"

#include <algorithm>
#include <cmath>

namespace kforge {

double quantile(std::vector<double> values, double q)
{
    if (values.empty())
        return 0.0;
    std::sort(values.begin(), values.end());
    const double pos = q * double(values.size() - 1);
    const auto lo = size_t(std::floor(pos));
    const auto hi = std::min(lo + 1, values.size() - 1);
    const double frac = pos - double(lo);
    return values[lo] * (1.0 - frac) + values[hi] * frac;
}

SampleSummary summarize(const std::vector<double> &samples)
{
    SampleSummary s;
    s.count = int(samples.size());
    if (samples.empty())
        return s;
    s.median = quantile(samples, 0.5);
    s.p25 = quantile(samples, 0.25);
    s.p75 = quantile(samples, 0.75);
    s.min = *std::min_element(samples.begin(), samples.end());
    s.max = *std::max_element(samples.begin(), samples.end());
    return s;
}

} // namespace kforge
