#include "ui/campaign_progress.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <map>

#include "search/search_engine.h"
#include "ui/session_context.h"

namespace kforge::ui {

bool isCampaign(const SessionSnapshot &snapshot)
{
    const auto &o = snapshot.session().options;
    return snapshot.operators().size() > 1 || (o.is_object() && o.value("campaign", false));
}

std::vector<CampaignProgressRow> campaignProgressRows(const SessionSnapshot &snapshot)
{
    std::vector<CampaignProgressRow> rows;
    std::map<int64_t, size_t> byOperator;
    for (const auto &op : snapshot.operators()) {
        CampaignProgressRow r;
        r.operatorId = op.id;
        r.key = QString::fromStdString(op.card.key);
        byOperator[op.id] = rows.size();
        rows.push_back(r);
    }
    const auto &o = snapshot.session().options;
    const auto plan = o.is_object() && o.contains("campaign_plan") ? o["campaign_plan"] : nlohmann::json();
    if (plan.is_array()) {
        std::vector<CampaignProgressRow> ordered;
        for (const auto &step : plan)
            for (auto &r : rows)
                if (step.is_object() && r.key.toStdString() == step.value("key", std::string()) && r.planned < 0) {
                    r.planned = step.value("nodes", 0);
                    ordered.push_back(r);
                    break;
                }
        for (const auto &r : rows)
            if (r.planned < 0)
                ordered.push_back(r);
        rows = ordered;
        byOperator.clear();
        for (size_t i = 0; i < rows.size(); ++i)
            byOperator[rows[i].operatorId] = i;
    }
    for (const auto &n : snapshot.nodes()) {
        const auto it = byOperator.find(n.operatorId);
        if (it == byOperator.end() || !n.parentId)
            continue; // the baseline is no candidate
        auto &r = rows[it->second];
        if (isUnfinished(n.status)) {
            r.running += n.status == "running";
            continue;
        }
        ++r.evaluated;
        if (n.status == "accepted") {
            ++r.accepted;
            r.bestSpeedup = std::max(r.bestSpeedup, n.speedup);
        }
    }
    const bool live = snapshot.session().status == "running";
    for (auto &r : rows) {
        const bool spent = r.planned >= 0 ? r.evaluated >= r.planned : !live && r.evaluated > 0;
        if (r.planned == 0)
            r.state = QStringLiteral("not planned");
        else if (r.running > 0)
            r.state = QStringLiteral("searching");
        else if (spent)
            r.state = QStringLiteral("done");
        else if (r.evaluated == 0)
            r.state = QStringLiteral("waiting");
        else
            r.state = live ? QStringLiteral("searching") : QStringLiteral("stopped");
    }
    return rows;
}

CampaignProgressView::CampaignProgressView(SessionContext *context, QWidget *parent)
    : QWidget(parent), m_context(context), m_summary(new QLabel(this)), m_table(new QTableWidget(0, 6, this))
{
    m_table->setHorizontalHeaderLabels({QStringLiteral("Operator"), QStringLiteral("Nodes"), QStringLiteral("Running"),
                                        QStringLiteral("Accepted"), QStringLiteral("Best"), QStringLiteral("State")});
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    m_summary->setWordWrap(true);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_summary);
    layout->addWidget(m_table, 1);
    connect(context, &SessionContext::sessionLoaded, this, &CampaignProgressView::reload);
    connect(context, &SessionContext::nodesChanged, this, &CampaignProgressView::reload);
    connect(context, &SessionContext::sessionClosed, this, &CampaignProgressView::reload);
    reload();
}

void CampaignProgressView::reload()
{
    const auto &snap = m_context->snapshot();
    const bool campaign = snap && isCampaign(*snap);
    m_rows = campaign ? campaignProgressRows(*snap) : std::vector<CampaignProgressRow>{};
    m_table->setRowCount(int(m_rows.size()));
    int planned = 0, evaluated = 0;
    auto set = [this](int row, int column, const QString &text) {
        auto *item = m_table->item(row, column);
        if (!item) {
            item = new QTableWidgetItem;
            item->setTextAlignment(column == 0 ? Qt::AlignLeft | Qt::AlignVCenter : Qt::AlignRight | Qt::AlignVCenter);
            m_table->setItem(row, column, item);
        }
        item->setText(text);
    };
    for (int i = 0; i < int(m_rows.size()); ++i) {
        const auto &r = m_rows[size_t(i)];
        planned += std::max(r.planned, 0);
        evaluated += r.evaluated;
        set(i, 0, r.key);
        set(i, 1, r.planned >= 0 ? QStringLiteral("%1 / %2").arg(r.evaluated).arg(r.planned) : QString::number(r.evaluated));
        set(i, 2, QString::number(r.running));
        set(i, 3, QString::number(r.accepted));
        set(i, 4, r.bestSpeedup > 0 ? QStringLiteral("%1x").arg(r.bestSpeedup, 0, 'f', 2) : QStringLiteral("—"));
        set(i, 5, r.state);
    }
    m_summary->setText(!campaign      ? QStringLiteral("The shown session is a single search, not a campaign.")
                       : planned > 0 ? QStringLiteral("%1 of %2 planned nodes evaluated over %3 operators").arg(evaluated).arg(planned).arg(m_rows.size())
                                     : QStringLiteral("%1 nodes evaluated over %2 operators").arg(evaluated).arg(m_rows.size()));
    emit campaignShown(campaign);
}

} // namespace kforge::ui
