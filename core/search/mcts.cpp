#include "search/mcts.h"

#include <algorithm>
#include <cmath>

namespace kforge {

MctsTree::MctsTree()
{
    m_nodes.push_back({});
}

int MctsTree::addChild(int parent)
{
    MctsNode n;
    n.parent = parent;
    n.inFlight = true;
    m_nodes.push_back(n);
    const int id = int(m_nodes.size()) - 1;
    m_nodes[size_t(parent)].children.push_back(id);
    return id;
}

void MctsTree::complete(int node, double reward, bool failed)
{
    auto &n = m_nodes[size_t(node)];
    n.inFlight = false;
    n.failed = failed;
    for (int i = node; i >= 0; i = m_nodes[size_t(i)].parent) {
        m_nodes[size_t(i)].visits += 1;
        m_nodes[size_t(i)].totalReward += reward;
    }
}

int MctsTree::allowedChildren(int node, const MctsParams &p) const
{
    const auto &n = m_nodes[size_t(node)];
    if (n.inFlight || n.exhausted)
        return int(n.children.size());
    const int widen = std::max(1, int(std::floor(p.widenK * std::pow(double(n.visits + 1), p.widenAlpha))));
    return n.failed ? std::min(widen, p.maxRepairs) : widen;
}

std::optional<int> MctsTree::selectFrom(int node, const MctsParams &p) const
{
    const auto &n = m_nodes[size_t(node)];
    if (n.inFlight)
        return std::nullopt;
    if (int(n.children.size()) < allowedChildren(node, p))
        return node;
    // Descend into children best-first by UCT; a child whose subtree is all busy is passed over.
    std::vector<std::pair<double, int>> order;
    const double logN = std::log(double(n.visits) + 1.0);
    for (int c : n.children) {
        const auto &ch = m_nodes[size_t(c)];
        if (ch.inFlight)
            continue;
        const double uct = ch.mean() + p.exploration * std::sqrt(logN / double(std::max(1, ch.visits)));
        order.push_back({uct, c});
    }
    std::sort(order.begin(), order.end(), [](auto &a, auto &b) { return a.first > b.first; });
    for (auto &[score, c] : order)
        if (auto r = selectFrom(c, p))
            return r;
    return std::nullopt;
}

std::optional<int> MctsTree::select(const MctsParams &p) const
{
    return selectFrom(0, p);
}

double rewardFor(bool correct, double speedup)
{
    if (!correct || speedup <= 0)
        return -1.0;
    return std::clamp(std::log(speedup), -1.0, 2.0);
}

} // namespace kforge
