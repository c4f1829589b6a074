#include "ui/verdict_pane.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include "store/session_store.h"
#include "ui/status_style.h"
#include "ui/theme.h"
#include "ui/timing_plot.h"

namespace kforge::ui {

namespace {

QTableWidget *makeTable(const QStringList &headers, QWidget *parent)
{
    auto *t = new QTableWidget(0, int(headers.size()), parent);
    t->setHorizontalHeaderLabels(headers);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->verticalHeader()->setVisible(false);
    t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().height() + 6);
    t->horizontalHeader()->setStretchLastSection(true);
    t->setAlternatingRowColors(true);
    t->setWordWrap(false);
    return t;
}

QTableWidgetItem *cell(const QString &text, Qt::Alignment align = Qt::AlignLeft | Qt::AlignVCenter)
{
    auto *item = new QTableWidgetItem(text);
    item->setTextAlignment(align);
    item->setToolTip(text);
    return item;
}

QString number(double v, int precision = 2) { return QString::number(v, 'f', precision); }
QString scientific(double v) { return v == 0 ? QStringLiteral("0") : QString::number(v, 'e', 2); }
const Qt::Alignment kRight = Qt::AlignRight | Qt::AlignVCenter;

// The badge shows the status in its own colour, so the pane and the tree read the same.
QString badge(const std::string &status)
{
    const auto st = statusStyle(status);
    return QStringLiteral("<span style=\"background-color:%1; color:%2;\">&nbsp;%3&nbsp;</span>")
        .arg(st.fill.name(), st.text.name(), st.label.toHtmlEscaped());
}

} // namespace

VerdictPane::VerdictPane(QWidget *parent)
    : QWidget(parent), m_status(new QLabel(this)), m_reasons(new QLabel(this)),
      m_trials(makeTable({QStringLiteral("Trial"), QStringLiteral("Shape"), QStringLiteral("Passed"),
                          QStringLiteral("Max abs err"), QStringLiteral("Max rel err"), QStringLiteral("Candidate err"),
                          QStringLiteral("ATen err"), QStringLiteral("Allowed"), QStringLiteral("Failure")},
                         this)),
      m_timing(makeTable({QStringLiteral("Side"), QStringLiteral("Median µs"), QStringLiteral("p25"), QStringLiteral("p75"),
                          QStringLiteral("Min"), QStringLiteral("Max"), QStringLiteral("Spread"), QStringLiteral("Samples")},
                         this)),
      m_plot(new TimingPlot(this))
{
    m_status->setTextFormat(Qt::RichText);
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_reasons->setWordWrap(true);
    m_reasons->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_timing->setFixedHeight(m_timing->horizontalHeader()->sizeHint().height() + 2 * m_timing->verticalHeader()->defaultSectionSize() + 4);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addWidget(m_status);
    layout->addWidget(m_reasons);
    layout->addWidget(new QLabel(QStringLiteral("<b>Verification</b>"), this));
    layout->addWidget(m_trials, 1);
    layout->addWidget(new QLabel(QStringLiteral("<b>Timing</b> (candidate and baseline interleaved in one run)"), this));
    layout->addWidget(m_plot);
    layout->addWidget(m_timing);
    clear();
}

void VerdictPane::clear()
{
    m_status->setText(QStringLiteral("No node selected."));
    m_reasons->clear();
    m_reasons->hide();
    m_trials->setRowCount(0);
    m_timing->setRowCount(0);
    m_plot->clear();
    m_plot->hide();
}

void VerdictPane::showRecord(const NodeRecord &node, const QString &note)
{
    clear();
    m_status->setText(badge(node.status) + QStringLiteral("&nbsp; ") + note.toHtmlEscaped());
}

