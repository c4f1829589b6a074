// The llm proposer's totals on the command line, after `search --proposer llm:PROVIDER/MODEL` (built by
// core/proposers/proposer_factory.h, which reads the key from the provider's environment variable).
#include <cstdio>

#include "app/cli/commands.h"
#include "store/llm_calls.h"

namespace kforge::cli {

void printLlmTotals(const SessionStore &store, int64_t sessionId)
{
    LlmCallLog log(store, false);
    const auto t = log.sessionTotals(sessionId);
    std::printf("llm: %d calls, %lld input and %lld output tokens, cost %.4f%s\n", t.calls, (long long)t.inputTokens,
                (long long)t.outputTokens, t.cost, t.unpriced ? " (some calls had no price)" : "");
}

} // namespace kforge::cli
