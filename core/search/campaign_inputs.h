#pragma once
// What a campaign's planner (campaign.h) reads off a profiled workload: each card's time, the same calls
// at the roofline at the device's copy rate, and whether the proposer can search it. One reading for
// `kforge-cli campaign` and the window's Start campaign, so both show the same plan.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/campaign.h"
#include "workload/workload_file.h"

namespace kforge {

struct CampaignSource {
    std::vector<CampaignInput> inputs; // one per card, in the file's order
    double workloadMs = 0;             // the workload's top-level time, at least the cards' sum
};

// copyBytesPerSecond <= 0: no floors (every operator's roofline unknown). llmProposer: an LLM can search
// any card; the templates only their families on this backend.
CampaignSource campaignSource(const WorkloadFile &workload, double copyBytesPerSecond, const std::string &backend, bool llmProposer);

// The copy rate the workers' hellos report for the backend's device, bytes per second; 0 when none does.
double copyBandwidth(const std::vector<nlohmann::json> &hellos, const std::string &backend);

} // namespace kforge
