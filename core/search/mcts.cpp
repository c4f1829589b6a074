#include "search/mcts.h"

#include <algorithm>
#include <cmath>
#include <limits>

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
    n.reward = reward;
    for (int i = node; i >= 0; i = m_nodes[size_t(i)].parent) {
        m_nodes[size_t(i)].visits += 1;
        m_nodes[size_t(i)].totalReward += reward;
        m_nodes[size_t(i)].bestReward = std::max(m_nodes[size_t(i)].bestReward, reward);
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

double MctsTree::uct(int node, const MctsParams &p) const
{
    const auto &n = m_nodes[size_t(node)];
    const double logN = std::log(double(m_nodes[size_t(n.parent)].visits) + 1.0);
    const double value = p.bestBackup && n.visits ? n.bestReward : n.mean();
    return value + p.exploration * std::sqrt(logN / double(std::max(1, n.visits)));
}

std::optional<Selection> MctsTree::selectFrom(int node, int depth, const MctsParams &p) const
{
    const auto &n = m_nodes[size_t(node)];
    if (n.inFlight)
        return std::nullopt;
    const int allowed = allowedChildren(node, p);
    if (int(n.children.size()) < allowed) {
        Selection s;
        s.node = node;
        s.visits = n.visits;
        s.children = int(n.children.size());
        s.allowed = allowed;
        s.depth = depth;
        return s;
    }
    // Descend into children best-first by UCT; a child whose subtree is all busy is passed over.
    std::vector<std::pair<double, int>> order;
    for (int c : n.children)
        if (!m_nodes[size_t(c)].inFlight && !m_nodes[size_t(c)].pruned)
            order.push_back({uct(c, p), c});
    std::stable_sort(order.begin(), order.end(), [](auto &a, auto &b) { return a.first > b.first; });
    for (size_t i = 0; i < order.size(); ++i) {
        auto r = selectFrom(order[i].second, depth + 1, p);
        if (!r)
            continue;
        if (r->node == order[i].second) { // this step picked the chosen node itself: keep its scores
            const auto &ch = m_nodes[size_t(r->node)];
            r->viaUct = true;
            r->parentVisits = n.visits;
            r->mean = p.bestBackup && ch.visits ? ch.bestReward : ch.mean();
            r->uct = order[i].first;
            r->explorationTerm = r->uct - r->mean;
            for (size_t j = 0; j < order.size(); ++j)
                if (j != i && (!r->runnerUpUct || order[j].first > *r->runnerUpUct))
                    r->runnerUpUct = order[j].first;
        }
        return r;
    }
    return std::nullopt;
}

std::vector<Prune> MctsTree::prune(const MctsParams &p)
{
    std::vector<Prune> out;
    if (p.pruneMargin <= 0)
        return out;
    // Subtree statistics bottom-up: ids increase from parent to child, so a reverse pass sees every
    // child before its parent.
    const size_t n = m_nodes.size();
    std::vector<double> best(n, -std::numeric_limits<double>::infinity());
    std::vector<char> dead(n, 1);
    for (size_t i = n; i-- > 0;) {
        const auto &node = m_nodes[i];
        if (node.inFlight)
            dead[i] = 0;
        else if (i > 0)
            best[i] = std::max(best[i], node.reward);
        if (node.children.empty() && !node.failed && !node.exhausted)
            dead[i] = 0;
        if (node.parent >= 0) {
            const auto parent = size_t(node.parent);
            best[parent] = std::max(best[parent], best[i]);
            dead[parent] = char(dead[parent] && dead[i]);
        }
    }
    std::vector<char> gone(n, 0); // pruned, or below a pruned node: selection never reaches it
    for (size_t i = 1; i < n; ++i) {
        const auto &node = m_nodes[i];
        gone[i] = char(node.pruned || gone[size_t(node.parent)]);
        if (gone[i] || !dead[i] || node.visits < p.pruneMinVisits)
            continue;
        int sibling = -1;
        for (int s : m_nodes[size_t(node.parent)].children)
            if (size_t(s) != i && (sibling < 0 || best[size_t(s)] > best[size_t(sibling)]))
                sibling = s;
        if (sibling < 0 || best[size_t(sibling)] - best[i] < p.pruneMargin)
            continue;
        m_nodes[i].pruned = true;
        gone[i] = 1;
        out.push_back({int(i), sibling, node.visits, best[i], best[size_t(sibling)]});
    }
    return out;
}

std::optional<Selection> MctsTree::selectScored(const MctsParams &p) const
{
    return selectFrom(0, 0, p);
}

std::optional<int> MctsTree::select(const MctsParams &p) const
{
    if (auto s = selectScored(p))
        return s->node;
    return std::nullopt;
}

double rewardFor(bool correct, double speedup)
{
    if (!correct || speedup <= 0)
        return -1.0;
    return std::clamp(std::log(speedup), kSlowestCorrectReward, 2.0);
}

} // namespace kforge
