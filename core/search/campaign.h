#pragma once
// A campaign spreads one node budget over a workload's operators by the time each could save: its share
// of the runtime times its headroom to the roofline (Amdahl). Pure: the CLI shows the plan before it
// runs, and tst_search checks it as a table.
#include <string>
#include <vector>

namespace kforge {

struct CampaignInput {
    std::string key;        // the operator card's key
    double workloadMs = 0;  // time the workload spent in it, all calls
    double floorMs = -1;    // the same calls at the roofline; < 0 when the card has no bytes model
    bool searchable = true; // a proposer can make candidates for it (templates exist, or an LLM)
    std::string whyNot;     // when not searchable
};

struct CampaignItem {
    std::string key;
    double workloadMs = 0, floorMs = -1;
    double savableMs = 0; // workloadMs - floorMs, or workloadMs where no floor is known
    int nodes = 0;
    std::string note; // why it gets none, or that its roofline is unknown
};

struct CampaignPlan {
    std::vector<CampaignItem> items; // largest savable time first
    double totalMs = 0;              // the workload's time, every operator included
    int nodes = 0;                   // handed out
};

// minNodes: each operator worth searching gets at least this many while the budget lasts (largest
// savable time first); the rest is shared in proportion to savable time, by largest remainder. An
// operator within 1% of its roofline, or not searchable, gets none.
CampaignPlan planCampaign(const std::vector<CampaignInput> &inputs, int totalNodes, double totalWorkloadMs, int minNodes = 2);

// What Amdahl's law allows the whole workload if every planned operator ran at its roofline, and what
// the given per-operator speedups (key, speedup) make of it: the workload's time over its new time.
double amdahlBound(const CampaignPlan &plan);
double amdahlSpeedup(const CampaignPlan &plan, const std::vector<std::pair<std::string, double>> &speedups);

} // namespace kforge
