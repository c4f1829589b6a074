#pragma once
// The profiler timeline: the workload's ATen calls on a time axis, one lane per depth (or per thread
// and depth), zoomed with the wheel about the cursor, panned by dragging or the scroll bar, fitted by
// a double click. A QAbstractScrollArea that paints itself: the geometry (timeline_geometry.h) says
// where every box goes and merges calls under a pixel, so a frame costs what it shows, not what the
// profile holds. With a second profile (the workload run with a pack) both are drawn one above the
// other on one axis; the operators whose time changed are coloured (faster green, slower red) and
// marked, and each track's header gives its total. Calls of the selected card are outlined.
#include <QAbstractScrollArea>
#include <QPointer>
#include <vector>

#include "ui/timeline_geometry.h"

namespace kforge::ui {

class WorkloadContext;
class WorkloadProfile;

class TimelineView : public QAbstractScrollArea {
    Q_OBJECT
public:
    explicit TimelineView(WorkloadContext *context, QWidget *parent = nullptr);

    void setLaneBy(LaneBy by);
    LaneBy laneBy() const { return m_laneBy; }
    void fit();
    void showRange(double startUs, double endUs); // microseconds from the first call
    void zoomAt(double x, double factor);
    void panBy(double dxPx);
    const TimeMapping &mapping() const { return m_mapping; }
    double axisEndUs() const { return m_endUs; }

    // What a frame drew (for tests and the bench): boxes, merged calls, labels, changed markers.
    struct FrameStats {
        int boxes = 0, mergedCalls = 0, labels = 0, markers = 0, highlighted = 0;
    };
    const FrameStats &lastFrame() const { return m_stats; }
    // The call under a viewport point: which profile (0 the shown one, 1 the one with the pack) and
    // which call, or {-1, -1}.
    std::pair<int, long> callAtPoint(QPoint p) const;
    QString describeCall(int track, long call) const; // the hover text
    QRect trackRect(int track) const;                  // in viewport coordinates

protected:
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    bool viewportEvent(QEvent *event) override;
    void scrollContentsBy(int dx, int dy) override;

private:
    struct Track {
        const WorkloadProfile *profile = nullptr;
        int top = 0; // content y of its header
        int height = 0;
    };
    void reload();
    void layoutTracks();
    void syncScrollBars();
    void updateHighlight();
    int laneTop(const Track &t, int lane) const;
    double width() const;

    QPointer<WorkloadContext> m_context;
    LaneBy m_laneBy = LaneBy::Depth;
    TimeMapping m_mapping;
    double m_endUs = 1;
    std::vector<Track> m_tracks;
    std::vector<char> m_highlight[2]; // per call of each profile: a call of the selected card
    int m_contentHeight = 0;
    bool m_syncing = false;
    bool m_dragging = false;
    QPoint m_dragFrom;
    FrameStats m_stats;
};

} // namespace kforge::ui
