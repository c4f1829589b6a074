#include "search/search_engine.h"

#include <chrono>
#include <map>

#include "knowledge/knowledge_base.h"
#include "knowledge/lessons.h"
#include "util/error.h"

namespace kforge {

SearchEngine::SearchEngine(SessionStore &store, WorkerPool &pool, Proposer &proposer, SearchOptions options)
    : m_store(store), m_pool(pool), m_proposer(proposer), m_options(std::move(options))
{
}

void SearchEngine::requestStop()
{
    m_stop = true;
    m_cv.notify_all();
}

SearchProgress SearchEngine::run(int64_t sessionId, int64_t operatorId, const OperatorCard &card, SearchObserver *observer)
{
    using clock = std::chrono::steady_clock;
    const auto started = clock::now();
    std::mt19937_64 rng(m_options.seed);
    MctsTree tree;
    std::map<int, NodeRecord> records; // tree index -> stored node

    m_pool.setEventSink([this](const PoolEvent &e) {
        std::lock_guard lock(m_mutex);
        m_events.push_back(e);
        m_cv.notify_all();
    });

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
    const auto device = knowledge::targetDevice(m_pool.hellos(), m_options.backend);
    const auto arch = knowledge::deviceArch(device);
    m_proposer.target(device);
    m_proposer.begin(sessionId, operatorId);

    SearchProgress prog;
    // A lesson of an earlier search of this operator on this architecture goes first: a warm start.
    std::optional<Proposal> warmStart;
    if (!m_options.lessonsDir.empty() && !arch.empty()) {
        try {
            knowledge::KnowledgeBase lessons;
            lessons.addFolder(m_options.lessonsDir);
            if (const auto *l = lessons.lesson(knowledge::operatorSignature(card), arch)) {
                auto c = knowledge::lessonCandidate(*l);
                if (c && c->backend == m_options.backend) {
                    warmStart = Proposal{l->templateId, nlohmann::json::parse(l->point.empty() ? "{}" : l->point, nullptr, false), *c,
                                         "warm start: the lesson " + l->source};
                    if (!warmStart->params.is_object())
                        warmStart->params = nlohmann::json::object();
                    warmStart->params.erase("calls"); // an earlier session's LLM calls
                }
            }
        } catch (const Error &e) {
            prog.lessonNote = std::string("lessons not read: ") + e.what();
        }
    }
    int proposed = 0, sinceBest = 0;
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

    std::string backend; // of the proposals so far: workers that compile ahead get one more queued
    for (;;) {
        // Keep every worker busy, and one more queued for each worker that compiles it meanwhile.
        while (budgetLeft() && prog.running < m_pool.size() + (backend.empty() ? 0 : m_pool.lookahead(backend))) {
            const bool warm = warmStart.has_value();
            auto sel = warm ? std::optional<int>(0) : tree.select(m_options.mcts);
            if (!sel)
                break;
            const NodeRecord *parent = *sel == 0 ? nullptr : &records[*sel];
            auto proposal = warm ? std::move(warmStart) : m_proposer.propose(card, parent, rng);
            warmStart.reset();
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
            n.id = m_store.addNode(n, proposal->candidate);
            if (!warm)
                m_proposer.stored(n.id);
            const int t = tree.addChild(*sel);
            records[t] = n;
            ++proposed;
            ++prog.running;
            if (observer)
                observer->nodeAdded(n);
            m_pool.submit(card, proposal->candidate, m_options.eval, [this, t, id = n.id](Verdict v) {
                std::lock_guard lock(m_mutex);
                m_done.push_back({t, id, std::move(v)});
                m_cv.notify_all();
            });
        }
        if (prog.running == 0) {
            prog.stopReason = m_stop ? "stopped" : !m_proposer.stopReason().empty() ? m_proposer.stopReason()
                            : proposed >= m_options.maxNodes ? "node budget spent"
                            : (m_options.stallNodes > 0 && sinceBest >= m_options.stallNodes) ? "no improvement"
                            : (m_options.maxSeconds > 0 && elapsed() >= m_options.maxSeconds) ? "time budget spent"
                            : "search space exhausted";
            break;
        }

        std::deque<Completion> done;
        std::deque<PoolEvent> events;
        {
            std::unique_lock lock(m_mutex);
            m_cv.wait_for(lock, std::chrono::milliseconds(250), [this] { return !m_done.empty() || !m_events.empty(); });
            done.swap(m_done);
            events.swap(m_events);
        }
        for (const auto &e : events) {
            m_store.addWorkerEvent(sessionId, e.slot, e.kind, e.detail);
            if (observer)
                observer->workerEvent(e);
        }
        for (auto &c : done) {
            const bool correct = c.verdict.correct();
            const double reward = rewardFor(correct, c.verdict.speedup);
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
            if (observer)
                observer->nodeFinished(rec);
        }
        prog.elapsedSeconds = elapsed();
        if (observer && (!done.empty() || !events.empty()))
            observer->progress(prog);
    }
    m_pool.setEventSink(nullptr);
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
