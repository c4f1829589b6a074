#pragma once
// The offline proposer: picks a template and a point in its tuning space, informed by what the search
// has measured (Proposer::finished, and Proposer::known on a resume).
//  - From the root: each template's start first, seeded templates first (the expert seed, else the
//    valid point nearest the middle of each parameter's values); then each template's further expert
//    starts (KernelTemplate::moreStarts); once every template has them, the best coordinate move from
//    the best points so far, over all templates.
//  - From a node: the template's further expert starts not yet tried, then the best coordinate move (proposers/template_moves.h) from the best points so far of
//    the node's template (the node itself when none is correct: a repair). Selection picks the node,
//    and so the template; the move starts from that template's best, not from the node, because a
//    move from a poorer node of the same template spends an evaluation the best already answers (on a
//    separable space, moves from subtree bests needed up to twice the evaluations). When the node's
//    template is clearly behind another's (its best under half the other's speedup, once it has two
//    results, so a start alone never condemns it), the move is made from the other template's best: a
//    template switch. When no coordinate move is left, the unseen valid point nearest the best; then
//    the other templates.
// It never proposes the same point twice in one search, a resumed one included.
#include <map>
#include <optional>

#include "proposers/proposer.h"
#include "proposers/template_library.h"
#include "proposers/template_moves.h"

namespace kforge {

class TemplateProposer : public Proposer {
public:
    explicit TemplateProposer(std::string backend, const TemplateLibrary &lib = TemplateLibrary::builtin());
    std::string name() const override { return "templates"; }
    std::optional<Proposal> propose(const OperatorCard &card, const NodeRecord *parent, std::mt19937_64 &rng) override;
    void known(const NodeRecord &node) override;
    void finished(const NodeRecord &node) override;
    std::optional<Proposal> adapt(const OperatorCard &card, const std::string &templateId, const nlohmann::json &point,
                                  std::mt19937_64 &rng) override;

    Proposal render(const KernelTemplate &t, const nlohmann::json &params, const OperatorCard &card) const;

    // A template is clearly behind another when its best speedup is under this fraction of the other's.
    static constexpr double kClearlyBehind = 0.5;

private:
    struct Result {
        std::string templateId;
        nlohmann::json params;
        double score = -1; // speedup when correct, -1 when not
    };

    std::optional<Proposal> fromRoot(const std::vector<const KernelTemplate *> &templates, const OperatorCard &card, std::mt19937_64 &rng);
    std::optional<Proposal> fromNode(const std::vector<const KernelTemplate *> &templates, const KernelTemplate &t, const NodeRecord &parent,
                                     const OperatorCard &card, std::mt19937_64 &rng);
    // `t`'s first further expert start (KernelTemplate::moreStarts) not yet proposed, once its seed has been.
    std::optional<Proposal> anotherStart(const KernelTemplate &t, const OperatorCard &card);
    // The correct results of `t`, best first.
    std::vector<moves::Origin> origins(const KernelTemplate &t) const;
    // `start`: the point counts as the template's start (fromRoot makes no other); a lesson's adapted
    // point does not, so a guess from another shape never costs the template its own start.
    std::optional<Proposal> take(const KernelTemplate &t, const nlohmann::json &params, const OperatorCard &card, std::string why,
                                 bool start = true);
    std::optional<Proposal> takeMove(const moves::Move &m, const std::vector<moves::Origin> &from, const OperatorCard &card, const std::string &prefix);
    double templateBest(const std::string &templateId) const;
    int templateResults(const std::string &templateId) const;

    std::string m_backend;
    const TemplateLibrary &m_lib;
    moves::Evidence m_evidence;
    std::map<int64_t, Result> m_results;         // evaluated nodes by id
    std::map<std::string, int> m_seenByTemplate; // points proposed per template
};

} // namespace kforge
