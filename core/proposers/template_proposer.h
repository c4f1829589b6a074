#pragma once
// The offline proposer: picks a template and a point in its tuning space. From a parent it moves one
// parameter to a neighbouring value, or (less often) switches to another template of the family. It
// never proposes the same point twice in one search, a resumed one included.
#include <set>

#include "proposers/proposer.h"
#include "proposers/template_library.h"

namespace kforge {

class TemplateProposer : public Proposer {
public:
    explicit TemplateProposer(std::string backend, const TemplateLibrary &lib = TemplateLibrary::builtin());
    std::string name() const override { return "templates"; }
    std::optional<Proposal> propose(const OperatorCard &card, const NodeRecord *parent, std::mt19937_64 &rng) override;
    void known(const NodeRecord &node) override { m_seen.insert(node.templateId + node.params.dump()); }

    Proposal render(const KernelTemplate &t, const nlohmann::json &params, const OperatorCard &card) const;

private:
    nlohmann::json randomPoint(const KernelTemplate &t, std::mt19937_64 &rng) const;
    nlohmann::json neighbour(const KernelTemplate &t, const nlohmann::json &from, std::mt19937_64 &rng) const;

    std::string m_backend;
    const TemplateLibrary &m_lib;
    std::set<std::string> m_seen;
};

} // namespace kforge
