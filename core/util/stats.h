#pragma once
// Order statistics for timing samples: medians and spreads, never means, because timing noise is
// one-sided (preemption, cache misses) and a mean lets one outlier move the verdict.
#include <vector>

namespace kforge {

struct SampleSummary {
    double median = 0;
    double p25 = 0;
    double p75 = 0;
    double min = 0;
    double max = 0;
    int count = 0;
    // Half the inter-quartile range relative to the median: the noise band used in decisions.
    double relativeSpread() const { return median > 0 ? (p75 - p25) / (2.0 * median) : 0.0; }
};

double quantile(std::vector<double> values, double q);
SampleSummary summarize(const std::vector<double> &samples);

} // namespace kforge
