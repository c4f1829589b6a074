#pragma once
// The Campaign panel: one row per operator of the shown session, with the nodes its plan gives it, how
// many are evaluated and running, how many the guard accepted and the best of those. A thin observer of
// the session context, so a campaign the window runs, one a CLI writes and one opened from a file all
// show the same way. A session with one operator is no campaign: the panel says so and stays empty.
#include <QWidget>
#include <vector>

#include "ui/session_snapshot.h"

class QLabel;
class QTableWidget;

namespace kforge::ui {

class SessionContext;

struct CampaignProgressRow {
    int64_t operatorId = 0;
    QString key;
    int planned = -1; // the plan's nodes for it; -1 when the session stores no plan (a CLI campaign)
    int evaluated = 0, running = 0, accepted = 0;
    double bestSpeedup = 0; // of the accepted nodes; 0 when none
    QString state;          // "waiting", "searching", "done", "stopped"
};
// In the plan's order where the session stores one, else the operators' order.
std::vector<CampaignProgressRow> campaignProgressRows(const SessionSnapshot &snapshot);
bool isCampaign(const SessionSnapshot &snapshot);

class CampaignProgressView : public QWidget {
    Q_OBJECT
public:
    explicit CampaignProgressView(SessionContext *context, QWidget *parent = nullptr);
    QTableWidget *table() const { return m_table; }
    const std::vector<CampaignProgressRow> &rows() const { return m_rows; }

signals:
    void campaignShown(bool isCampaign); // after each reload

private:
    void reload();

    SessionContext *m_context;
    QLabel *m_summary;
    QTableWidget *m_table;
    std::vector<CampaignProgressRow> m_rows;
};

} // namespace kforge::ui
