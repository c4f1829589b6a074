#pragma once
// Geometry of the profiler timeline, apart from any widget so it can be tested as plain functions.
//
// Time maps to x linearly: x = (t - viewStartUs) / usPerPixel. Zooming keeps the time under the
// cursor where it is; the scale is bounded (a nanosecond a pixel at most, the whole profile on the
// widest view at least) and panning never leaves the profile. Calls go to lanes, one per depth or one
// per (thread, depth); each lane keeps its calls in start order so a frame only visits what it shows.
// Level of detail: calls narrower than a pixel that touch the same pixel columns merge into one box,
// so 100,000 calls zoomed out cost a few hundred rectangles.
#include <cstdint>
#include <string>
#include <vector>

namespace kforge::ui {

struct TimelineCall {
    double startUs = 0, durUs = 0;
    int depth = 0;
    int64_t tid = 0;
};

enum class LaneBy { Depth, Thread };

struct TimelineLane {
    int64_t tid = 0; // with LaneBy::Thread; 0 otherwise
    int depth = 0;
    std::vector<size_t> calls; // indices into the input, by start time
    double longestUs = 0;      // the lane's longest call, to find what overlaps a time window
};

struct TimelineLanes {
    std::vector<TimelineLane> lanes; // by (tid, depth) ascending
    std::vector<int> laneOf;         // per input call
    double startUs = 0, endUs = 0;   // the earliest start and the latest end (0, 0 without calls)
};

TimelineLanes assignLanes(const std::vector<TimelineCall> &calls, LaneBy by);

// The visible window: its left edge in microseconds and the scale.
struct TimeMapping {
    double viewStartUs = 0;
    double usPerPixel = 1;

    double x(double us) const { return (us - viewStartUs) / usPerPixel; }
    double us(double x) const { return viewStartUs + x * usPerPixel; }
    bool operator==(const TimeMapping &) const = default;
};

inline constexpr double kMinUsPerPixel = 0.001; // a nanosecond a pixel

// The whole span [startUs, endUs] across widthPx (a span of zero length shows a microsecond).
TimeMapping fitMapping(double startUs, double endUs, double widthPx);
// Zoom by `factor` (> 1 zooms in) about the pixel anchorX, then clamp to the profile.
TimeMapping zoomMapping(TimeMapping m, double anchorX, double factor, double startUs, double endUs, double widthPx);
// Pan by dxPx pixels (> 0 shows later times), then clamp.
TimeMapping panMapping(TimeMapping m, double dxPx, double startUs, double endUs, double widthPx);
// Never more zoomed out than the whole profile fitted, never past its ends.
TimeMapping clampMapping(TimeMapping m, double startUs, double endUs, double widthPx);

// One rectangle to draw in a lane: a call, or several calls merged where each is under a pixel.
struct TimelineBox {
    int lane = 0;
    double x0 = 0, x1 = 0; // pixels, unclipped
    size_t first = 0;      // the call (or the longest of the merged calls), an input index
    int count = 1;         // how many calls it stands for
};

// The boxes of every lane inside [0, widthPx) for this mapping, lane by lane in start order. A call at
// least minPx wide is its own box; narrower ones merge while they touch the previous box's pixels,
// up to two pixel columns a box.
std::vector<TimelineBox> layoutBoxes(const std::vector<TimelineCall> &calls, const TimelineLanes &lanes, const TimeMapping &m,
                                     double widthPx, double minPx = 1.0);

// The call under x in the lane, or -1: the shortest call covering that time, else the nearest one
// within slackPx (so a call narrower than a pixel can still be hovered).
long callAt(const std::vector<TimelineCall> &calls, const TimelineLane &lane, const TimeMapping &m, double x, double slackPx = 2.0);

// A label is drawn only where it fits inside its box with a margin on each side.
inline bool labelFits(double boxPx, double textPx, double marginPx = 3.0)
{
    return boxPx >= textPx + 2 * marginPx;
}

// Ticks for the time ruler: a 1-2-5 step that leaves at least minGapPx between ticks, and the
// tick times inside [startUs, endUs].
double tickStepUs(double usPerPixel, double minGapPx = 80.0);
std::vector<double> tickTimes(double startUs, double endUs, double stepUs);
std::string formatDuration(double us); // "850 ns", "12.5 us", "3.20 ms", "1.25 s"

} // namespace kforge::ui
