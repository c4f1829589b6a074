#pragma once
// A campaign before it runs: the workload read and a worker asked for its device's copy rate, on a pool
// thread, then core's planner (core/search/campaign.h, campaign_inputs.h) turned into the rows the
// window shows. The plan is core's; this file only words it.
#include <QFuture>
#include <QString>
#include <vector>

#include "search/campaign_inputs.h"
#include "workload/workload_file.h"

namespace kforge::ui {

struct CampaignPreview {
    QString path;
    WorkloadFile workload;
    QString backend;
    bool llmProposer = false;
    double copyBytesPerSecond = 0; // 0: the worker reported none, so no roofline is known
    QString device;                // the worker's device name, or the backend
    CampaignSource source;
    QString error; // why there is no preview: the file unreadable, no cards, no worker
};

// Reads the workload and starts one worker (the command line, as a search would) for its hello. Any thread.
CampaignPreview prepareCampaign(const QString &workloadPath, const QString &workerCommand, const QString &backend, bool llmProposer);
QFuture<CampaignPreview> prepareCampaignAsync(const QString &workloadPath, const QString &workerCommand, const QString &backend,
                                              bool llmProposer);

// One row of the plan as shown: an operator, its share of the workload's time, its headroom to the
// roofline (time over floor; 0 when unknown) and the nodes it gets.
struct CampaignPlanRow {
    QString key;
    double timeMs = 0, share = 0, floorMs = -1, headroom = 0, savableMs = 0;
    int nodes = 0;
    QString note;
};
std::vector<CampaignPlanRow> campaignPlanRows(const CampaignPlan &plan);

} // namespace kforge::ui
