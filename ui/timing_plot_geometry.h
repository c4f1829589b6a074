#pragma once
// Geometry of the verdict's timing plot, apart from any widget so it can be tested as plain functions.
//
// One axis in microseconds serves both rows (candidate above, baseline below): it spans every sample
// and is widened to whole ticks of a 1-2-5 step, 3 to 5 ticks. The roofline floor joins the span when
// it lies close (at most the samples' own span away); a floor further off would squeeze the samples
// into a few pixels, so it stays out and its line is clamped to the edge it lies beyond. Each sample
// is a dot on its row, jittered up and down by a fixed sequence so the same samples always draw the
// same picture; the box spans p25 to p75 with a tick at the median (the same quantiles as the table).
#include <cstddef>
#include <vector>

namespace kforge::ui {

struct TimingAxis {
    double loUs = 0, hiUs = 1; // the axis ends, on ticks
    double stepUs = 0.5;       // between ticks
    double x0 = 0, x1 = 1;     // pixels of loUs and hiUs

    double x(double us) const { return x0 + (us - loUs) / (hiUs - loUs) * (x1 - x0); }
    std::vector<double> ticks() const; // loUs, loUs + stepUs, ..., hiUs
};

// The axis over both sides' samples and the floor (0: none), drawn from x0 to x1 pixels.
TimingAxis timingAxis(const std::vector<double> &candidateUs, const std::vector<double> &baselineUs, double floorUs,
                      double x0, double x1);

// Decimals that print every tick of this step exactly: 5000 -> 0, 0.5 -> 1, 0.25 -> 2.
int tickDecimals(double stepUs);

// A fixed offset in [-0.5, 0.5) for the i-th sample (a golden-ratio sequence: evenly spread, no randomness).
double jitter(std::size_t i);

struct PlotDot {
    double x = 0, y = 0;
};

struct PlotRow {
    std::vector<PlotDot> dots; // one per sample, in input order
    bool hasBox = false;       // false without samples
    double boxX0 = 0, boxX1 = 0, medianX = 0;
    double centerY = 0;
};

// The dots and box of one side's samples in the row [top, top + height).
PlotRow plotRow(const std::vector<double> &samplesUs, const TimingAxis &axis, double top, double height);

struct FloorLine {
    bool shown = false; // a floor was measured
    double x = 0;       // clamped to [x0, x1]
    int outside = 0;    // -1: below the axis, +1: above it, 0: on it
};

FloorLine floorLine(double floorUs, const TimingAxis &axis);

} // namespace kforge::ui
