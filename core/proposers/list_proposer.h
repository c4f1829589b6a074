#pragma once
// Proposes a fixed list of candidates, in order, as children of the root: evaluates a set of
// hand-written kernels as one session (kforge-cli search --candidates), so they can be inspected and
// compared like searched ones.
#include <vector>

#include "proposers/proposer.h"

namespace kforge {

class ListProposer : public Proposer {
public:
    explicit ListProposer(std::vector<Proposal> proposals) : m_proposals(std::move(proposals)) {}
    std::string name() const override { return "list"; }
    std::optional<Proposal> propose(const OperatorCard &, const NodeRecord *parent, std::mt19937_64 &) override
    {
        if (parent || m_next >= m_proposals.size())
            return std::nullopt; // a list has no improvements to offer
        return m_proposals[m_next++];
    }

private:
    std::vector<Proposal> m_proposals;
    size_t m_next = 0;
};

} // namespace kforge