void VerdictPane::showDetail(const NodeDetail &d)
{
    const auto &n = d.node;
    const auto &v = d.verdict;
    QString head = badge(n.status);
    const auto speed = speedupText(n.status, v.speedup);
    if (!speed.isEmpty())
        head += QStringLiteral("&nbsp; <b>%1</b> vs baseline, noise band ±%2%").arg(speed, number(v.noise * 100, 1));
    if (v.rooflineUs > 0) {
        // The floor is the card's fewest bytes at the measured copy bandwidth; each side's median as a
        // fraction of it says how much is left to gain.
        head += QStringLiteral("<br>roofline floor %1 µs").arg(number(v.rooflineUs, 1));
        QStringList at;
        if (v.candidate.summary.median > 0)
            at << QStringLiteral("this kernel at %1%").arg(qRound(100 * v.rooflineUs / v.candidate.summary.median));
        if (v.baseline.summary.median > 0)
            at << QStringLiteral("the baseline at %1%").arg(qRound(100 * v.rooflineUs / v.baseline.summary.median));
        if (!at.isEmpty())
            head += QStringLiteral(": ") + at.join(QStringLiteral(", ")) + QStringLiteral(" of it");
    }
    if (!v.worker.empty())
        head += QStringLiteral("<br>evaluated by %1").arg(QString::fromStdString(v.worker).toHtmlEscaped());
    if (!v.device.empty())
        head += QStringLiteral(" on %1, both sides").arg(QString::fromStdString(v.device).toHtmlEscaped());
    for (const auto &dec : d.decisions)
        head += QStringLiteral("<br>%1 by %2: %3")
                    .arg(QString::fromStdString(dec.decision), QString::fromStdString(dec.actor).toHtmlEscaped(),
                         QString::fromStdString(dec.reason).toHtmlEscaped());
    m_status->setText(head);

    QStringList reasons;
    for (const auto &r : v.reasons)
        reasons << QStringLiteral("• %1: %2").arg(QString::fromStdString(r.code), QString::fromStdString(r.message));
    for (const auto &note : v.notes)
        reasons << QStringLiteral("note: %1").arg(QString::fromStdString(note));
    m_reasons->setText(reasons.join(QLatin1Char('\n')));
    m_reasons->setVisible(!reasons.isEmpty());

    m_trials->setRowCount(int(v.trials.size()));
    for (int row = 0; row < int(v.trials.size()); ++row) {
        const auto &t = v.trials[size_t(row)];
        QString failure = QString::fromStdString(t.failure);
        if (!t.detail.empty())
            failure += (failure.isEmpty() ? QString() : QStringLiteral(": ")) + QString::fromStdString(t.detail);
        m_trials->setItem(row, 0, cell(QString::fromStdString(t.label)));
        m_trials->setItem(row, 1, cell(QString::fromStdString(t.shape)));
        auto *passed = cell(t.passed ? QStringLiteral("yes") : QStringLiteral("no"), Qt::AlignCenter);
        passed->setForeground(t.passed ? theme(palette()).good : theme(palette()).bad);
        m_trials->setItem(row, 2, passed);
        m_trials->setItem(row, 3, cell(scientific(t.maxAbsError), kRight));
        m_trials->setItem(row, 4, cell(scientific(t.maxRelError), kRight));
        // Against the float64 reference, in units of the operation's error bound: the candidate's
        // worst error, ATen's own on the same inputs, and what the guard allowed.
        auto bound = [](double v) { return v == 0 ? QStringLiteral("–") : QString::number(v, 'g', 3); };
        m_trials->setItem(row, 5, cell(bound(t.candidateError), kRight));
        m_trials->setItem(row, 6, cell(bound(t.atenError), kRight));
        m_trials->setItem(row, 7, cell(bound(t.allowedError), kRight));
        if (t.allowedError > 0 && t.candidateError > t.allowedError)
            m_trials->item(row, 5)->setForeground(theme(palette()).bad);
        m_trials->setItem(row, 8, cell(failure));
    }
    m_trials->resizeColumnsToContents();

    const std::pair<const char *, const TimingReport *> sides[] = {{"candidate", &v.candidate}, {"baseline", &v.baseline}};
    m_timing->setRowCount(0);
    for (const auto &[name, t] : sides) {
        if (t->summary.count == 0)
            continue;
        const int row = m_timing->rowCount();
        m_timing->insertRow(row);
        const auto &s = t->summary;
        m_timing->setItem(row, 0, cell(QString::fromLatin1(name)));
        m_timing->setItem(row, 1, cell(number(s.median), kRight));
        m_timing->setItem(row, 2, cell(number(s.p25), kRight));
        m_timing->setItem(row, 3, cell(number(s.p75), kRight));
        m_timing->setItem(row, 4, cell(number(s.min), kRight));
        m_timing->setItem(row, 5, cell(number(s.max), kRight));
        m_timing->setItem(row, 6, cell(QStringLiteral("±%1%").arg(number(s.relativeSpread() * 100, 1)), kRight));
        m_timing->setItem(row, 7, cell(QString::number(s.count), kRight));
    }
    m_timing->resizeColumnsToContents();
    // The plot draws the same stored samples the table summarizes.
    m_plot->setTimings(v.candidate.samplesUs, v.baseline.samplesUs, v.rooflineUs, n.status);
    m_plot->setVisible(!v.candidate.samplesUs.empty() || !v.baseline.samplesUs.empty());
}

QString VerdictPane::statusText() const
{
    return m_status->text();
}

QString VerdictPane::reasonsText() const
{
    return m_reasons->text();
}

int VerdictPane::trialCount() const
{
    return m_trials->rowCount();
}

} // namespace kforge::ui
