#include "ui/compare_rows.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <regex>
#include <sstream>

#include "protocol/ptxas_log.h"
#include "protocol/verdict.h"

namespace kforge::ui {

namespace {
std::string fixed(double v, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string bytes(long long b)
{
    if (b >= 1024 && b % 1024 == 0)
        return std::to_string(b / 1024) + " KiB";
    return std::to_string(b) + " B";
}
} // namespace

std::optional<KernelUsage> parseKernelUsage(const std::string &log)
{
    // One parser for the worker, this panel and the LLM prompt (protocol/ptxas_log.h).
    const auto s = summarizePtxasLog(log);
    if (!s)
        return std::nullopt;
    return KernelUsage{s->kernels, s->registers, s->sharedBytes, s->spillBytes};
}

CompareRow compareRow(const NodeDetail &d)
{
    CompareRow r;
    r.id = d.node.id;
    r.status = d.node.status;
    r.templateId = d.node.templateId;
    const auto &t = d.verdict.candidate.summary;
    r.medianUs = t.median;
    r.spread = t.relativeSpread();
    r.samples = t.count;
    r.speedup = d.node.speedup;
    const double floor = d.node.rooflineUs > 0 ? d.node.rooflineUs : d.verdict.rooflineUs;
    r.rooflineFraction = floor > 0 && t.median > 0 ? floor / t.median : 0;
    r.usage = parseKernelUsage(d.verdict.compile.log);
    const auto &plan = d.candidate.launch;
    if (plan.is_object() && plan.contains("kernels") && plan["kernels"].is_array()) {
        for (const auto &k : plan["kernels"]) {
            if (!k.is_object() || !k.contains("shared_bytes"))
                continue;
            const auto &s = k["shared_bytes"];
            const std::string text = s.is_string() ? s.get<std::string>() : s.is_number() ? std::to_string(s.get<long long>()) : "";
            if (!text.empty() && text != "0")
                r.dynamicShared += (r.dynamicShared.empty() ? "" : ", ") + text;
        }
    }
    return r;
}

std::vector<CompareRow> compareRows(const std::vector<NodeDetail> &details)
{
    std::vector<CompareRow> out;
    out.reserve(details.size());
    for (const auto &d : details)
        out.push_back(compareRow(d));
    return out;
}

std::string compareHeader(CompareColumn c)
{
    switch (c) {
    case CompareColumn::Node: return "Node";
    case CompareColumn::Status: return "Status";
    case CompareColumn::Template: return "Template";
    case CompareColumn::Median: return "Median";
    case CompareColumn::Spread: return "Spread";
    case CompareColumn::Speedup: return "Speedup";
    case CompareColumn::Registers: return "Registers";
    case CompareColumn::Shared: return "Shared memory";
    case CompareColumn::Spills: return "Spills";
    case CompareColumn::Roofline: return "Roofline";
    case CompareColumn::Count: break;
    }
    return {};
}

std::string compareCell(const CompareRow &r, CompareColumn c)
{
    const bool timed = r.medianUs > 0;
    switch (c) {
    case CompareColumn::Node: return "#" + std::to_string(r.id);
    case CompareColumn::Status: return r.status;
    case CompareColumn::Template: return r.templateId;
    case CompareColumn::Median: return timed ? fixed(r.medianUs, 2) + " \u00b5s" : "-";
    case CompareColumn::Spread: return timed ? "\u00b1" + fixed(100 * r.spread, 1) + "% (" + std::to_string(r.samples) + ")" : "-";
    case CompareColumn::Speedup: return r.speedup > 0 ? fixed(r.speedup, 2) + "x" : "-";
    case CompareColumn::Registers: return r.usage ? std::to_string(r.usage->registers) : "-";
    case CompareColumn::Shared: {
        std::string s = r.usage ? bytes(r.usage->sharedBytes) : "-";
        if (!r.dynamicShared.empty())
            s += " + dynamic " + r.dynamicShared;
        return s;
    }
    case CompareColumn::Spills: return r.usage ? bytes(r.usage->spillBytes) : "-";
    case CompareColumn::Roofline: return r.rooflineFraction > 0 ? std::to_string(int(std::lround(100 * r.rooflineFraction))) + "%" : "-";
    case CompareColumn::Count: break;
    }
    return {};
}

} // namespace kforge::ui
