#pragma once
// Geometry of the family tree, apart from any widget so it can be tested as a plain function.
//
// Leaves take the next free column in depth-first order (children in the order given), and every
// parent sits midway between its first and last child. Subtrees therefore own disjoint column ranges,
// so two nodes at the same depth are always at least one column apart. Units are columns (x) and
// levels (depth); the view scales them to pixels.
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace kforge::ui {

struct TreeEdge {
    int64_t id = 0;
    std::optional<int64_t> parentId; // none, or an id not in the list: the node is a root
};

struct NodePlacement {
    int64_t id = 0;
    double x = 0; // column, 0 at the leftmost leaf
    int depth = 0;
};

struct TreeLayout {
    std::vector<NodePlacement> nodes; // in the order the input listed them
    double width = 0;                 // number of leaf columns used
    int levels = 0;                   // deepest depth + 1

    const NodePlacement *find(int64_t id) const;

private:
    friend TreeLayout layoutTree(const std::vector<TreeEdge> &);
    std::unordered_map<int64_t, size_t> m_index;
};

// Deterministic for a given input. Several roots are laid out side by side in input order. Duplicate
// ids keep their first entry; a parent cycle (never produced by the store) is broken where the walk
// meets it.
TreeLayout layoutTree(const std::vector<TreeEdge> &edges);

} // namespace kforge::ui
