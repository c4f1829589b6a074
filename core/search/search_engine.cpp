#include "search/search_engine.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "knowledge/knowledge_base.h"
#include "knowledge/lessons.h"
#include "search/reverify.h"
#include "search/search_value.h"
#include "search/selection_scores.h"
#include "util/error.h"

namespace kforge {

SearchEngine::SearchEngine(SessionStore &store, WorkerPool &pool, Proposer &proposer, SearchOptions options)
    : m_store(store), m_pool(pool), m_proposer(proposer), m_options(std::move(options))
{
}

void SearchEngine::requestStop(bool now)
{
    requestStopFromSignal(now);
    m_inbox->cv.notify_all();
}

void SearchEngine::requestStopFromSignal(bool now)
{
    m_stop = true;
    if (now)
        m_stopNow = true;
}

bool isUnfinished(const std::string &status)
{
    return status.empty() || status == "running" || status == "queued" || status == "interrupted";
}

bool isCorrectStatus(const std::string &status)
{
    return status == "accepted" || status == "not_faster";
}

// A stored node as the proposer ranks it: a correct one's speedup replaced by its search value. (A
// resumed tree's reference is its first correct node by id, which a search of several workers may
// have finished after another: the stored rewards then differ from these by one factor, which moves
// no comparison between two of them inside the reward's clamps.)
static NodeRecord ranked(NodeRecord n, SearchValue &value, double candidateMedianUs)
{
    if (isCorrectStatus(n.status))
        n.speedup = value.of(n.speedup, candidateMedianUs);
    return n;
}

SearchProgress SearchEngine::run(int64_t sessionId, int64_t operatorId, const OperatorCard &card, SearchObserver *observer)
{
    using clock = std::chrono::steady_clock;
    const auto started = clock::now();
    std::mt19937_64 rng(m_options.seed);
    MctsTree tree;
    std::map<int, NodeRecord> records; // tree index -> stored node

    m_pool.setEventSink([inbox = m_inbox](const PoolEvent &e) {
        std::lock_guard lock(inbox->mutex);
        inbox->events.push_back(e);
        inbox->cv.notify_all();
    });

    SearchValue value(ranksByCandidateTime(m_options.backend)); // what the reward and the proposer rank by

    // A session that already has this operator's tree (a search stopped, killed or paused) goes on from
    // it: finished nodes are replayed into the tree, nodes left in flight are evaluated again under
    // their own ids, and the proposer hears of every stored node so that it proposes none of them again.
    std::vector<NodeRecord> stored;
    for (auto &n : m_store.nodes(sessionId))
        if (n.operatorId == operatorId)
            stored.push_back(std::move(n));
    std::vector<std::pair<int, int64_t>> unfinished; // tree index, node id
    std::map<int64_t, int> indexOf;                  // node id -> tree index
    if (stored.empty()) {
        // The root is the baseline: the ATen operator itself.
        NodeRecord root;
        root.sessionId = sessionId;
        root.operatorId = operatorId;
        root.status = "baseline";
        root.templateId = "aten";
        root.summary = "baseline: " + card.atenOp;
        root.speedup = 1.0;
        root.id = m_store.addNode(root, Candidate{"reference", card.atenSchema, nlohmann::json::object()});
        records[0] = root;
        if (observer)
            observer->nodeAdded(root);
    } else {
        std::map<int64_t, double> candidateMedian; // node id -> its candidate's median time
        for (const auto &t : m_store.candidateTimings(sessionId))
            candidateMedian[t.nodeId] = t.candidate.median;
        for (auto &n : stored) { // ids increase, so a parent comes before its children
            if (!n.parentId) {
                if (indexOf.count(n.id) || !records.empty())
                    throw Error("the session's operator " + std::to_string(operatorId) + " has more than one root node");
                indexOf[n.id] = 0;
                records[0] = n;
                continue;
            }
            const auto parent = indexOf.find(*n.parentId);
            if (parent == indexOf.end())
                throw Error("node " + std::to_string(n.id) + " names parent " + std::to_string(*n.parentId) + ", which is not in its tree");
            const int t = tree.addChild(parent->second);
            indexOf[n.id] = t;
            if (isUnfinished(n.status))
                unfinished.push_back({t, n.id});
            else
                tree.complete(t, n.reward, !isCorrectStatus(n.status));
            if (!n.pruned.empty())
                tree.markPruned(t);
            m_proposer.known(ranked(n, value, candidateMedian.count(n.id) ? candidateMedian[n.id] : 0.0));
            records[t] = n;
        }
        if (records.empty())
            throw Error("the session's operator " + std::to_string(operatorId) + " has nodes but no root");
    }
    const auto device = knowledge::targetDevice(m_pool.hellos(), m_options.backend);
    const auto arch = knowledge::deviceArch(device);
    m_proposer.target(device);
    m_proposer.begin(sessionId, operatorId);

    SearchProgress prog;
    // A lesson of an earlier search of this operator on this architecture goes first: a warm start.
    // One of another shape is a guess (on the CPU sweeps the template's own start was nearer the best
    // more often than a lesson from a shape 4x away), so it goes second, after the first proposal.
    struct LessonStart {
        std::string templateId, shape, source;
        nlohmann::json point;
        std::optional<Candidate> kernel;
        bool otherShape = false;
    };
    std::optional<LessonStart> lesson;
    if (!m_options.lessonsDir.empty() && !arch.empty()) {
        try {
            knowledge::KnowledgeBase lessons;
            lessons.addFolder(m_options.lessonsDir);
            if (!lessons.problems().empty()) // said, not fatal: the search goes on without that note
                prog.lessonNote = "a knowledge note was left out: " + lessons.problems().front();
            // This signature's lesson, else the same operator's at the nearest other shape: its
            // template point re-made for this shape by the proposer, or its kernel as it was (the
            // guard judges whether it holds at this shape).
            double distance = 0;
            if (const auto *l = lessons.nearestLesson(knowledge::operatorSignature(card), arch, &distance)) {
                auto point = nlohmann::json::parse(l->point.empty() ? "{}" : l->point, nullptr, false);
                if (!point.is_object())
                    point = nlohmann::json::object();
                point.erase("calls"); // an earlier session's LLM calls
                const auto parts = knowledge::splitSignature(l->signature);
                LessonStart ls;
                if (parts)
                    ls.shape = shapeText(parts->shape);
                ls.templateId = l->templateId;
                ls.source = l->source;
                ls.point = std::move(point);
                if (auto c = knowledge::lessonCandidate(*l); c && c->backend == m_options.backend)
                    ls.kernel = std::move(*c);
                ls.otherShape = distance > 0;
                if (ls.kernel || ls.otherShape)
                    lesson = std::move(ls);
            }
        } catch (const Error &e) {
            prog.lessonNote = std::string("lessons not read: ") + e.what();
        }
    }
    int proposed = tree.size() - 1, sinceBest = 0;
    for (const auto &[t, rec] : records)
        if (t > 0 && isCorrectStatus(rec.status) && rec.speedup > prog.bestSpeedup) {
            prog.bestSpeedup = rec.speedup;
            prog.bestNode = rec.id;
        }
    if (!stored.empty())
        lesson.reset(); // a resumed tree has had its start
    // The lesson as a proposal, made when its turn comes (so the proposer re-makes a lesson of another
    // shape knowing what was made before it): its template point at this shape, else its kernel.
    auto lessonProposal = [&]() -> std::optional<Proposal> {
        const LessonStart l = std::move(*lesson);
        lesson.reset();
        if (l.otherShape)
            if (auto p = m_proposer.adapt(card, l.templateId, l.point, rng)) {
                p->rationale = "warm start: " + p->rationale + " (" + l.shape + "), the lesson " + l.source;
                return p;
            }
        if (!l.kernel)
            return std::nullopt;
        return Proposal{l.templateId, l.point, *l.kernel,
                        l.otherShape ? "warm start: the lesson of this operator at the nearest other shape (" + l.shape + "), " + l.source
                                     : "warm start: the lesson " + l.source};
    };
    auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - started).count(); };
    auto budgetLeft = [&] {
        if (m_stop)
            return false;
        if (!m_proposer.stopReason().empty())
            return false;
        if (proposed >= m_options.maxNodes)
            return false;
        if (m_options.maxSeconds > 0 && elapsed() >= m_options.maxSeconds)
            return false;
        if (m_options.stallNodes > 0 && sinceBest >= m_options.stallNodes)
            return false;
        return true;
    };

    std::string backend; // of the proposals so far: workers that compile ahead get K more queued
    auto submit = [&](int t, int64_t id, const Candidate &candidate) {
        ++prog.running;
        m_pool.submit(card, candidate, m_options.eval, [inbox = m_inbox, t, id](Verdict v) {
            std::lock_guard lock(inbox->mutex);
            inbox->done.push_back({t, id, std::move(v)});
            inbox->cv.notify_all();
        });
    };
    for (const auto &[t, id] : unfinished) {
        const auto detail = m_store.nodeDetail(id);
        if (!detail)
            throw Error("node " + std::to_string(id) + " vanished from the session");
        m_store.setNodeStatus(id, "running");
        records[t].status = "running";
        backend = detail->candidate.backend;
        submit(t, id, detail->candidate);
    }
    for (;;) {
        // Keep every worker busy, and K more queued for each worker that compiles them meanwhile (lookahead).
        while (budgetLeft() && prog.running < m_pool.size() + (backend.empty() ? 0 : m_pool.lookahead(backend))) {
            std::optional<Proposal> warmStart;
            if (lesson && (!lesson->otherShape || proposed >= 1))
                warmStart = lessonProposal();
            const bool warm = warmStart.has_value();
            const int rootChildren = int(tree.node(0).children.size());
            const bool diverse = !warm && m_options.roots > 1 && rootChildren < m_options.roots && !tree.node(0).exhausted;
            const auto scored = warm || diverse ? std::optional<Selection>(Selection{}) : tree.selectScored(m_options.mcts);
            if (!scored)
                break;
            const std::optional<int> sel = scored->node;
            const NodeRecord *parent = *sel == 0 ? nullptr : &records[*sel];
            auto proposal = warm ? std::move(warmStart) : m_proposer.propose(card, parent, rng);
            if (!proposal) {
                tree.markExhausted(*sel);
                continue;
            }
            backend = proposal->candidate.backend;
            NodeRecord n;
            n.sessionId = sessionId;
            n.operatorId = operatorId;
            n.parentId = records[*sel].id;
            n.expansion = warm ? "warm_start" : (parent && tree.node(*sel).failed) ? "repair" : "improve";
            n.templateId = proposal->templateId;
            n.params = proposal->params;
            n.summary = proposal->rationale;
            const int grand = tree.node(*sel).parent;
            const std::string roots = std::to_string(m_options.roots);
            n.selection = warm      ? ruleJson("warm_start", "a lesson of an earlier search of this operator on this device goes first "
                                                             "(one of another shape second)")
                        : diverse ? ruleJson("diverse_root", "the baseline's first " + roots + " children are made before UCT descends (roots "
                                                                 + roots + "): this is child " + std::to_string(rootChildren + 1) + " of " + roots)
                                  : selectionJson(*scored, m_options.mcts, records[*sel].id, grand >= 0 ? records[grand].id : 0);
            // What the proposer made and why, kept with the node: its summary becomes the verdict's line.
            if (n.selection.is_object() && !proposal->rationale.empty())
                n.selection["made"] = proposal->rationale;
            n.id = m_store.addNode(n, proposal->candidate);
            if (!warm)
                m_proposer.stored(n.id);
            const int t = tree.addChild(*sel);
            records[t] = n;
            ++proposed;
            if (observer)
                observer->nodeAdded(n);
            submit(t, n.id, proposal->candidate);
        }
        if (m_stopNow && prog.running > 0) {
            // Stopped at once: what is in flight is left to the pool's shutdown and marked, never left
            // `running`; a resumed search evaluates those nodes again.
            for (auto &[t, rec] : records)
                if (rec.status == "running") {
                    m_store.setNodeStatus(rec.id, "interrupted");
                    rec.status = "interrupted";
                }
            prog.stopReason = "interrupted";
            break;
        }
        if (prog.running == 0) {
            const std::string failure = m_proposer.lastFailure();
            prog.stopReason = m_stop ? "stopped" : !m_proposer.stopReason().empty() ? m_proposer.stopReason()
                            : proposed >= m_options.maxNodes ? "node budget spent"
                            : (m_options.stallNodes > 0 && sinceBest >= m_options.stallNodes) ? "no improvement"
                            : (m_options.maxSeconds > 0 && elapsed() >= m_options.maxSeconds) ? "time budget spent"
                            : !failure.empty() ? "no proposal: the last one failed: " + failure
                                               : "search space exhausted";
            break;
        }

        std::deque<Completion> done;
        std::deque<PoolEvent> events;
        {
            auto &in = *m_inbox;
            std::unique_lock lock(in.mutex);
            in.cv.wait_for(lock, std::chrono::milliseconds(250), [&in] { return !in.done.empty() || !in.events.empty(); });
            done.swap(in.done);
            events.swap(in.events);
        }
        for (const auto &e : events) {
            m_store.addWorkerEvent(sessionId, e.slot, e.kind, e.detail);
            if (observer)
                observer->workerEvent(e);
        }
        for (auto &c : done) {
            if (m_stopNow)
                break; // the loop's next turn marks what is still in flight
            const bool correct = c.verdict.correct();
            const double searchValue = correct ? value.of(c.verdict.speedup, c.verdict.candidate.summary.median) : 0.0;
            const double reward = rewardFor(correct, searchValue);
            m_store.finishNode(c.nodeId, c.verdict, reward);
            const bool accepted = c.verdict.status == VerdictStatus::Accepted;
            m_store.addDecision(c.nodeId, accepted ? "accept" : "reject", "guard", c.verdict.summaryLine());
            tree.complete(c.treeNode, reward, !correct);
            --prog.running;
            ++prog.evaluated;
            ++sinceBest;
            if (!correct)
                ++prog.failed;
            if (accepted)
                ++prog.accepted;
            if (correct && c.verdict.speedup > prog.bestSpeedup) {
                prog.bestSpeedup = c.verdict.speedup;
                prog.bestNode = c.nodeId;
                sinceBest = 0;
            }
            auto &rec = records[c.treeNode];
            rec.status = statusName(c.verdict.status);
            rec.speedup = c.verdict.speedup;
            rec.reward = reward;
            rec.noise = c.verdict.noise;
            rec.reasons = c.verdict.reasons;
            rec.summary = c.verdict.summaryLine();
            rec.worker = c.verdict.worker;
            NodeRecord seen = rec;
            if (correct)
                seen.speedup = searchValue;
            m_proposer.finished(seen);
            if (observer)
                observer->nodeFinished(rec);
        }
        if (!done.empty())
            for (const auto &cut : tree.prune(m_options.mcts)) { // dead ends: stored, never deleted
                auto &rec = records[cut.node];
                rec.pruned = pruneReason(cut, records[cut.sibling].id, m_options.mcts);
                m_store.setNodePruned(rec.id, rec.pruned);
            }
        prog.elapsedSeconds = elapsed();
        if (observer && (!done.empty() || !events.empty()))
            observer->progress(prog);
    }
    m_pool.setEventSink(nullptr);
    if (m_options.reverifyBest && !m_stopNow && prog.bestNode) {
        // The best once more on inputs of its own seed: a kernel right only on the inputs it was
        // verified on loses its acceptance here, not in someone's model.
        const auto best = std::find_if(records.begin(), records.end(), [&](const auto &r) { return r.second.id == prog.bestNode; });
        if (best != records.end() && best->second.status == "accepted") {
            const auto r = reverifyNode(m_store, m_pool, prog.bestNode, rng() | 1, m_options.eval.deadlineMs);
            prog.reverified = r.line;
            if (!r.held) {
                --prog.accepted;
                prog.bestSpeedup = 0;
                prog.bestNode = 0;
                for (const auto &[t, rec] : records)
                    if (t > 0 && rec.id != r.nodeId && isCorrectStatus(rec.status) && rec.speedup > prog.bestSpeedup) {
                        prog.bestSpeedup = rec.speedup;
                        prog.bestNode = rec.id;
                    }
            }
        }
    }
    m_store.checkpoint(); // the session file alone is complete, without its -wal
    if (!m_options.lessonsDir.empty() && !arch.empty()) {
        try {
            const std::string name = device.is_object() ? device.value("name", std::string()) : std::string();
            if (auto l = knowledge::lessonFromSearch(m_store, sessionId, operatorId, card, arch, name))
                prog.lesson = knowledge::writeLesson(*l, m_options.lessonsDir);
        } catch (const std::exception &e) {
            prog.lessonNote = std::string("no lesson written: ") + e.what();
        }
    }
    prog.elapsedSeconds = elapsed();
    if (observer)
        observer->progress(prog);
    return prog;
}

} // namespace kforge
