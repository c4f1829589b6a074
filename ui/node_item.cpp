#include "ui/node_item.h"

#include <QApplication>

#include <QPainter>
#include <QStyleOptionGraphicsItem>
#include <algorithm>

#include "store/session_store.h"
#include "ui/status_style.h"
#include "ui/theme.h"

namespace kforge::ui {

namespace {
const QColor kGold(0xe8, 0xa2, 0x02);
const QColor kSelection(0x1e, 0x6f, 0xd9);
const QColor kCompare(0x7b, 0x3f, 0xc4);
constexpr qreal kBestGrow = 2;                         // the best node is drawn a little larger
constexpr qreal kLabelTop = NodeItem::kRadius + 9;     // clear of the selection ring
constexpr qreal kLabelHeight = 14;
constexpr qreal kLabelHalfWidth = 30;
constexpr int kFontPx = 11;
// Below this many device pixels per scene unit, text would be smaller than about 7 px: skip it.
constexpr qreal kMinTextScale = 0.62;
} // namespace

NodeItem::NodeItem(qint64 id) : m_id(id)
{
    setData(NodeIdRole, id);
    setZValue(1); // above the edges
    setAcceptHoverEvents(true);
    setCursor(Qt::PointingHandCursor);
}

void NodeItem::setRecord(const NodeRecord &node, const NodeStats &stats)
{
    m_status = node.status;
    m_visits = stats.visits;
    m_caption = speedupText(node.status, node.speedup);
    if (m_caption.isEmpty() && node.status == "baseline")
        m_caption = QStringLiteral("baseline");
    // The hover card: what a person needs to decide whether to click.
    QString tip = QStringLiteral("<b>#%1</b> %2<br>%3").arg(node.id).arg(QString::fromStdString(node.templateId).toHtmlEscaped(),
                                                                        statusStyle(node.status).label);
    if (!m_caption.isEmpty() && node.status != "baseline")
        tip += QStringLiteral(" · <b>%1</b> vs baseline").arg(m_caption);
    if (stats.medianUs > 0)
        tip += QStringLiteral("<br>median %1 µs").arg(stats.medianUs, 0, 'f', 1);
    if (stats.rooflineFraction > 0)
        tip += QStringLiteral("<br>at <b>%1%</b> of the roofline (floor %2 µs)")
                   .arg(qRound(100 * stats.rooflineFraction))
                   .arg(node.rooflineUs, 0, 'f', 1);
    else if (node.rooflineUs > 0)
        tip += QStringLiteral("<br>roofline floor %1 µs").arg(node.rooflineUs, 0, 'f', 1);
    if (stats.visits > 0)
        tip += QStringLiteral("<br>%1 visit%2").arg(stats.visits).arg(stats.visits == 1 ? QString() : QStringLiteral("s"));
    if (!node.summary.empty())
        tip += QStringLiteral("<br><small>%1</small>").arg(QString::fromStdString(node.summary).toHtmlEscaped());
    setToolTip(tip);
    update();
}

void NodeItem::setBest(bool onPath, bool isBest)
{
    if (onPath == m_bestPath && isBest == m_best)
        return;
    m_bestPath = onPath;
    m_best = isBest;
    update();
}

void NodeItem::setMarked(bool marked)
{
    if (marked == m_marked)
        return;
    m_marked = marked;
    update();
}

void NodeItem::setPhase(int phase)
{
    m_phase = phase;
    update();
}

void NodeItem::setCaptionVisible(bool visible)
{
    if (visible == m_captionVisible)
        return;
    m_captionVisible = visible;
    update();
}

void NodeItem::setDimmed(bool dimmed)
{
    if (dimmed == m_dimmed)
        return;
    m_dimmed = dimmed;
    setOpacity(dimmed ? 0.2 : 1.0);
}

void NodeItem::setCompared(int order)
{
    if (order == m_compared)
        return;
    m_compared = order;
    update();
}

void NodeItem::setDecision(Decision decision)
{
    if (decision == m_decision)
        return;
    m_decision = decision;
    update();
}

QRectF NodeItem::boundingRect() const
{
    const qreal ring = kRadius + kBestGrow + 11; // the comparison ring is the outermost
    return QRectF(-kLabelHalfWidth, -ring, 2 * kLabelHalfWidth, ring + kLabelTop + kLabelHeight);
}

QPainterPath NodeItem::shape() const
{
    QPainterPath p;
    p.addEllipse(QPointF(0, 0), kRadius + 2, kRadius + 2);
    return p;
}

void NodeItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *)
{
    const auto style = statusStyle(m_status);
    const qreal scale = QStyleOptionGraphicsItem::levelOfDetailFromTransform(painter->worldTransform());
    const qreal r = m_best ? kRadius + kBestGrow : kRadius;

    if (scale * kRadius < kMinDetailPx) {
        // Zoomed far out a node is a few pixels: a square of its colour, no antialiasing, outline or
        // badges (a 10,000-node tree fitted to the window paints in a fraction of the time). The best
        // path, the selection and the compared nodes keep a size that stays visible.
        painter->setRenderHint(QPainter::Antialiasing, false);
        painter->setPen(Qt::NoPen);
        if (m_marked || m_compared > 0) {
            const qreal ring = 4.0 / scale; // 4 device pixels
            painter->setBrush(m_marked ? kSelection : kCompare);
            painter->drawRect(QRectF(-ring, -ring, 2 * ring, 2 * ring));
        }
        const qreal half = std::max(r, (m_bestPath ? 2.0 : 1.0) / scale);
        painter->setBrush(m_bestPath ? kGold : style.fill);
        painter->drawRect(QRectF(-half, -half, 2 * half, 2 * half));
        return;
    }
    painter->setRenderHint(QPainter::Antialiasing);

    if (m_marked) {
        painter->setPen(QPen(kSelection, 3));
        painter->setBrush(Qt::NoBrush);
        painter->drawEllipse(QPointF(0, 0), r + 5, r + 5);
    }

    if (m_compared > 0) {
        // A dashed violet ring with the node's place in the comparison (Ctrl-click).
        painter->setPen(QPen(kCompare, 2.5, Qt::DashLine));
        painter->setBrush(Qt::NoBrush);
        painter->drawEllipse(QPointF(0, 0), r + 9, r + 9);
        const QPointF c(-r * 0.9, -r * 0.9);
        painter->setPen(Qt::NoPen);
        painter->setBrush(kCompare);
        painter->drawEllipse(c, 7, 7);
        QFont f = painter->font();
        f.setPixelSize(9);
        f.setBold(true);
        painter->setFont(f);
        painter->setPen(Qt::white);
        painter->drawText(QRectF(c.x() - 7, c.y() - 7, 14, 14), Qt::AlignCenter, QString::number(m_compared));
    }

    const Theme colours = theme();
    // A fill darker than the canvas (the baseline's black on a dark palette) gets a light outline.
    const bool lostOnCanvas = isDark(QApplication::palette()) && style.fill.lightness() < 70;
    QPen outline(m_bestPath ? kGold : lostOnCanvas ? colours.mutedInk : style.fill.darker(140), m_best ? 4.5 : m_bestPath ? 3.5 : 1.2);
    if (m_status == "running") {
        // Marching dashes: visibly in flight without a separate animation item per node.
        outline = QPen(isDark(QApplication::palette()) ? colours.mutedInk : QColor(0x55, 0x55, 0x55), 2, Qt::DashLine);
        outline.setDashOffset(m_phase);
    }
    painter->setPen(outline);
    painter->setBrush(style.fill);
    painter->drawEllipse(QPointF(0, 0), r, r);

    if (m_decision != Decision::None) {
        // A person's decision: a tick or a cross on a disc at the upper right, visible at any zoom.
        const bool ok = m_decision == Decision::Accepted;
        const QPointF c(r * 0.72, -r * 0.72);
        const qreal b = 7;
        painter->setPen(QPen(Qt::white, 1.5));
        painter->setBrush(ok ? QColor(0x1d, 0x7a, 0x30) : QColor(0xc0, 0x20, 0x20));
        painter->drawEllipse(c, b, b);
        painter->setPen(QPen(Qt::white, 2, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
        if (ok) {
            const QPointF tick[] = {c + QPointF(-3.5, 0), c + QPointF(-1, 2.8), c + QPointF(3.5, -2.8)};
            painter->drawPolyline(tick, 3);
        } else {
            painter->drawLine(c + QPointF(-3, -3), c + QPointF(3, 3));
            painter->drawLine(c + QPointF(-3, 3), c + QPointF(3, -3));
        }
    }

    if (scale < kMinTextScale)
        return;
    QFont f = painter->font();
    f.setPixelSize(kFontPx);
    f.setBold(true);
    painter->setFont(f);
    painter->setPen(style.text);
    painter->drawText(QRectF(-kRadius, -kRadius, 2 * kRadius, 2 * kRadius), Qt::AlignCenter, QString::number(m_id));
    if (m_visits > 1) {
        // The visit count on a pill at the lower left: where the search spent its evaluations.
        QFont small = f;
        small.setPixelSize(9);
        small.setBold(false);
        const QString text = m_visits > 999 ? QStringLiteral("%1k").arg(m_visits / 1000) : QString::number(m_visits);
        const qreal w = std::max<qreal>(12, QFontMetricsF(small).horizontalAdvance(text) + 6);
        const QRectF pill(-r * 0.72 - w / 2, r * 0.72 - 6, w, 12);
        painter->setPen(QPen(Qt::white, 1));
        painter->setBrush(QColor(0x44, 0x44, 0x55));
        painter->drawRoundedRect(pill, 6, 6);
        painter->setFont(small);
        painter->setPen(Qt::white);
        painter->drawText(pill, Qt::AlignCenter, text);
        painter->setFont(f);
    }
    if (!m_caption.isEmpty() && m_captionVisible) {
        f.setBold(m_best);
        painter->setFont(f);
        painter->setPen(colours.ink);
        painter->drawText(QRectF(-kLabelHalfWidth, kLabelTop, 2 * kLabelHalfWidth, kLabelHeight), Qt::AlignCenter, m_caption);
    }
    Q_UNUSED(option);
}

} // namespace kforge::ui
