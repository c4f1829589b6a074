#include "ui/campaign_plan.h"

#include <QtConcurrent/QtConcurrentRun>

#include "pool/worker_pool.h"
#include "knowledge/lessons.h"
#include "util/error.h"
#include "util/paths.h"

namespace kforge::ui {

CampaignPreview prepareCampaign(const QString &workloadPath, const QString &workerCommand, const QString &backend, bool llmProposer)
{
    CampaignPreview p;
    p.path = workloadPath;
    p.backend = backend;
    p.llmProposer = llmProposer;
    p.device = backend;
    try {
        p.workload = loadWorkloadFile(workloadPath.toStdString());
        if (p.workload.cards.empty())
            throw Error("workload '" + workloadPath.toStdString() + "' has no operator cards: profile it first (kforge-cli profile "
                        + workloadPath.toStdString() + ")");
        // The copy rate comes from the device that will run the candidates, as kforge-cli campaign asks it.
        PoolOptions po(workerCommand.isEmpty() ? defaultWorkerCommand() : workerCommand.toStdString(), 1);
        po.measureDevices = true;
        WorkerPool pool(po);
        pool.start();
        const auto device = knowledge::targetDevice(pool.hellos(), backend.toStdString());
        p.copyBytesPerSecond = copyBandwidth(pool.hellos(), backend.toStdString());
        if (device.is_object())
            p.device = QString::fromStdString(device.value("name", backend.toStdString()));
        pool.shutdown();
        p.source = campaignSource(p.workload, p.copyBytesPerSecond, backend.toStdString(), llmProposer);
    } catch (const std::exception &e) {
        p.error = QString::fromStdString(e.what());
    }
    return p;
}

QFuture<CampaignPreview> prepareCampaignAsync(const QString &workloadPath, const QString &workerCommand, const QString &backend,
                                              bool llmProposer)
{
    return QtConcurrent::run([=] { return prepareCampaign(workloadPath, workerCommand, backend, llmProposer); });
}

std::vector<CampaignPlanRow> campaignPlanRows(const CampaignPlan &plan)
{
    std::vector<CampaignPlanRow> rows;
    for (const auto &it : plan.items) {
        CampaignPlanRow r;
        r.key = QString::fromStdString(it.key);
        r.timeMs = it.workloadMs;
        r.share = plan.totalMs > 0 ? it.workloadMs / plan.totalMs : 0;
        r.floorMs = it.floorMs;
        r.headroom = it.floorMs > 0 ? it.workloadMs / it.floorMs : 0;
        r.savableMs = it.savableMs;
        r.nodes = it.nodes;
        r.note = QString::fromStdString(it.note);
        rows.push_back(r);
    }
    return rows;
}

} // namespace kforge::ui
