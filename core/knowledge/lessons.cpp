#include "knowledge/lessons.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include "util/text.h"
#include "pack/selection.h"
#include "protocol/ptxas_log.h"
#include "util/error.h"
#include "util/files.h"
#include "util/hash.h"
#include "ops/scan_ops.h"

namespace fs = std::filesystem;

namespace kforge::knowledge {

namespace {

bool contains(const std::string &s, const char *part)
{
    return s.find(part) != std::string::npos;
}

// The family group the shipped notes are written for.
std::string groupOf(const OperatorCard &card)
{
    static const std::set<std::string> softmax{"softmax", "log_softmax", "cross_entropy"};
    static const std::set<std::string> norm{"layer_norm", "rms_norm", "group_norm", "batch_norm", "instance_norm"};
    static const std::set<std::string> reduction{"sum", "mean", "max", "amax", "argmax", "min", "amin", "argmin", "norm", "prod"};
    static const std::set<std::string> scan{"cumsum", "cumprod", "logcumsumexp"};
    const auto &f = card.family;
    if (softmax.count(f))
        return "softmax";
    if (norm.count(f))
        return "norm";
    if (reduction.count(f))
        return "reduction";
    if (scan.count(f) || findScanOp(f))
        return "scan";
    const auto &op = card.atenOp;
    for (const char *m : {"::mm", "::bmm", "::addmm", "::matmul", "::linear", "::conv", "::baddbmm", "::einsum", "attention"})
        if (contains(op, m))
            return "matmul";
    for (const char *s : {"softmax", "logsumexp"})
        if (contains(op, s))
            return "softmax";
    for (const char *n : {"_norm", "normalize"})
        if (contains(op, n))
            return "norm";
    for (const char *c : {"cum"})
        if (contains(op, c))
            return "scan";
    if (card.errorModel == ErrorModel::Sum)
        return "reduction";
    if (card.errorModel == ErrorModel::Normalization)
        return "norm";
    // Every output the size of the first input: an elementwise operator.
    if (!card.inputs.empty() && !card.outputs.empty()
        && card.numel(card.outputs.front(), card.shape) == card.numel(card.inputs.front(), card.shape))
        return "elementwise";
    return "";
}

std::string codeFence(const std::string &backend)
{
    return backend == "cuda" ? "cuda" : "cpp";
}

} // namespace

std::vector<std::string> familiesOf(const OperatorCard &card)
{
    std::vector<std::string> out;
    if (!card.family.empty())
        out.push_back(card.family);
    const auto g = groupOf(card);
    if (!g.empty() && g != card.family)
        out.push_back(g);
    return out;
}

std::string deviceArch(const nlohmann::json &device)
{
    if (!device.is_object())
        return {};
    if (device.contains("sm") && device["sm"].is_string())
        return device["sm"].get<std::string>();
    if (device.value("backend", std::string()) == "cpu")
        return "cpu";
    return {};
}

nlohmann::json targetDevice(const std::vector<nlohmann::json> &hellos, const std::string &backend)
{
    for (const auto &h : hellos)
        if (auto d = helloDevice(h, backend); !d.is_null())
            return d;
    return nullptr;
}

std::string bottleneckOf(const NodeDetail &node)
{
    // The verdict, not the node's status text: a baseline or running node has no verdict status name.
    if (statusIsFailure(node.verdict.status) && node.node.status != "baseline")
        return {};
    if (const auto s = summarizePtxasLog(node.verdict.compile.log); s && s->spillBytes > 0)
        return "register_spills";
    const auto &p = node.profile;
    auto pct = [&](const char *k) { return p.is_object() && p.contains(k) && p[k].is_number() ? p[k].get<double>() : -1.0; };
    if (p.is_object()) {
        const double mem = pct("memory_throughput_pct"), comp = pct("compute_throughput_pct"), occ = pct("achieved_occupancy_pct");
        if (mem >= 60 && mem >= comp)
            return "memory_bound";
        if (comp >= 60)
            return "compute_bound";
        if (occ >= 0 && occ < 25)
            return "occupancy";
        if (mem >= 0 || comp >= 0)
            return "latency";
    }
    const double floor = node.verdict.rooflineUs > 0 ? node.verdict.rooflineUs : node.node.rooflineUs;
    const double median = node.verdict.candidate.summary.median;
    if (floor > 0 && median > 0)
        return floor / median >= 0.6 ? "memory_bound" : "latency";
    return {};
}

std::optional<Note> lessonFromSearch(const SessionStore &store, int64_t sessionId, int64_t operatorId, const OperatorCard &card,
                                     const std::string &arch, const std::string &deviceName)
{
    if (arch.empty())
        return std::nullopt;
    // The node a pack would ship for this operator: one rule for what a search won (core/pack/selection.h).
    std::optional<NodeDetail> detail;
    for (auto &c : pack::choosePackNodes(store, sessionId))
        if (c.op.id == operatorId && c.node)
            detail = std::move(c.node);
    if (!detail || detail->candidate.source.empty())
        return std::nullopt;
    const NodeRecord *best = &detail->node;

    Note n;
    n.kind = Kind::Lesson;
    n.signature = operatorSignature(card);
    n.archs = {arch};
    n.families = familiesOf(card);
    if (n.families.empty())
        n.families = {"any"};
    const auto b = bottleneckOf(*detail);
    n.bottlenecks = {b.empty() ? "any" : b};
    n.speedup = best->speedup;
    const double floor = detail->verdict.rooflineUs > 0 ? detail->verdict.rooflineUs : best->rooflineUs;
    const double median = detail->verdict.candidate.summary.median;
    n.roofline = floor > 0 && median > 0 ? floor / median : 0;
    n.templateId = best->templateId;
    if (!best->params.empty())
        n.point = best->params.dump();
    n.backend = detail->candidate.backend;
    std::error_code ec;
    const auto absolute = fs::absolute(store.path(), ec);
    n.session = ec ? store.path() : absolute.lexically_normal().string(); // a lesson outlives the folder it was made in
    n.node = best->id;
    n.title = "Lesson: " + card.atenOp + " on " + arch + ", " + formatNumber(n.speedup) + "x over ATen";

    std::ostringstream body;
    body << "The best kernel a search found for " << n.signature << " on " << arch << (deviceName.empty() ? "" : " (" + deviceName + ")")
         << ": " << formatNumber(n.speedup) << "x faster than ATen";
    if (n.roofline > 0)
        body << ", at " << formatNumber(100 * n.roofline, "%.0f") << "% of the roofline";
    body << ", made by " << n.templateId;
    if (best->params.contains("rationale") && best->params["rationale"].is_string())
        body << " (" << best->params["rationale"].get<std::string>() << ")";
    else if (!n.point.empty())
        body << " at " << n.point;
    body << ". What held it back: " << (b.empty() ? "not measured" : b) << ". Session " << n.session << ", node " << n.node << ".\n\n";
    body << "```" << codeFence(n.backend) << "\n" << detail->candidate.source;
    if (detail->candidate.source.back() != '\n')
        body << "\n";
    body << "```\n";
    if (!detail->candidate.launch.empty())
        body << "\nLaunch plan:\n```json\n" << detail->candidate.launch.dump() << "\n```\n";
    n.body = body.str();
    return n;
}

std::string writeLesson(const Note &lesson, const std::string &dir)
{
    const fs::path folder = fs::path(dir) / "lessons" / (lesson.archs.empty() ? "any" : lesson.archs.front());
    const fs::path file = folder / (contentHash(lesson.signature).substr(0, 16) + ".md");
    std::error_code ec;
    if (fs::exists(file, ec)) {
        try {
            const auto old = parseNote(readWholeFile(file.string()), file.string());
            if (old.signature == lesson.signature && old.speedup >= lesson.speedup)
                return {};
        } catch (const Error &) {
            // A lesson that no longer reads is replaced by one that does.
        }
    }
    fs::create_directories(folder, ec);
    if (ec)
        throw Error("cannot create the knowledge folder " + folder.string() + ": " + ec.message());
    writeFileAtomically(file.string(), formatNote(lesson)); // a reader never sees half a note
    return file.string();
}

std::optional<Candidate> lessonCandidate(const Note &lesson)
{
    if (lesson.kind != Kind::Lesson)
        return std::nullopt;
    const std::string &b = lesson.body;
    const auto fence = "```" + codeFence(lesson.backend) + "\n";
    const auto start = b.find(fence);
    if (start == std::string::npos)
        return std::nullopt;
    const auto codeBegin = start + fence.size();
    const auto codeEnd = b.find("\n```", codeBegin - 1);
    if (codeEnd == std::string::npos)
        return std::nullopt;
    Candidate c;
    c.backend = lesson.backend.empty() ? "cpu" : lesson.backend;
    c.source = b.substr(codeBegin, codeEnd + 1 - codeBegin);
    if (const auto plan = b.find("Launch plan:\n```json\n", codeEnd); plan != std::string::npos) {
        const auto j = plan + 21;
        const auto e = b.find("\n```", j);
        c.launch = nlohmann::json::parse(b.substr(j, e == std::string::npos ? std::string::npos : e - j), nullptr, false);
        if (c.launch.is_discarded())
            return std::nullopt;
    }
    return c;
}

} // namespace kforge::knowledge
