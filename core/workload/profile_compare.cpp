#include "workload/profile_compare.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace kforge {

ProfileComparison compareProfiles(const WorkloadFile &before, const WorkloadFile &after, const std::set<std::string> &takenOps)
{
    ProfileComparison out;
    std::map<std::string, size_t> index;
    // A top-level call is the pack's when it or one of the calls nested in it (the calls after it at a
    // greater depth) is a taken operator: softmax.int reaches a pack's _softmax from inside.
    const auto takesPack = [&](const WorkloadFile &w, size_t i) {
        const auto &calls = w.calls;
        if (takenOps.count(calls[i].qualifiedName()))
            return true;
        for (size_t j = i + 1; j < calls.size() && calls[j].depth > calls[i].depth; ++j)
            if (takenOps.count(calls[j].qualifiedName()))
                return true;
        return false;
    };
    const auto add = [&](const WorkloadFile &w, bool isBefore) {
        for (const auto &g : groupCalls(w.calls)) {
            auto [it, fresh] = index.try_emplace(g.signature, out.changes.size());
            if (fresh) {
                ProfileChange c;
                c.signature = g.signature;
                c.op = w.calls.at(g.calls.front()).qualifiedName();
                out.changes.push_back(c);
            }
            auto &c = out.changes[it->second];
            if (!isBefore)
                for (const auto i : g.calls)
                    c.byPack = c.byPack || takesPack(w, i);
            (isBefore ? c.beforeUs : c.afterUs) += g.totalUs;
            (isBefore ? c.callsBefore : c.callsAfter) += int64_t(g.calls.size());
            (isBefore ? out.beforeUs : out.afterUs) += g.totalUs;
        }
    };
    add(before, true);
    add(after, false);
    std::stable_sort(out.changes.begin(), out.changes.end(), [](const ProfileChange &a, const ProfileChange &b) {
        return std::max(a.beforeUs, a.afterUs) > std::max(b.beforeUs, b.afterUs);
    });
    return out;
}

std::string comparisonTable(const ProfileComparison &c, size_t maxRows)
{
    std::vector<const ProfileChange *> rows;
    for (const auto &ch : c.changes)
        if (ch.byPack)
            rows.push_back(&ch);
    for (const auto &ch : c.changes)
        if (!ch.byPack)
            rows.push_back(&ch);
    std::string out;
    char line[512];
    std::snprintf(line, sizeof line, "%-4s %-28s %7s %12s %12s %9s  %s\n", "pack", "operator", "calls", "before us", "with us", "change",
                  "pattern");
    out += line;
    const auto ratio = [](double b, double a) { return a > 0 && b > 0 ? b / a : 0.0; };
    for (size_t i = 0; i < rows.size() && i < maxRows; ++i) {
        const auto &r = *rows[i];
        std::string change = "-";
        if (r.beforeUs > 0 && r.afterUs > 0) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.3fx", ratio(r.beforeUs, r.afterUs));
            change = buf;
        } else {
            change = r.beforeUs > 0 ? "gone" : "new";
        }
        std::string pattern = r.signature.size() > 60 ? r.signature.substr(0, 57) + "..." : r.signature;
        std::snprintf(line, sizeof line, "%-4s %-28s %7lld %12.1f %12.1f %9s  %s\n", r.byPack ? "yes" : "", r.op.c_str(),
                      (long long)std::max(r.callsBefore, r.callsAfter), r.beforeUs, r.afterUs, change.c_str(), pattern.c_str());
        out += line;
    }
    if (rows.size() > maxRows) {
        std::snprintf(line, sizeof line, "... %zu more patterns\n", rows.size() - maxRows);
        out += line;
    }
    std::snprintf(line, sizeof line, "top level: %.1f us before, %.1f us with the pack (%.3fx)\n", c.beforeUs, c.afterUs,
                  ratio(c.beforeUs, c.afterUs));
    out += line;
    return out;
}

} // namespace kforge
