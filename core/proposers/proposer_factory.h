#pragma once
// The one place a search's proposer is built from a person's choice, for the CLI
// (`--proposer templates | llm:PROVIDER/MODEL`, `--base-url`, `--budget-usd`) and the GUI (Settings).
// The key is the caller's (the GUI reads it from the system keychain) or else the provider's
// environment variable; it goes into the provider client and nowhere else.
#include <memory>
#include <string>

#include "proposers/proposer.h"

namespace kforge {

class SessionStore;

struct ProposerChoice {
    std::string spec = "templates"; // "templates" or "llm:PROVIDER/MODEL"
    std::string baseUrl;            // the provider's endpoint; empty: its public one
    double budget = 0;              // money for the LLM calls; 0: none
    std::string apiKey;             // empty: from the provider's environment variable
    std::string keyHint;            // where else a key may come from, for the missing-key error ("store one in Settings")

    bool isLlm() const { return spec != "templates"; }
};

// Throws Error with what to do: an unknown spec, a provider that needs a key and has none (a local
// server, given by --base-url, may need none), a budget for a model with no price.
std::unique_ptr<Proposer> makeProposer(const ProposerChoice &choice, SessionStore &store, const std::string &backend);

// The key for `provider` from its environment variable; empty when unset or when the provider takes none.
std::string keyFromEnvironment(const std::string &provider);

} // namespace kforge
