#pragma once
// What a search stores so that it can be resumed, and reading it back: one place for the keys that
// `kforge-cli search --resume` and the window's Resume both use.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "search/search_engine.h"
#include "store/session_store.h"

namespace kforge {

struct ResumableSearch {
    SessionInfo session; // the file's last search
    OperatorRecord op;   // its operator
    SearchOptions options; // nodes, seed, samples and deadline as it ran
    int workers = 1;
    std::string proposerSpec, baseUrl;
    double budgetUsd = 0;
};

// The options to store with a new search (SessionInfo::options).
nlohmann::json resumeOptions(const SearchOptions &options, int workers, const std::string &proposerSpec, const std::string &baseUrl,
                             double budgetUsd);
// The file's last search; throws Error when it has none, no operator, or a proposer it cannot rebuild.
ResumableSearch lastSearch(const SessionStore &store);

} // namespace kforge
