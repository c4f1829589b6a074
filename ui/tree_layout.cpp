#include "ui/tree_layout.h"

#include <algorithm>

namespace kforge::ui {

const NodePlacement *TreeLayout::find(int64_t id) const
{
    auto it = m_index.find(id);
    return it == m_index.end() ? nullptr : &nodes[it->second];
}

TreeLayout layoutTree(const std::vector<TreeEdge> &edges)
{
    TreeLayout out;
    const size_t n = edges.size();
    out.nodes.reserve(n);
    for (const auto &e : edges) {
        if (out.m_index.count(e.id))
            continue;
        out.m_index.emplace(e.id, out.nodes.size());
        out.nodes.push_back({e.id, 0, 0});
    }

    // Children lists by index, in input order.
    std::vector<std::vector<size_t>> children(out.nodes.size());
    std::vector<bool> isRoot(out.nodes.size(), true);
    std::vector<bool> seen(out.nodes.size(), false);
    for (const auto &e : edges) {
        const size_t self = out.m_index.at(e.id);
        if (seen[self])
            continue; // a duplicate id: its first entry decided the parent
        seen[self] = true;
        if (!e.parentId || *e.parentId == e.id)
            continue;
        auto p = out.m_index.find(*e.parentId);
        if (p == out.m_index.end())
            continue;
        children[p->second].push_back(self);
        isRoot[self] = false;
    }

    // Iterative post-order walk: a long chain of repairs must not exhaust the stack.
    std::vector<bool> placed(out.nodes.size(), false);
    double nextColumn = 0;
    int deepest = -1;
    auto walk = [&](size_t root) {
        struct Frame {
            size_t node;
            size_t next; // index into children[node] of the next child to visit
        };
        std::vector<Frame> stack{{root, 0}};
        placed[root] = true;
        out.nodes[root].depth = 0;
        while (!stack.empty()) {
            Frame &f = stack.back();
            const auto &kids = children[f.node];
            if (f.next < kids.size()) {
                const size_t c = kids[f.next++];
                if (placed[c])
                    continue; // cycle or shared child: the first visit owns it
                placed[c] = true;
                out.nodes[c].depth = out.nodes[f.node].depth + 1;
                stack.push_back({c, 0});
                continue;
            }
            // All children done: place this node.
            auto &me = out.nodes[f.node];
            double first = 0, last = 0;
            bool any = false;
            for (size_t c : kids) {
                if (out.nodes[c].depth != me.depth + 1)
                    continue; // not ours (visited through another parent)
                if (!any)
                    first = out.nodes[c].x;
                last = out.nodes[c].x;
                any = true;
            }
            me.x = any ? (first + last) / 2 : nextColumn++;
            deepest = std::max(deepest, me.depth);
            stack.pop_back();
        }
    };
    for (size_t i = 0; i < out.nodes.size(); ++i)
        if (isRoot[i] && !placed[i])
            walk(i);
    // Whatever is left hangs off a cycle; lay it out as its own tree so nothing is dropped.
    for (size_t i = 0; i < out.nodes.size(); ++i)
        if (!placed[i])
            walk(i);

    out.width = nextColumn;
    out.levels = deepest + 1;
    return out;
}

} // namespace kforge::ui
