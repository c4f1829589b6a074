#include "ui/timing_plot.h"

#include <QPainter>
#include <QPainterPath>

#include "ui/status_style.h"
#include "ui/timing_plot_geometry.h"

namespace kforge::ui {

namespace {

constexpr int kRowPx = 30;
constexpr int kAxisPx = 22;
constexpr int kMarginPx = 10;

QString tickLabel(double us, double stepUs)
{
    return QString::number(us, 'f', tickDecimals(stepUs));
}

} // namespace

TimingPlot::TimingPlot(QWidget *parent) : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setToolTip(QStringLiteral("Every timing sample as a dot; the box spans p25 to p75, the bar is the median."));
}

int TimingPlot::topPx() const
{
    return fontMetrics().height() + 4; // room for the floor's label
}

void TimingPlot::setTimings(std::vector<double> candidateUs, std::vector<double> baselineUs, double floorUs, const std::string &status)
{
    m_candidate = std::move(candidateUs);
    m_baseline = std::move(baselineUs);
    m_floorUs = floorUs;
    m_status = status;
    update();
}

void TimingPlot::clear()
{
    setTimings({}, {}, 0, {});
}

QSize TimingPlot::sizeHint() const
{
    return {480, topPx() + 2 * kRowPx + kAxisPx + fontMetrics().height()};
}

QSize TimingPlot::minimumSizeHint() const
{
    return {240, sizeHint().height()};
}

void TimingPlot::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QPalette pal = palette();
    const QColor ink = pal.color(QPalette::WindowText);
    QColor faint = ink;
    faint.setAlphaF(0.35);

    const QFontMetrics fm = fontMetrics();
    const int topY = topPx();
    const QString names[] = {QStringLiteral("candidate"), QStringLiteral("baseline")};
    const int labelPx = std::max(fm.horizontalAdvance(names[0]), fm.horizontalAdvance(names[1])) + 2 * kMarginPx;
    const double x0 = labelPx, x1 = width() - kMarginPx - fm.horizontalAdvance(QStringLiteral(" µs")) / 2.0;
    const auto axis = timingAxis(m_candidate, m_baseline, m_floorUs, x0, x1);

    // The baseline is black in the tree; on a dark palette the text colour stands in for it.
    const QColor baselineColour = pal.color(QPalette::Window).lightness() < 128 ? ink : statusStyle("baseline").fill;
    const QColor colours[] = {statusStyle(m_status.empty() ? "accepted" : m_status).fill, baselineColour};
    const std::vector<double> *sides[] = {&m_candidate, &m_baseline};

    for (int r = 0; r < 2; ++r) {
        const double top = topY + r * kRowPx;
        const auto row = plotRow(*sides[r], axis, top, kRowPx);
        p.setPen(ink);
        p.drawText(QRectF(kMarginPx, top, labelPx - kMarginPx, kRowPx), Qt::AlignLeft | Qt::AlignVCenter,
                   names[r]);
        p.setPen(QPen(faint, 1, Qt::DotLine));
        p.drawLine(QPointF(x0, row.centerY), QPointF(x1, row.centerY));
        if (row.hasBox) {
            QColor fill = colours[r];
            fill.setAlphaF(0.18);
            const QRectF box(QPointF(row.boxX0, top + 4), QPointF(std::max(row.boxX1, row.boxX0 + 1), top + kRowPx - 4));
            p.setPen(QPen(colours[r], 1));
            p.setBrush(fill);
            p.drawRect(box);
            p.setPen(QPen(colours[r], 2.5));
            p.drawLine(QPointF(row.medianX, top + 2), QPointF(row.medianX, top + kRowPx - 2));
        }
        QColor dot = colours[r];
        dot.setAlphaF(sides[r]->size() > 50 ? 0.45 : 0.75);
        p.setPen(Qt::NoPen);
        p.setBrush(dot);
        for (const auto &d : row.dots)
            p.drawEllipse(QPointF(d.x, d.y), 2.5, 2.5);
    }

    // The axis: 3 to 5 ticks in microseconds.
    const double axisY = topY + 2 * kRowPx + 2;
    p.setPen(QPen(ink, 1));
    p.setBrush(Qt::NoBrush);
    p.drawLine(QPointF(x0, axisY), QPointF(x1, axisY));
    const auto ticks = axis.ticks();
    for (size_t i = 0; i < ticks.size(); ++i) {
        const double x = axis.x(ticks[i]);
        p.drawLine(QPointF(x, axisY), QPointF(x, axisY + 4));
        QString text = tickLabel(ticks[i], axis.stepUs);
        if (i + 1 == ticks.size())
            text += QStringLiteral(" µs");
        const double w = fm.horizontalAdvance(text);
        const double left = i + 1 == ticks.size() ? std::min(x - w / 2, double(width()) - w - 2) : x - w / 2;
        p.drawText(QPointF(left, axisY + 6 + fm.ascent()), text);
    }

    const auto floor = floorLine(m_floorUs, axis);
    if (floor.shown) {
        p.setPen(QPen(ink, 1.2, Qt::DashLine));
        p.drawLine(QPointF(floor.x, topY - 2), QPointF(floor.x, axisY));
        QString text = QStringLiteral("roofline floor %1 µs").arg(QString::number(m_floorUs, 'f', 1));
        if (floor.outside < 0)
            text = QStringLiteral("◀ ") + text;
        else if (floor.outside > 0)
            text += QStringLiteral(" ▶");
        const double w = fm.horizontalAdvance(text);
        const double left = std::clamp(floor.x - w / 2, 2.0, std::max(2.0, double(width()) - w - 2));
        p.setPen(ink);
        p.drawText(QPointF(left, fm.ascent()), text);
    }
}

} // namespace kforge::ui
