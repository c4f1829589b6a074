#pragma once
// The search tree's statistics and selection, free of I/O so they can be tested as tables. Node 0 is
// the root: the baseline operator itself. Selection descends by UCT and stops at the first node that
// may still grow a child under progressive widening; nodes in flight are skipped so a pool of workers
// stays busy with different work. Each selection comes with its scores (Selection), which the search
// stores on the child it makes so that a person can read why that node was expanded.
#include <optional>
#include <string>
#include <vector>

namespace kforge {

struct MctsParams {
    double exploration = 0.7; // UCT constant
    double widenK = 2.0;      // a node may have floor(widenK * visits^widenAlpha) children
    double widenAlpha = 0.5;
    int maxRepairs = 2;       // children of a failed node are repairs; at most this many
    // UCT's exploitation term: the subtree's mean reward, or (bestBackup) its best one, which suits a
    // search for the single fastest kernel rather than a good average.
    bool bestBackup = false;
    // Dead-end pruning: a subtree with nothing in flight whose every leaf failed or is exhausted, that
    // has had at least pruneMinVisits evaluations, and whose best reward is at least pruneMargin below
    // a sibling subtree's best, is passed over by selection. pruneMargin 0: never prune.
    double pruneMargin = 1.0;
    int pruneMinVisits = 3;
};

struct MctsNode {
    int parent = -1;
    std::vector<int> children;
    int visits = 0;
    double totalReward = 0;
    double reward = 0; // its own evaluation's
    double bestReward = -1e300; // the best in its subtree
    bool inFlight = false;
    bool failed = false;
    bool exhausted = false; // the proposer had nothing new to offer from it
    bool pruned = false;    // a dead end: selection passes over its subtree
    double mean() const { return visits ? totalReward / visits : 0.0; }
};

// Why a node was chosen to grow a child: the widening at that node and, when selection descended to
// it, the UCT scores that picked it among its siblings (`viaUct`).
struct Selection {
    int node = 0;
    int visits = 0;   // of the chosen node
    int children = 0; // it has, before the new one
    int allowed = 0;  // progressive widening's limit at `visits`
    bool viaUct = false;
    int depth = 0;         // steps down from the root
    int parentVisits = 0;  // of the chosen node's parent
    double mean = 0;       // the chosen node's mean reward
    double explorationTerm = 0;
    double uct = 0;        // mean + exploration term
    std::optional<double> runnerUpUct; // the best sibling passed over, if any
};

// A subtree newly pruned, with what decided it: its best reward against its best sibling's.
struct Prune {
    int node = 0;
    int sibling = 0; // the sibling subtree with the best reward
    int visits = 0;  // evaluations in the pruned subtree
    double best = 0, siblingBest = 0;
};

class MctsTree {
public:
    MctsTree(); // creates the root
    int addChild(int parent); // the child starts in flight
    void complete(int node, double reward, bool failed); // result arrived: backpropagate
    void markExhausted(int node) { m_nodes[size_t(node)].exhausted = true; }
    // Marks the dead ends the rule above finds among subtrees not yet pruned; returns them in id order.
    std::vector<Prune> prune(const MctsParams &p);
    void markPruned(int node) { m_nodes[size_t(node)].pruned = true; } // a resumed tree's stored prunes
    // The node to expand next, or nullopt when every expandable node is busy or exhausted.
    std::optional<int> select(const MctsParams &p) const;
    // The same choice with its scores.
    std::optional<Selection> selectScored(const MctsParams &p) const;
    int allowedChildren(int node, const MctsParams &p) const;
    double uct(int node, const MctsParams &p) const; // of a non-root node, from its parent's visits
    const MctsNode &node(int i) const { return m_nodes[size_t(i)]; }
    int size() const { return int(m_nodes.size()); }

private:
    std::optional<Selection> selectFrom(int node, int depth, const MctsParams &p) const;
    std::vector<MctsNode> m_nodes;
};

// Normalized reward: log of the speedup, clamped to [kSlowestCorrectReward, 2], for correct candidates;
// -1 for failures. A correct kernel, however slow, stays above every failure: a timing taken on a busy
// machine (0.31-0.38x of ATen for a kernel 1.6x faster on a quiet one) cannot make it look broken.
inline constexpr double kSlowestCorrectReward = -0.9;
double rewardFor(bool correct, double speedup);

} // namespace kforge
