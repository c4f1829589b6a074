#include "ui/campaign_dialog.h"

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

namespace kforge::ui {

namespace {

enum Column { Operator, Time, Share, Floor, Headroom, Nodes, Note, ColumnCount };

QTableWidgetItem *cell(const QString &text, bool number = true)
{
    auto *item = new QTableWidgetItem(text);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    if (number)
        item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

} // namespace

CampaignDialog::CampaignDialog(const QString &workloadPath, const QString &workerCommand, const QString &backend, bool llmProposer,
                               int nodes, QWidget *parent)
    : QDialog(parent), m_summary(new QLabel(this)), m_nodes(new QSpinBox(this)), m_minNodes(new QSpinBox(this)),
      m_table(new QTableWidget(0, ColumnCount, this)), m_bound(new QLabel(this)),
      m_buttons(new QDialogButtonBox(QDialogButtonBox::Cancel, this))
{
    setObjectName(QStringLiteral("campaignDialog"));
    setWindowTitle(QStringLiteral("Campaign over %1").arg(QFileInfo(workloadPath).fileName()));
    m_summary->setWordWrap(true);
    m_summary->setText(QStringLiteral("Reading %1 and asking a worker for its device…").arg(workloadPath));
    m_nodes->setRange(1, 100000);
    m_nodes->setValue(nodes);
    m_nodes->setToolTip(QStringLiteral("Candidates in all, spread over the operators by the time each could save"));
    m_minNodes->setRange(0, 1000);
    m_minNodes->setValue(2);
    m_minNodes->setToolTip(QStringLiteral("At least this many for each operator worth searching, while the budget lasts"));
    m_table->setHorizontalHeaderLabels({QStringLiteral("Operator"), QStringLiteral("Time (ms)"), QStringLiteral("Share"),
                                        QStringLiteral("Floor (ms)"), QStringLiteral("Headroom"), QStringLiteral("Nodes"),
                                        QStringLiteral("Note")});
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(Operator, QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    m_table->setWordWrap(false); // a long note is cut at the edge; its tooltip holds all of it
    m_bound->setWordWrap(true);
    m_start = m_buttons->addButton(QStringLiteral("Start campaign"), QDialogButtonBox::AcceptRole);
    m_start->setEnabled(false);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto *form = new QFormLayout;
    form->addRow(QStringLiteral("Nodes in all"), m_nodes);
    form->addRow(QStringLiteral("At least per operator"), m_minNodes);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_summary);
    layout->addLayout(form);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_bound);
    layout->addWidget(m_buttons);
    resize(1100, 480);

    connect(m_nodes, &QSpinBox::valueChanged, this, &CampaignDialog::replan);
    connect(m_minNodes, &QSpinBox::valueChanged, this, &CampaignDialog::replan);
    connect(&m_watcher, &QFutureWatcher<CampaignPreview>::finished, this, &CampaignDialog::onPrepared);
    m_watcher.setFuture(prepareCampaignAsync(workloadPath, workerCommand, backend, llmProposer));
}

void CampaignDialog::onPrepared()
{
    m_preview = m_watcher.result();
    m_ready = true;
    if (!m_preview.error.isEmpty()) {
        m_summary->setText(QStringLiteral("<b>No campaign:</b> ") + m_preview.error.toHtmlEscaped());
        m_summary->setTextFormat(Qt::RichText);
    } else {
        const auto &w = m_preview.workload;
        m_summary->setText(QStringLiteral("%1: %2 operator cards, %3 ms at top level; candidates for %4 (%5)")
                               .arg(QString::fromStdString(w.name))
                               .arg(w.cards.size())
                               .arg(m_preview.source.workloadMs, 0, 'f', 3)
                               .arg(m_preview.device,
                                    m_preview.copyBytesPerSecond > 0
                                        ? QStringLiteral("copy %1 GB/s").arg(m_preview.copyBytesPerSecond / 1e9, 0, 'f', 0)
                                        : QStringLiteral("no copy rate: rooflines unknown")));
    }
    replan();
    emit planReady();
}

void CampaignDialog::replan()
{
    if (!m_ready || !m_preview.error.isEmpty()) {
        m_start->setEnabled(false);
        return;
    }
    m_plan = planCampaign(m_preview.source.inputs, m_nodes->value(), m_preview.source.workloadMs, m_minNodes->value());
    const auto rows = campaignPlanRows(m_plan);
    m_table->setRowCount(int(rows.size()));
    for (int i = 0; i < int(rows.size()); ++i) {
        const auto &r = rows[size_t(i)];
        m_table->setItem(i, Operator, cell(r.key, false));
        m_table->setItem(i, Time, cell(QString::number(r.timeMs, 'f', 3)));
        m_table->setItem(i, Share, cell(QStringLiteral("%1%").arg(r.share * 100, 0, 'f', 1)));
        m_table->setItem(i, Floor, cell(r.floorMs >= 0 ? QString::number(r.floorMs, 'f', 3) : QStringLiteral("—")));
        m_table->setItem(i, Headroom, cell(r.headroom > 0 ? QStringLiteral("%1x").arg(r.headroom, 0, 'f', 1) : QStringLiteral("—")));
        m_table->setItem(i, Nodes, cell(QString::number(r.nodes)));
        auto *note = cell(r.note, false);
        note->setToolTip(r.note);
        m_table->setItem(i, Note, note);
    }
    for (int c = Time; c < Note; ++c)
        m_table->resizeColumnToContents(c);
    m_bound->setText(QStringLiteral("%1 of %2 nodes planned. If every planned operator reached its roofline the workload would run %3x "
                                    "faster (Amdahl).")
                         .arg(m_plan.nodes)
                         .arg(m_nodes->value())
                         .arg(amdahlBound(m_plan), 0, 'f', 3));
    m_start->setEnabled(m_plan.nodes > 0);
}

SearchRequest CampaignDialog::request() const
{
    auto r = SearchRequest::campaignOf(m_preview.workload.cards, m_plan, QString::fromStdString(m_preview.workload.name));
    r.backend = m_preview.backend;
    return r;
}

} // namespace kforge::ui
