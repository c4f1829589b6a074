// kforge-cli decide: a person's accept or reject of one node, stored beside the guard's decision with
// actor "user" and the reason given, exactly as the window's Accept and Reject buttons store it.
#include <cstdio>
#include <map>
#include <string>

#include "app/cli/commands.h"
#include "store/session_store.h"
#include "util/error.h"

namespace kforge::cli {

namespace {

const char *kDecideUsage =
    "usage: kforge-cli decide --session FILE --node ID (--accept | --reject) --reason TEXT\n\n"
    "Records a person's decision on a node: --accept overrules a guard that rejected it (or confirms an\n"
    "accepted one), --reject keeps it out of the best path and the pack. The reason is required and is\n"
    "stored with the decision (actor \"user\"), next to the guard's own. Prints the decision as one line.\n";

} // namespace

int decideCommand(const Args &args)
{
    std::map<std::string, std::string> o;
    for (size_t i = 0; i < args.size(); ++i) {
        const auto &a = args[i];
        if (a == "--help" || a == "--accept" || a == "--reject") {
            o[a] = "1";
        } else if (a == "--session" || a == "--node" || a == "--reason") {
            if (i + 1 >= args.size())
                throw Error("option " + a + " needs a value");
            o[a] = args[++i];
        } else {
            throw Error("unknown option '" + a + "' (see --help)");
        }
    }
    if (o.count("--help")) {
        std::fputs(kDecideUsage, stdout);
        return 0;
    }
    for (const char *k : {"--session", "--node", "--reason"})
        if (!o.count(k))
            throw Error(std::string("option ") + k + " is required (see --help)");
    if (o.count("--accept") == o.count("--reject"))
        throw Error(o.count("--accept") ? "pass --accept or --reject, not both" : "pass --accept or --reject: the decision itself");
    if (o["--reason"].find_first_not_of(" \t\n") == std::string::npos)
        throw Error("--reason needs some text: say why");
    int64_t node = 0;
    try {
        size_t used = 0;
        node = std::stoll(o["--node"], &used);
        if (used != o["--node"].size() || node <= 0)
            throw Error("");
    } catch (...) {
        throw Error("option --node needs a node id (a whole number above 0), not '" + o["--node"] + "'");
    }

    // Checked without writing first, so a file that is not a session (or is empty), or a node that is
    // not in it, is refused before anything can write to the file or upgrade it.
    const int version = SessionStore::fileSchemaVersion(o["--session"]);
    if (version == 0)
        throw Error("'" + o["--session"] + "' is empty: no kforge session has been written to it yet");
    if (version == SessionStore::currentSchemaVersion()) {
        SessionStore probe(o["--session"], SessionStore::Mode::ReadOnly);
        const auto detail = probe.nodeDetail(node);
        if (!detail)
            throw Error("'" + o["--session"] + "' has no node " + std::to_string(node));
        if (detail->node.status == "baseline")
            throw Error("node " + std::to_string(node) + " is the baseline (the ATen operator): there is nothing to decide");
        if (detail->node.status == "running")
            throw Error("node " + std::to_string(node) + " is still being evaluated; decide once its verdict is in");
    }
    const std::string decision = o.count("--accept") ? "accept" : "reject";
    SessionStore store(o["--session"]); // upgrades an older file in place
    if (version != SessionStore::currentSchemaVersion() && !store.nodeDetail(node))
        throw Error("'" + o["--session"] + "' has no node " + std::to_string(node));
    const auto id = store.addDecision(node, decision, "user", o["--reason"]);
    std::printf("decision %lld: node %lld %s by user: %s\n", (long long)id, (long long)node,
                decision == "accept" ? "accepted" : "rejected", o["--reason"].c_str());
    return 0;
}

} // namespace kforge::cli
