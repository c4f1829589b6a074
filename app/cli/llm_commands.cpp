// The llm proposer on the command line: `search --proposer llm:PROVIDER/MODEL [--base-url URL]
// [--budget-usd X]`. The key is read from the provider's environment variable and goes nowhere else.
#include <cstdio>
#include <cstdlib>

#include "app/cli/commands.h"
#include "proposers/llm_proposer.h"
#include "store/llm_calls.h"
#include "util/error.h"

namespace kforge::cli {

std::unique_ptr<Proposer> makeLlmProposer(const std::string &spec, const std::string &baseUrl, double budget, SessionStore &store,
                                          const std::string &backend)
{
    if (spec.rfind("llm:", 0) != 0)
        throw Error("option --proposer takes templates or llm:PROVIDER/MODEL, not '" + spec + "'");
    LlmProposerOptions o;
    o.provider = llm::parseProviderSpec(spec.substr(4));
    o.provider.baseUrl = baseUrl;
    o.backend = backend;
    o.budget = budget;
    const auto var = llm::keyVariable(o.provider.provider);
    if (!var.empty()) {
        const char *key = std::getenv(var.c_str());
        if (!key || !*key) {
            if (baseUrl.empty())
                throw Error("the provider " + o.provider.provider + " needs an API key: set " + var);
        } else {
            o.provider.apiKey = key;
        }
    }
    return std::make_unique<LlmProposer>(store, std::move(o));
}

void printLlmTotals(const SessionStore &store, int64_t sessionId)
{
    LlmCallLog log(store, false);
    const auto t = log.sessionTotals(sessionId);
    std::printf("llm: %d calls, %lld input and %lld output tokens, cost %.4f%s\n", t.calls, (long long)t.inputTokens,
                (long long)t.outputTokens, t.cost, t.unpriced ? " (some calls had no price)" : "");
}

} // namespace kforge::cli
