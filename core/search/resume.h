#pragma once
// What a search stores so that it can be resumed, and reading it back: one place for the keys that
// `kforge-cli search --resume` and the window's Resume both use.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/search_engine.h"
#include "store/session_store.h"

namespace kforge {

// One operator of the search to go on with: a campaign's step, or the one operator of a search.
struct ResumeStep {
    OperatorRecord op;
    int nodes = 0;      // its budget: the campaign plan's share, or the search's node budget
    int made = 0;       // candidates stored for it (the baseline not counted), unfinished ones included
    int unfinished = 0; // of those, left in flight by a stop or a kill: evaluated again under their ids
    // Nothing left to do: the budget is made and nothing is in flight. SearchEngine::run counts the
    // stored nodes against `nodes`, so running a step that is not done spends only what is left.
    bool done() const { return made >= nodes && unfinished == 0; }
};

struct ResumableSearch {
    SessionInfo session; // the file's last search
    OperatorRecord op;   // its first operator (a campaign's first step)
    bool campaign = false;
    std::vector<ResumeStep> steps; // in the order they run: a campaign's plan, else the one operator
    SearchOptions options; // nodes, seed, samples and deadline as it ran
    int workers = 1;
    std::string proposerSpec, baseUrl;
    double budgetUsd = 0;
};

// The options to store with a new search (SessionInfo::options).
nlohmann::json resumeOptions(const SearchOptions &options, int workers, const std::string &proposerSpec, const std::string &baseUrl,
                             double budgetUsd);
// A campaign's plan, stored with its session's options (campaign_plan): the operators by card key, in the
// order they run, with the nodes each gets. Write it with every step's operator added to the session.
void setCampaignPlan(nlohmann::json &options, const std::vector<std::pair<std::string, int>> &steps);
// The file's last search; throws Error when it has none, no operator, a proposer it cannot rebuild, or
// a campaign whose plan names an operator the session does not hold.
ResumableSearch lastSearch(const SessionStore &store);

} // namespace kforge
