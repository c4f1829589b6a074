#include "ui/timeline_view.h"

#include <QFontMetrics>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <climits>
#include <cmath>

#include "ui/theme.h"
#include "ui/workload_context.h"

namespace kforge::ui {

namespace {

constexpr int kRuler = 22, kHeader = 20, kLane = 18, kTrackGap = 10;

QString text(const std::string &s)
{
    return QString::fromStdString(s);
}

QString duration(double us)
{
    return text(formatDuration(us));
}

// A muted colour per operator, stable across runs (the same op has the same colour in both tracks).
QColor opColour(const std::string &op)
{
    static const QColor palette[] = {{0x8d, 0xa9, 0xc4}, {0xb5, 0xa6, 0xc9}, {0xa8, 0xc6, 0x9f}, {0xe0, 0xc0, 0x8a},
                                     {0x9c, 0xc5, 0xc0}, {0xd4, 0xa5, 0xa5}, {0xc2, 0xb2, 0x80}, {0xa3, 0xb8, 0xd8}};
    return palette[std::hash<std::string>{}(op) % std::size(palette)];
}

const QColor kFaster(0x2e, 0x9e, 0x4f), kSlower(0xd2, 0x3f, 0x31), kUnchanged(0xc8, 0xc8, 0xc4), kSelected(0x1e, 0x6f, 0xd9);

std::string shortName(const std::string &op)
{
    const auto p = op.find("::");
    return p == std::string::npos ? op : op.substr(p + 2);
}

} // namespace

TimelineView::TimelineView(WorkloadContext *context, QWidget *parent) : QAbstractScrollArea(parent), m_context(context)
{
    setMouseTracking(true);
    viewport()->setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setMinimumSize(320, 120);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
    connect(context, &WorkloadContext::profileLoaded, this, [this] {
        reload();
        fit();
    });
    connect(context, &WorkloadContext::comparisonChanged, this, [this] {
        reload();
        fit();
    });
    connect(context, &WorkloadContext::cardSelected, this, [this] {
        updateHighlight();
        viewport()->update();
    });
    reload();
}

double TimelineView::width() const
{
    return std::max(1, viewport()->width());
}

void TimelineView::reload()
{
    m_endUs = 1;
    if (m_context && m_context->profile())
        for (const auto *p : {m_context->profile().get(), m_context->after().get()})
            if (p)
                m_endUs = std::max(m_endUs, p->lanes(m_laneBy).endUs);
    layoutTracks();
    updateHighlight();
}

void TimelineView::layoutTracks()
{
    m_tracks.clear();
    int y = kRuler;
    if (m_context && m_context->profile())
        for (const auto *p : {m_context->profile().get(), m_context->after().get()}) {
            if (!p)
                continue;
            const int h = kHeader + int(p->lanes(m_laneBy).lanes.size()) * kLane;
            m_tracks.push_back({p, y, h});
            y += h + kTrackGap;
        }
    m_contentHeight = y;
    syncScrollBars();
}

void TimelineView::updateHighlight()
{
    for (int t = 0; t < 2; ++t)
        m_highlight[t].clear();
    if (!m_context || m_context->selectedSignature().empty())
        return;
    const auto &sig = m_context->selectedSignature();
    for (size_t t = 0; t < m_tracks.size() && t < 2; ++t) {
        const auto *p = m_tracks[t].profile;
        m_highlight[t].assign(p->timeline().size(), 0);
        const long g = p->groupOfSignature(sig);
        if (g >= 0)
            for (size_t c : p->groups()[size_t(g)].calls)
                m_highlight[t][c] = 1;
    }
}

void TimelineView::setLaneBy(LaneBy by)
{
    if (by == m_laneBy)
        return;
    m_laneBy = by;
    reload();
    viewport()->update();
}

void TimelineView::fit()
{
    m_mapping = fitMapping(0, m_endUs, width());
    syncScrollBars();
    viewport()->update();
}

void TimelineView::showRange(double startUs, double endUs)
{
    m_mapping = clampMapping({startUs, std::max(endUs - startUs, kMinUsPerPixel) / width()}, 0, m_endUs, width());
    syncScrollBars();
    viewport()->update();
}

void TimelineView::zoomAt(double x, double factor)
{
    m_mapping = zoomMapping(m_mapping, x, factor, 0, m_endUs, width());
    syncScrollBars();
    viewport()->update();
}

void TimelineView::panBy(double dxPx)
{
    m_mapping = panMapping(m_mapping, dxPx, 0, m_endUs, width());
    syncScrollBars();
    viewport()->update();
}

// The horizontal bar counts pixels at the current scale; the vertical one scrolls the lanes.
void TimelineView::syncScrollBars()
{
    m_syncing = true;
    const double totalPx = m_endUs / m_mapping.usPerPixel;
    const double maxPx = std::clamp(totalPx - width(), 0.0, double(INT_MAX / 2));
    horizontalScrollBar()->setRange(0, int(maxPx));
    horizontalScrollBar()->setPageStep(int(width()));
    horizontalScrollBar()->setSingleStep(std::max(1, int(width() / 20)));
    horizontalScrollBar()->setValue(int(std::min(maxPx, m_mapping.viewStartUs / m_mapping.usPerPixel)));
    verticalScrollBar()->setRange(0, std::max(0, m_contentHeight - viewport()->height()));
    verticalScrollBar()->setPageStep(viewport()->height());
    verticalScrollBar()->setSingleStep(kLane);
    m_syncing = false;
}

void TimelineView::scrollContentsBy(int, int)
{
    if (!m_syncing) {
        m_mapping.viewStartUs = horizontalScrollBar()->value() * m_mapping.usPerPixel;
        m_mapping = clampMapping(m_mapping, 0, m_endUs, width());
    }
    viewport()->update();
}

int TimelineView::laneTop(const Track &t, int lane) const
{
    return t.top + kHeader + lane * kLane - verticalScrollBar()->value();
}

QRect TimelineView::trackRect(int track) const
{
    if (track < 0 || size_t(track) >= m_tracks.size())
        return {};
    const auto &t = m_tracks[size_t(track)];
    return {0, t.top - verticalScrollBar()->value(), viewport()->width(), t.height};
}

void TimelineView::paintEvent(QPaintEvent *)
{
    QPainter p(viewport());
    m_stats = {};
    const QRect area = viewport()->rect();
    const Theme colours = theme(palette());
    p.fillRect(area, colours.canvas);
    if (!m_context || !m_context->profile()) {
        p.setPen(colours.mutedInk);
        p.drawText(area, Qt::AlignCenter | Qt::TextWordWrap,
                   QStringLiteral("No workload open.\n\nFile > Open Workload shows a profiled workload's ATen calls here."));
        return;
    }
    const QFontMetrics fm = p.fontMetrics();
    const ProfileComparison *cmp = m_context->comparison();
    const double w = width();

    for (size_t ti = 0; ti < m_tracks.size(); ++ti) {
        const Track &t = m_tracks[ti];
        const auto &profile = *t.profile;
        const auto &lanes = profile.lanes(m_laneBy);
        const auto &calls = profile.timeline();
        const int top = t.top - verticalScrollBar()->value();
        if (top > area.bottom() || top + t.height < kRuler)
            continue;
        // The header: which profile, its total, and against the other one.
        QString title = QStringLiteral("%1 · %2 · %3 calls · %4 at top level")
                            .arg(ti == 0 ? (cmp ? QStringLiteral("Before") : QStringLiteral("Profile")) : QStringLiteral("With the pack"),
                                 text(profile.file().name))
                            .arg(calls.size())
                            .arg(duration(profile.topLevelUs()));
        if (ti == 1 && cmp && cmp->beforeUs > 0)
            title += QStringLiteral(" (%1%2%, %3x)")
                         .arg(cmp->afterUs <= cmp->beforeUs ? QStringLiteral("−") : QStringLiteral("+"))
                         .arg(std::fabs(100.0 * (cmp->afterUs - cmp->beforeUs) / cmp->beforeUs), 0, 'f', 1)
                         .arg(cmp->afterUs > 0 ? cmp->beforeUs / cmp->afterUs : 0.0, 0, 'f', 2);
        p.fillRect(QRect(0, top, area.width(), kHeader), colours.panel);
        p.setPen(colours.ink);
        p.drawText(QRect(6, top, area.width() - 12, kHeader), Qt::AlignVCenter | Qt::AlignLeft, title);

        const auto boxes = layoutBoxes(calls, lanes, m_mapping, w);
        const auto &hl = ti < 2 ? m_highlight[ti] : m_highlight[0];
        for (const auto &b : boxes) {
            const int y = laneTop(t, b.lane);
            if (y + kLane < kRuler || y > area.bottom())
                continue;
            const double x0 = std::max(b.x0, -1.0), x1 = std::min(b.x1, w + 1);
            const QRectF r(x0, y + 1, std::max(1.0, x1 - x0), kLane - 2);
            const size_t call = b.first;
            const auto &cc = profile.file().calls[call];
            QColor fill = opColour(cc.op);
            bool marker = false;
            if (cmp) {
                const long g = profile.groupOfCall(call);
                const OperatorChange *o = g >= 0 ? cmp->find(profile.groups()[size_t(g)].signature) : nullptr;
                if (o && o->changed) {
                    fill = o->afterUs < o->beforeUs ? kFaster : kSlower;
                    marker = true;
                } else if (g >= 0) {
                    fill = kUnchanged;
                }
            }
            if (b.count > 1)
                fill = fill.darker(115);
            p.fillRect(r, fill);
            ++m_stats.boxes;
            m_stats.mergedCalls += b.count > 1 ? b.count : 0;
            const bool lit = !hl.empty() && hl[call];
            if (lit) {
                p.setPen(QPen(kSelected, 2));
                p.drawRect(r.adjusted(1, 1, -1, -1));
                ++m_stats.highlighted;
            }
            if (marker && r.width() >= 4) { // a small triangle on the box's top edge
                const QPointF tri[3] = {{r.left() + 1, r.top()}, {r.left() + 7, r.top()}, {r.left() + 1, r.top() + 6}};
                p.setPen(Qt::NoPen);
                p.setBrush(QColor(0x20, 0x20, 0x20));
                p.drawPolygon(tri, 3);
                p.setBrush(Qt::NoBrush);
                ++m_stats.markers;
            }
            if (b.count == 1) {
                const QString label = text(shortName(cc.op));
                if (labelFits(r.width(), fm.horizontalAdvance(label))) {
                    p.setPen(QColor(0x10, 0x10, 0x10));
                    p.drawText(r.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft, label);
                    ++m_stats.labels;
                }
            }
        }
        // Lane names at the left edge, over the boxes, where they fit.
        p.setPen(colours.mutedInk);
        for (size_t l = 0; l < lanes.lanes.size(); ++l) {
            const auto &lane = lanes.lanes[l];
            const QString name = m_laneBy == LaneBy::Thread ? QStringLiteral("t%1 d%2").arg(lane.tid).arg(lane.depth)
                                                            : QStringLiteral("d%1").arg(lane.depth);
            const int y = laneTop(t, int(l));
            if (y >= kRuler) {
                // On a backing of the canvas colour: the name sits over the boxes of its lane.
                const QRect at(area.width() - 56, y, 52, kLane);
                const int w = fm.horizontalAdvance(name) + 6;
                QColor backing = colours.canvas;
                backing.setAlpha(200);
                p.fillRect(QRect(at.right() - w + 3, at.top() + 2, w, kLane - 4), backing);
                p.drawText(at, Qt::AlignVCenter | Qt::AlignRight, name);
            }
        }
    }

    // The time ruler last, over anything scrolled under it.
    p.fillRect(QRect(0, 0, area.width(), kRuler), colours.panel);
    p.setPen(colours.ink);
    const double step = tickStepUs(m_mapping.usPerPixel);
    for (double t : tickTimes(m_mapping.viewStartUs, m_mapping.us(w), step)) {
        const int x = int(std::round(m_mapping.x(t)));
        p.drawLine(x, kRuler - 6, x, kRuler - 1);
        p.drawText(x + 3, kRuler - 8, duration(t));
    }
    p.drawLine(0, kRuler - 1, area.width(), kRuler - 1);
}

std::pair<int, long> TimelineView::callAtPoint(QPoint pt) const
{
    for (size_t ti = 0; ti < m_tracks.size(); ++ti) {
        const Track &t = m_tracks[ti];
        const auto &lanes = t.profile->lanes(m_laneBy);
        const int first = laneTop(t, 0);
        if (pt.y() < first || pt.y() < kRuler)
            continue;
        const int lane = (pt.y() - first) / kLane;
        if (lane >= int(lanes.lanes.size()))
            continue;
        const long c = kforge::ui::callAt(t.profile->timeline(), lanes.lanes[size_t(lane)], m_mapping, pt.x());
        return c >= 0 ? std::pair<int, long>{int(ti), c} : std::pair<int, long>{-1, -1};
    }
    return {-1, -1};
}

QString TimelineView::describeCall(int track, long call) const
{
    if (track < 0 || size_t(track) >= m_tracks.size() || call < 0)
        return {};
    const auto &profile = *m_tracks[size_t(track)].profile;
    const auto &c = profile.file().calls.at(size_t(call));
    const auto &tc = profile.timeline().at(size_t(call));
    QStringList dtypes;
    for (const auto &a : c.args)
        for (const auto &t : a.tensors)
            if (!dtypes.contains(text(t.dtype)))
                dtypes << text(t.dtype);
    QString tip = QStringLiteral("<b>%1</b><br>shapes: %2<br>dtype: %3<br>%4 at %5 · depth %6 · thread %7")
                      .arg(text(c.qualifiedName()).toHtmlEscaped(), text(callShapes(c)).toHtmlEscaped(),
                           dtypes.isEmpty() ? QStringLiteral("—") : dtypes.join(QStringLiteral(", ")), duration(c.durUs), duration(tc.startUs))
                      .arg(c.depth)
                      .arg(c.tid);
    const long g = profile.groupOfCall(size_t(call));
    if (g >= 0) {
        const auto &grp = profile.groups()[size_t(g)];
        tip += QStringLiteral("<br>pattern: %1 calls, %2 in all, %3% of the runtime")
                   .arg(grp.calls.size())
                   .arg(duration(grp.totalUs))
                   .arg(100.0 * grp.share, 0, 'f', 1);
        if (const auto *cmp = m_context ? m_context->comparison() : nullptr)
            if (const auto *o = cmp->find(grp.signature))
                tip += QStringLiteral("<br>before %1, with the pack %2%3")
                           .arg(duration(o->beforeUs), duration(o->afterUs),
                                o->changed && o->beforeUs > 0 && o->afterUs > 0
                                    ? QStringLiteral(" (%1x)").arg(o->beforeUs / o->afterUs, 0, 'f', 2)
                                    : QString());
    }
    if (m_context)
        if (const QString card = m_context->cardOfCall(track == 1, size_t(call)); !card.isEmpty())
            tip += QStringLiteral("<br>card: %1").arg(card.toHtmlEscaped());
    return tip;
}

bool TimelineView::viewportEvent(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        const auto [track, call] = callAtPoint(help->pos());
        if (call >= 0)
            QToolTip::showText(help->globalPos(), describeCall(track, call), viewport());
        else
            QToolTip::hideText();
        return true;
    }
    return QAbstractScrollArea::viewportEvent(event);
}

