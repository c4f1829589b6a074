// kforge-cli knowledge: what the knowledge base holds and what a prompt for a device and operator would
// retrieve from it, and a check of the user's own notes (a malformed one is named with its file and
// line, and the exit status says so).
#include <cstdio>
#include <map>
#include <string>

#include "app/cli/commands.h"
#include "knowledge/knowledge_base.h"
#include "knowledge/lessons.h"
#include "util/error.h"

namespace kforge::cli {

namespace {

const char *kKnowledgeUsage =
    "usage: kforge-cli knowledge [--arch A] [--device NAME] [--family F] [--bottleneck B] [--text T]\n"
    "                            [--limit N] [--dir DIR] [--show]\n\n"
    "Lists the knowledge base: the notes shipped with kforge and those in the user's folder (--dir, else\n"
    "$KFORGE_KNOWLEDGE_DIR, else ~/.local/share/kforge/knowledge), lessons of earlier searches included.\n"
    "With --arch (sm_90, sm_80, cpu, ...) it ranks them as a prompt for that device would: --device is\n"
    "the worker's reported name (\"NVIDIA H200\"), --family a card family (softmax, layer_norm, ...),\n"
    "--bottleneck one of memory_bound, compute_bound, latency, occupancy, register_spills, and --text\n"
    "free words. --show prints each note's text. A malformed note in the user's folder is reported with\n"
    "its file and line on stderr and the exit status is 1.\n";

const char *kindLabel(knowledge::Kind k)
{
    switch (k) {
    case knowledge::Kind::Hardware: return "hardware";
    case knowledge::Kind::Family: return "family";
    case knowledge::Kind::Lesson: return "lesson";
    }
    return "";
}

} // namespace

int knowledgeCommand(const Args &args)
{
    std::map<std::string, std::string> o;
    for (size_t i = 0; i < args.size(); ++i) {
        const auto &a = args[i];
        if (a == "--help" || a == "--show") {
            o[a] = "1";
        } else if (a == "--arch" || a == "--device" || a == "--family" || a == "--bottleneck" || a == "--text" || a == "--limit"
                   || a == "--dir") {
            if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0)
                throw Error("option " + a + " needs a value");
            if (o.count(a))
                throw Error("option " + a + " is given twice");
            o[a] = args[++i];
        } else {
            throw Error("unknown option '" + a + "' (see --help)");
        }
    }
    if (o.count("--help")) {
        std::fputs(kKnowledgeUsage, stdout);
        return 0;
    }
    size_t limit = 100;
    if (o.count("--limit")) {
        try {
            size_t used = 0;
            const long long v = std::stoll(o["--limit"], &used);
            if (used != o["--limit"].size() || v < 1 || v > 100000)
                throw Error("");
            limit = size_t(v);
        } catch (...) {
            throw Error("option --limit takes a whole number from 1 to 100000, not '" + o["--limit"] + "'");
        }
    }
    if (o.count("--bottleneck")) {
        bool known = false;
        for (const auto &b : knowledge::bottleneckNames())
            known = known || b == o["--bottleneck"];
        if (!known)
            throw Error("option --bottleneck takes memory_bound, compute_bound, latency, occupancy, register_spills or any, not '"
                        + o["--bottleneck"] + "'");
    }

    const auto dir = o.count("--dir") ? o["--dir"] : knowledge::userDir();
    const auto kb = knowledge::KnowledgeBase::load(dir);
    std::vector<knowledge::Passage> shown;
    if (o.count("--arch") || o.count("--family") || o.count("--bottleneck") || o.count("--text")) {
        knowledge::Query q;
        q.arch = o["--arch"];
        q.deviceName = o["--device"];
        if (o.count("--family")) {
            OperatorCard card;
            card.family = o["--family"];
            q.families = knowledge::familiesOf(card);
        }
        q.bottleneck = o["--bottleneck"];
        q.text = o["--text"] + " " + o["--family"];
        q.limit = limit;
        shown = kb.retrieve(q);
    } else {
        for (const auto &n : kb.notes())
            if (shown.size() < limit)
                shown.push_back({&n, 0});
    }
    for (const auto &p : shown) {
        const auto &n = *p.note;
        std::string archs;
        for (const auto &a : n.archs)
            archs += (archs.empty() ? "" : ",") + a;
        std::printf("%-8s %-8s %s  (%s)\n", kindLabel(n.kind), archs.c_str(), n.title.c_str(), n.source.c_str());
        if (o.count("--show"))
            std::printf("\n%s\n", n.body.c_str());
    }
    std::printf("%zu of %zu notes; user folder %s\n", shown.size(), kb.notes().size(), dir.c_str());
    for (const auto &problem : kb.problems())
        std::fprintf(stderr, "kforge-cli knowledge: left out %s\n", problem.c_str());
    return kb.problems().empty() ? 0 : 1;
}

} // namespace kforge::cli
