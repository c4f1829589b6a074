#include "ui/timing_plot_geometry.h"

#include <algorithm>
#include <cmath>

#include "util/stats.h"

namespace kforge::ui {

namespace {

// Whole intervals of `step` covering [lo, hi].
int intervals(double lo, double hi, double step)
{
    return int(std::ceil(hi / step - 1e-9) - std::floor(lo / step + 1e-9));
}

} // namespace

std::vector<double> TimingAxis::ticks() const
{
    std::vector<double> out;
    const int n = int(std::lround((hiUs - loUs) / stepUs));
    for (int i = 0; i <= n; ++i)
        out.push_back(loUs + i * stepUs);
    return out;
}

TimingAxis timingAxis(const std::vector<double> &candidateUs, const std::vector<double> &baselineUs, double floorUs,
                      double x0, double x1)
{
    double lo = INFINITY, hi = -INFINITY;
    for (const auto *side : {&candidateUs, &baselineUs})
        for (double v : *side) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    if (lo > hi) { // no samples: the floor alone, or a unit axis
        lo = hi = floorUs > 0 ? floorUs : 0.5;
    } else if (floorUs > 0) {
        const double span = hi - lo;
        if (floorUs >= lo - span && floorUs <= hi + span) {
            lo = std::min(lo, floorUs);
            hi = std::max(hi, floorUs);
        }
    }
    if (hi - lo < 1e-9) { // one value: a span around it, so the dot sits mid-axis
        const double pad = std::max(std::abs(lo) * 0.1, 0.05);
        lo -= pad;
        hi += pad;
    }
    lo = std::max(lo, 0.0);

    // The smallest 1-2-5 step with at most 4 intervals; one interval is halved to two.
    double step = std::pow(10.0, std::floor(std::log10(hi - lo)) - 1);
    for (int i = 0; intervals(lo, hi, step) > 4; ++i)
        step *= (i % 3 == 1) ? 2.5 : 2.0; // 1, 2, 5, 10, 20, 50, ...
    if (intervals(lo, hi, step) < 2)
        step /= 2;
    TimingAxis axis;
    axis.stepUs = step;
    axis.loUs = std::floor(lo / step + 1e-9) * step;
    axis.hiUs = std::ceil(hi / step - 1e-9) * step;
    axis.x0 = x0;
    axis.x1 = x1;
    return axis;
}

int tickDecimals(double stepUs)
{
    int d = 0;
    for (double scaled = stepUs; d < 6 && std::abs(scaled - std::round(scaled)) > 1e-6 * std::max(1.0, scaled); scaled *= 10)
        ++d;
    return d;
}

double jitter(std::size_t i)
{
    const double golden = 0.6180339887498949;
    const double f = double(i) * golden;
    return f - std::floor(f) - 0.5;
}

PlotRow plotRow(const std::vector<double> &samplesUs, const TimingAxis &axis, double top, double height)
{
    PlotRow row;
    row.centerY = top + height / 2;
    const double spread = height * 0.6; // dots keep off the row's edges and the labels between rows
    for (size_t i = 0; i < samplesUs.size(); ++i)
        row.dots.push_back({axis.x(samplesUs[i]), row.centerY + jitter(i) * spread});
    if (samplesUs.empty())
        return row;
    const auto s = summarize(samplesUs);
    row.hasBox = true;
    row.boxX0 = axis.x(s.p25);
    row.boxX1 = axis.x(s.p75);
    row.medianX = axis.x(s.median);
    return row;
}

FloorLine floorLine(double floorUs, const TimingAxis &axis)
{
    FloorLine f;
    if (floorUs <= 0)
        return f;
    f.shown = true;
    f.outside = floorUs < axis.loUs ? -1 : floorUs > axis.hiUs ? 1 : 0;
    f.x = axis.x(std::clamp(floorUs, axis.loUs, axis.hiUs));
    return f;
}

} // namespace kforge::ui
