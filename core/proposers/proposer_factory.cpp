#include "proposers/proposer_factory.h"

#include <cstdlib>

#include "proposers/llm_proposer.h"
#include "proposers/template_proposer.h"
#include "util/error.h"

namespace kforge {

std::string keyFromEnvironment(const std::string &provider)
{
    const auto var = llm::keyVariable(provider);
    const char *key = var.empty() ? nullptr : std::getenv(var.c_str());
    return key ? std::string(key) : std::string();
}

std::unique_ptr<Proposer> makeProposer(const ProposerChoice &choice, SessionStore &store, const std::string &backend)
{
    if (!choice.isLlm()) {
        if (!choice.baseUrl.empty() || choice.budget > 0)
            throw Error("a base URL and a money budget are for the llm proposer (llm:PROVIDER/MODEL), not for templates");
        return std::make_unique<TemplateProposer>(backend);
    }
    if (choice.spec.rfind("llm:", 0) != 0)
        throw Error("the proposer is templates or llm:PROVIDER/MODEL, not '" + choice.spec + "'");
    LlmProposerOptions o;
    o.provider = llm::parseProviderSpec(choice.spec.substr(4));
    if (!choice.baseUrl.empty())
        llm::checkBaseUrl(choice.baseUrl);
    o.provider.baseUrl = choice.baseUrl;
    o.backend = backend;
    o.budget = choice.budget;
    o.provider.apiKey = choice.apiKey.empty() ? keyFromEnvironment(o.provider.provider) : choice.apiKey;
    const auto var = llm::keyVariable(o.provider.provider);
    if (o.provider.apiKey.empty() && !var.empty() && choice.baseUrl.empty())
        throw Error("the provider " + o.provider.provider + " needs an API key: " +
                    (choice.keyHint.empty() ? std::string() : choice.keyHint + " or ") + "set " + var);
    return std::make_unique<LlmProposer>(store, std::move(o));
}

} // namespace kforge
