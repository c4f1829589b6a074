#pragma once
// Search > Start campaign: a profiled workload's plan (operators, share of the runtime, headroom to the
// roofline, nodes each) from core's planner, shown before anything runs; Start hands back the request.
#include <QDialog>
#include <QFutureWatcher>

#include "ui/campaign_plan.h"
#include "ui/search_controller.h"

class QDialogButtonBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace kforge::ui {

class CampaignDialog : public QDialog {
    Q_OBJECT
public:
    // Reads the workload and asks a worker for its device in the background; the plan shows once both
    // answer (planReady()), or the reason there is none.
    CampaignDialog(const QString &workloadPath, const QString &workerCommand, const QString &backend, bool llmProposer, int nodes,
                   QWidget *parent = nullptr);

    bool isReady() const { return m_ready; }
    QString error() const { return m_preview.error; }
    const CampaignPlan &plan() const { return m_plan; }
    const CampaignPreview &preview() const { return m_preview; }
    QTableWidget *table() const { return m_table; }
    QPushButton *startButton() const { return m_start; }
    QSpinBox *nodesBox() const { return m_nodes; }
    QSpinBox *minNodesBox() const { return m_minNodes; }
    // The campaign to run: the plan's operators with their nodes (workers, worker command and proposer
    // are the caller's).
    SearchRequest request() const;

signals:
    void planReady(); // also when it failed: error() says why

private:
    void onPrepared();
    void replan();

    QFutureWatcher<CampaignPreview> m_watcher;
    CampaignPreview m_preview;
    CampaignPlan m_plan;
    bool m_ready = false;
    QLabel *m_summary;
    QSpinBox *m_nodes;
    QSpinBox *m_minNodes;
    QTableWidget *m_table;
    QLabel *m_bound;
    QDialogButtonBox *m_buttons;
    QPushButton *m_start = nullptr;
};

} // namespace kforge::ui
