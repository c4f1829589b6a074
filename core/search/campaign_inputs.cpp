#include "search/campaign_inputs.h"

#include <algorithm>

#include "knowledge/lessons.h"
#include "proposers/template_library.h"

namespace kforge {

CampaignSource campaignSource(const WorkloadFile &workload, double copyBytesPerSecond, const std::string &backend, bool llmProposer)
{
    CampaignSource s;
    double top = 0, cards = 0;
    for (const auto &g : groupCalls(workload.calls))
        top += g.totalUs / 1000.0;
    for (const auto &c : workload.cards) {
        CampaignInput in;
        in.key = c.key;
        in.workloadMs = c.workloadMs;
        const double bytes = c.minBytes(c.shape);
        in.floorMs = bytes > 0 && copyBytesPerSecond > 0 ? double(c.calls) * bytes / copyBytesPerSecond * 1000.0 : -1;
        in.searchable = llmProposer || !TemplateLibrary::builtin().forFamily(c.family, backend).empty();
        if (!in.searchable)
            in.whyNot = c.family.empty() ? "no template family: --proposer llm:PROVIDER/MODEL can search it"
                                         : "no " + backend + " template for family " + c.family;
        cards += c.workloadMs;
        s.inputs.push_back(in);
    }
    // The calls' top-level time is the workload's; cards overlap where a fused chain's card covers the
    // cards of its calls, so their sum is only the fallback for a workload without calls.
    s.workloadMs = top > 0 ? top : cards;
    return s;
}

double copyBandwidth(const std::vector<nlohmann::json> &hellos, const std::string &backend)
{
    const auto device = knowledge::targetDevice(hellos, backend);
    return device.is_object() ? device.value("copy_bandwidth_gbs", 0.0) * 1e9 : 0.0;
}

} // namespace kforge
