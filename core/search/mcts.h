#pragma once
// The search tree's statistics and selection, free of I/O so they can be tested as tables. Node 0 is
// the root: the baseline operator itself. Selection descends by UCT and stops at the first node that
// may still grow a child under progressive widening; nodes in flight are skipped so a pool of workers
// stays busy with different work.
#include <optional>
#include <vector>

namespace kforge {

struct MctsParams {
    double exploration = 0.7; // UCT constant
    double widenK = 2.0;      // a node may have floor(widenK * visits^widenAlpha) children
    double widenAlpha = 0.5;
    int maxRepairs = 2;       // children of a failed node are repairs; at most this many
};

struct MctsNode {
    int parent = -1;
    std::vector<int> children;
    int visits = 0;
    double totalReward = 0;
    bool inFlight = false;
    bool failed = false;
    bool exhausted = false; // the proposer had nothing new to offer from it
    double mean() const { return visits ? totalReward / visits : 0.0; }
};

class MctsTree {
public:
    MctsTree(); // creates the root
    int addChild(int parent); // the child starts in flight
    void complete(int node, double reward, bool failed); // result arrived: backpropagate
    void markExhausted(int node) { m_nodes[size_t(node)].exhausted = true; }
    // The node to expand next, or nullopt when every expandable node is busy or exhausted.
    std::optional<int> select(const MctsParams &p) const;
    int allowedChildren(int node, const MctsParams &p) const;
    const MctsNode &node(int i) const { return m_nodes[size_t(i)]; }
    int size() const { return int(m_nodes.size()); }

private:
    std::optional<int> selectFrom(int node, const MctsParams &p) const;
    std::vector<MctsNode> m_nodes;
};

// Normalized reward: log of the speedup, clamped, for correct candidates; a fixed penalty for failures.
double rewardFor(bool correct, double speedup);

} // namespace kforge
