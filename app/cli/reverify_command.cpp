// kforge-cli reverify SESSION [--node ID]: accepted nodes (the guard's and people's) verified again on
// inputs of a new seed; one shown wrong is revoked (search/reverify.h) and leaves the pack.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <random>
#include <string>

#include "app/cli/commands.h"
#include "pool/worker_pool.h"
#include "search/reverify.h"
#include "store/session_store.h"
#include "util/error.h"
#include "util/paths.h"

namespace kforge::cli {

namespace {

const char *kReverifyUsage =
    "usage: kforge-cli reverify SESSION [--node ID] [--seed N] [--worker CMD] [--deadline-ms MS]\n\n"
    "Verifies every accepted node of the session again (the guard's accepts and a person's, see kforge-cli\n"
    "decide), or only --node, without timing, on inputs drawn from a new seed (--seed, default: a random one).\n"
    "A node shown wrong is revoked: the guard's reject decision, with the failed trial as its reason, which\n"
    "overrules every accept before it, so kforge-cli export leaves it out. Prints one line per node.\n"
    "Exit status 0 when every node held, 1 when one was revoked.\n";

int64_t wholeNumber(const std::string &option, const std::string &text, int64_t min)
{
    try {
        size_t used = 0;
        const long long v = std::stoll(text, &used);
        if (used == text.size() && v >= min)
            return v;
    } catch (...) {
    }
    throw Error("option " + option + " takes a whole number of at least " + std::to_string(min) + ", not '" + text + "'");
}

} // namespace

int reverifyCommand(const Args &args)
{
    std::string session, nodeText, seedText, worker = defaultWorkerCommand(), deadlineText;
    for (size_t i = 0; i < args.size(); ++i) {
        const auto &a = args[i];
        if (a == "--help") {
            std::fputs(kReverifyUsage, stdout);
            return 0;
        }
        if (a == "--node" || a == "--seed" || a == "--worker" || a == "--deadline-ms") {
            if (i + 1 >= args.size() || args[i + 1].empty())
                throw Error("option " + a + " needs a value");
            auto &slot = a == "--node" ? nodeText : a == "--seed" ? seedText : a == "--worker" ? worker : deadlineText;
            slot = args[++i];
        } else if (a.rfind("--", 0) == 0 || !session.empty()) {
            throw Error("unknown option '" + a + "' (see --help)");
        } else {
            session = a;
        }
    }
    if (session.empty()) {
        std::fputs(kReverifyUsage, stderr);
        return 2;
    }
    const int64_t only = nodeText.empty() ? 0 : wholeNumber("--node", nodeText, 1);
    const uint64_t seed = seedText.empty() ? (uint64_t(std::random_device{}()) << 32 | std::random_device{}()) | 1
                                           : uint64_t(wholeNumber("--seed", seedText, 1));
    const int deadline = deadlineText.empty() ? 60000 : int(std::min<int64_t>(wholeNumber("--deadline-ms", deadlineText, 1), 86400000));

    // Refused before anything writes: a file that is not a session, or holds none.
    if (SessionStore::fileSchemaVersion(session) == 0)
        throw Error("'" + session + "' is empty: no kforge session has been written to it yet");
    SessionStore store(session); // upgrades an older file in place, as decide does
    std::vector<int64_t> nodes;
    for (const auto &s : store.sessions())
        for (int64_t id : acceptedNodes(store, s.id))
            if (!only || id == only)
                nodes.push_back(id);
    if (only && nodes.empty()) {
        const auto d = store.nodeDetail(only);
        if (!d)
            throw Error("'" + session + "' has no node " + std::to_string(only));
        throw Error("node " + std::to_string(only) + " is not accepted (" + d->node.status
                    + ", and no person accepted it, or it was revoked or rejected since): there is nothing to re-verify");
    }
    if (nodes.empty()) {
        std::printf("no accepted node to re-verify\n");
        return 0;
    }
    PoolOptions po;
    po.command = worker;
    WorkerPool pool(po);
    pool.start();
    int revoked = 0;
    for (int64_t id : nodes) {
        const auto r = reverifyNode(store, pool, id, seed, deadline);
        revoked += !r.held;
        std::printf("%s\n", r.line.c_str());
        std::fflush(stdout);
    }
    pool.shutdown();
    store.checkpoint();
    std::printf("%zu re-verified, %d revoked (input seed %llu)\n", nodes.size(), revoked, (unsigned long long)seed);
    return revoked ? 1 : 0;
}

} // namespace kforge::cli
