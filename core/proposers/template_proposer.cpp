#include "proposers/template_proposer.h"

#include <algorithm>

namespace kforge {

TemplateProposer::TemplateProposer(std::string backend, const TemplateLibrary &lib)
    : m_backend(std::move(backend)), m_lib(lib)
{
}

nlohmann::json TemplateProposer::randomPoint(const KernelTemplate &t, std::mt19937_64 &rng) const
{
    nlohmann::json p = nlohmann::json::object();
    for (const auto &[name, values] : t.space)
        p[name] = values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng)];
    return p;
}

nlohmann::json TemplateProposer::neighbour(const KernelTemplate &t, const nlohmann::json &from, std::mt19937_64 &rng) const
{
    nlohmann::json p = from;
    auto it = t.space.begin();
    std::advance(it, std::uniform_int_distribution<size_t>(0, t.space.size() - 1)(rng));
    const auto &[name, values] = *it;
    auto pos = std::find(values.begin(), values.end(), from.value(name, nlohmann::json()));
    if (pos == values.end()) {
        p[name] = values.front();
        return p;
    }
    const auto idx = size_t(pos - values.begin());
    const bool up = std::uniform_int_distribution<int>(0, 1)(rng) == 1;
    if (up && idx + 1 < values.size())
        p[name] = values[idx + 1];
    else if (idx > 0)
        p[name] = values[idx - 1];
    else if (idx + 1 < values.size())
        p[name] = values[idx + 1];
    return p;
}

Proposal TemplateProposer::render(const KernelTemplate &t, const nlohmann::json &params, const OperatorCard &card) const
{
    Proposal prop;
    prop.templateId = t.id;
    prop.params = params;
    prop.candidate.backend = t.backend;
    prop.candidate.source = t.render(params, card);
    if (t.launch)
        prop.candidate.launch = t.launch(params, card);
    return prop;
}

std::optional<Proposal> TemplateProposer::propose(const OperatorCard &card, const NodeRecord *parent, std::mt19937_64 &rng)
{
    const auto templates = m_lib.forFamily(card.family, m_backend);
    if (templates.empty())
        return std::nullopt;
    const KernelTemplate *parentTemplate = parent ? m_lib.find(parent->templateId) : nullptr;
    if (!parent)
        for (const auto *t : templates) {
            if (!t->seed)
                continue;
            const auto params = t->seed(card);
            if ((t->valid && !t->valid(params, card)) || !m_seen.insert(t->id + params.dump()).second)
                continue;
            Proposal p = render(*t, params, card);
            p.rationale = "expert starting point for " + t->id;
            return p;
        }
    for (int attempt = 0; attempt < 64; ++attempt) {
        const KernelTemplate *t = nullptr;
        nlohmann::json params;
        std::string why;
        const bool switchTemplate = !parentTemplate || std::uniform_real_distribution<double>(0, 1)(rng) < 0.25;
        if (switchTemplate) {
            t = templates[std::uniform_int_distribution<size_t>(0, templates.size() - 1)(rng)];
            params = randomPoint(*t, rng);
            why = parentTemplate ? "switch template to " + t->id : "first attempt with " + t->id;
        } else {
            t = parentTemplate;
            params = neighbour(*t, parent->params, rng);
            for (auto &[k, v] : params.items())
                if (parent->params.value(k, nlohmann::json()) != v)
                    why = "move " + k + " from " + parent->params[k].dump() + " to " + v.dump();
        }
        if (t->valid && !t->valid(params, card))
            continue;
        const std::string key = t->id + params.dump();
        if (!m_seen.insert(key).second)
            continue;
        Proposal p = render(*t, params, card);
        p.rationale = why;
        return p;
    }
    return std::nullopt;
}

} // namespace kforge