void TimelineView::resizeEvent(QResizeEvent *event)
{
    QAbstractScrollArea::resizeEvent(event);
    m_mapping = clampMapping(m_mapping, 0, m_endUs, width());
    syncScrollBars();
}

void TimelineView::wheelEvent(QWheelEvent *event)
{
    const double steps = event->angleDelta().y() / 120.0;
    if (event->modifiers() & Qt::ShiftModifier)
        panBy(-steps * width() / 8);
    else
        zoomAt(event->position().x(), std::pow(1.25, steps));
    event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton) {
        m_dragging = true;
        m_dragFrom = event->pos();
        const auto [track, call] = callAtPoint(event->pos());
        if (m_context)
            m_context->selectCard(call >= 0 ? m_context->cardOfCall(track == 1, size_t(call)) : QString());
    }
}

void TimelineView::mouseMoveEvent(QMouseEvent *event)
{
    if (m_dragging) {
        panBy(m_dragFrom.x() - event->pos().x());
        verticalScrollBar()->setValue(verticalScrollBar()->value() + m_dragFrom.y() - event->pos().y());
        m_dragFrom = event->pos();
    }
}

void TimelineView::mouseReleaseEvent(QMouseEvent *)
{
    m_dragging = false;
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent *)
{
    fit();
}

void TimelineView::keyPressEvent(QKeyEvent *event)
{
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoomAt(width() / 2, 1.5);
        break;
    case Qt::Key_Minus:
        zoomAt(width() / 2, 1 / 1.5);
        break;
    case Qt::Key_0:
        fit();
        break;
    case Qt::Key_Left:
        panBy(-width() / 8);
        break;
    case Qt::Key_Right:
        panBy(width() / 8);
        break;
    default:
        QAbstractScrollArea::keyPressEvent(event);
    }
}

} // namespace kforge::ui
