#include "ui/timeline_geometry.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

namespace kforge::ui {

TimelineLanes assignLanes(const std::vector<TimelineCall> &calls, LaneBy by)
{
    TimelineLanes out;
    out.laneOf.assign(calls.size(), 0);
    std::map<std::pair<int64_t, int>, std::vector<size_t>> byKey;
    bool any = false;
    for (size_t i = 0; i < calls.size(); ++i) {
        const auto &c = calls[i];
        byKey[{by == LaneBy::Thread ? c.tid : 0, std::max(0, c.depth)}].push_back(i);
        out.startUs = any ? std::min(out.startUs, c.startUs) : c.startUs;
        out.endUs = any ? std::max(out.endUs, c.startUs + c.durUs) : c.startUs + c.durUs;
        any = true;
    }
    for (auto &[key, idx] : byKey) {
        std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return calls[a].startUs < calls[b].startUs; });
        TimelineLane lane{key.first, key.second, std::move(idx), 0};
        for (size_t i : lane.calls) {
            lane.longestUs = std::max(lane.longestUs, calls[i].durUs);
            out.laneOf[i] = int(out.lanes.size());
        }
        out.lanes.push_back(std::move(lane));
    }
    return out;
}

TimeMapping fitMapping(double startUs, double endUs, double widthPx)
{
    const double span = std::max(endUs - startUs, 1.0);
    return {startUs, std::max(span / std::max(widthPx, 1.0), kMinUsPerPixel)};
}

TimeMapping clampMapping(TimeMapping m, double startUs, double endUs, double widthPx)
{
    const TimeMapping whole = fitMapping(startUs, endUs, widthPx);
    m.usPerPixel = std::clamp(m.usPerPixel, kMinUsPerPixel, std::max(whole.usPerPixel, kMinUsPerPixel));
    const double shown = m.usPerPixel * std::max(widthPx, 1.0);
    const double latestStart = std::max(startUs, std::max(endUs, startUs + 1.0) - shown);
    m.viewStartUs = std::clamp(m.viewStartUs, startUs, latestStart);
    return m;
}

TimeMapping zoomMapping(TimeMapping m, double anchorX, double factor, double startUs, double endUs, double widthPx)
{
    if (!(factor > 0))
        return clampMapping(m, startUs, endUs, widthPx);
    const double anchorUs = m.us(anchorX);
    m.usPerPixel /= factor;
    m = clampMapping(m, startUs, endUs, widthPx); // the scale first, then where the anchor lands
    m.viewStartUs = anchorUs - anchorX * m.usPerPixel;
    return clampMapping(m, startUs, endUs, widthPx);
}

TimeMapping panMapping(TimeMapping m, double dxPx, double startUs, double endUs, double widthPx)
{
    m.viewStartUs += dxPx * m.usPerPixel;
    return clampMapping(m, startUs, endUs, widthPx);
}

std::vector<TimelineBox> layoutBoxes(const std::vector<TimelineCall> &calls, const TimelineLanes &lanes, const TimeMapping &m,
                                     double widthPx, double minPx)
{
    std::vector<TimelineBox> out;
    const double viewEndUs = m.us(widthPx);
    for (size_t l = 0; l < lanes.lanes.size(); ++l) {
        const auto &lane = lanes.lanes[l];
        // Calls start in order; one starting before viewStart - longest cannot reach into view.
        const double from = m.viewStartUs - lane.longestUs;
        auto it = std::lower_bound(lane.calls.begin(), lane.calls.end(), from,
                                   [&](size_t i, double t) { return calls[i].startUs < t; });
        bool open = false;
        TimelineBox merged;
        double longest = 0;
        auto flush = [&] {
            if (open)
                out.push_back(merged);
            open = false;
        };
        for (; it != lane.calls.end() && calls[*it].startUs <= viewEndUs; ++it) {
            const auto &c = calls[*it];
            if (c.startUs + c.durUs < m.viewStartUs)
                continue;
            const double x0 = m.x(c.startUs), x1 = m.x(c.startUs + c.durUs);
            if (x1 - x0 >= minPx) {
                flush();
                out.push_back({int(l), x0, x1, *it, 1});
                continue;
            }
            // Under a pixel: joins the open box while it touches that box's last pixel column and
            // the box stays within two columns, so a dense stretch is a row of boxes coloured by
            // what dominates each, not one bar.
            if (open && std::floor(x0) <= std::floor(merged.x1) + 1 && std::floor(x0) - std::floor(merged.x0) < 2) {
                merged.x1 = std::max(merged.x1, x1);
                ++merged.count;
                if (c.durUs > longest) {
                    longest = c.durUs;
                    merged.first = *it;
                }
                continue;
            }
            flush();
            merged = {int(l), x0, x1, *it, 1};
            longest = c.durUs;
            open = true;
        }
        flush();
    }
    return out;
}

long callAt(const std::vector<TimelineCall> &calls, const TimelineLane &lane, const TimeMapping &m, double x, double slackPx)
{
    const double t = m.us(x), slack = slackPx * m.usPerPixel;
    auto it = std::lower_bound(lane.calls.begin(), lane.calls.end(), t - lane.longestUs - slack,
                               [&](size_t i, double v) { return calls[i].startUs < v; });
    long covering = -1, nearest = -1;
    double nearestGap = slack;
    for (; it != lane.calls.end() && calls[*it].startUs <= t + slack; ++it) {
        const auto &c = calls[*it];
        const double end = c.startUs + c.durUs;
        if (c.startUs <= t && t <= end) {
            if (covering < 0 || c.durUs < calls[size_t(covering)].durUs)
                covering = long(*it);
            continue;
        }
        const double gap = t < c.startUs ? c.startUs - t : t - end;
        if (gap <= nearestGap) {
            nearestGap = gap;
            nearest = long(*it);
        }
    }
    return covering >= 0 ? covering : nearest;
}

double tickStepUs(double usPerPixel, double minGapPx)
{
    const double least = std::max(usPerPixel * minGapPx, 1e-6);
    double step = std::pow(10.0, std::floor(std::log10(least)));
    for (double k : {1.0, 2.0, 5.0, 10.0})
        if (step * k >= least * (1 - 1e-9))
            return step * k;
    return step * 10;
}

std::vector<double> tickTimes(double startUs, double endUs, double stepUs)
{
    std::vector<double> out;
    if (!(stepUs > 0) || endUs < startUs)
        return out;
    for (double k = std::ceil(startUs / stepUs - 1e-9); k * stepUs <= endUs + 1e-9 * stepUs && out.size() < 10000; ++k)
        out.push_back(k * stepUs + 0.0); // + 0.0: no "-0 ns" on the ruler
    return out;
}

std::string formatDuration(double us)
{
    char buf[64];
    const double a = std::fabs(us);
    if (a < 1)
        std::snprintf(buf, sizeof buf, "%.0f ns", us * 1000);
    else if (a < 1000)
        std::snprintf(buf, sizeof buf, "%.*f us", a < 10 ? 2 : a < 100 ? 1 : 0, us);
    else if (a < 1e6)
        std::snprintf(buf, sizeof buf, "%.*f ms", a < 1e4 ? 2 : a < 1e5 ? 1 : 0, us / 1000);
    else
        std::snprintf(buf, sizeof buf, "%.2f s", us / 1e6);
    return buf;
}

} // namespace kforge::ui
