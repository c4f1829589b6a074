#pragma once
// Drives one operator's search: selects a node, asks the proposer for a child, writes it to the store,
// sends it to the worker pool, and on each verdict stores the result, records the guard's decision and
// backpropagates the reward. All store writes happen on the thread that calls run(); pool threads only
// hand results back through a queue.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <random>

#include "pool/worker_pool.h"
#include "proposers/proposer.h"
#include "search/mcts.h"
#include "store/session_store.h"

namespace kforge {

struct SearchOptions {
    int maxNodes = 24;         // candidates to evaluate (the root is not counted)
    double maxSeconds = 0;     // 0: no wall-time limit
    int stallNodes = 0;        // stop after this many results without a new best; 0: never
    uint64_t seed = 1;
    MctsParams mcts;
    // Diverse roots: the baseline's first `roots` children are made before UCT descends, whatever the
    // widening allows, so that each first template (the template proposer's seeds come one template
    // at a time) is tried before one early winner takes the budget. 0 or 1: off.
    int roots = 0;
    // The accepted best is verified again once at the end on inputs of a new seed, and revoked if it
    // fails (search/reverify.h).
    bool reverifyBest = true;
    EvalOptions eval;
    // Lessons (knowledge/lessons.h): with a folder (knowledge::userDir() in the CLI), a lesson for this
    // operator signature on the `backend` device's architecture is evaluated first (a warm start;
    // without one, the lesson of the same operator at the nearest other shape, its template point
    // re-made by the proposer for this shape), and the search's winner is written there as a lesson
    // when it ends. "": neither.
    std::string lessonsDir;
    std::string backend = "cpu"; // the candidates' backend: picks the worker device lessons are keyed on
};

struct SearchProgress {
    int evaluated = 0;
    int running = 0;
    int failed = 0;
    int accepted = 0;
    double bestSpeedup = 0;
    int64_t bestNode = 0;
    double elapsedSeconds = 0;
    std::string stopReason; // set on the final report
    std::string lesson;     // the lesson file the search wrote, "" when none (final report)
    std::string lessonNote; // why no lesson was written or read, when something went wrong
    std::string reverified; // the final re-verification of the best: held or revoked (final report)
};

// A stored node still to be evaluated (in flight when its search stopped or was killed), and a node
// whose guard verdict says it computes the right thing.
bool isUnfinished(const std::string &status);
bool isCorrectStatus(const std::string &status);

class SearchObserver {
public:
    virtual ~SearchObserver() = default;
    virtual void nodeAdded(const NodeRecord &) {}
    virtual void nodeFinished(const NodeRecord &) {}
    virtual void progress(const SearchProgress &) {}
    virtual void workerEvent(const PoolEvent &) {}
};

class SearchEngine {
public:
    SearchEngine(SessionStore &store, WorkerPool &pool, Proposer &proposer, SearchOptions options);

    // Blocks until the budget is spent, the search stalls, or requestStop() is called; returns the last
    // progress report. Every node it made is in the store, finished (or `interrupted` after a stop
    // `now`), and the store is checkpointed when it returns. An operator that already has nodes in the
    // session is resumed: its tree is rebuilt, unfinished nodes are evaluated again under their own
    // ids, and maxNodes counts the nodes it already has.
    SearchProgress run(int64_t sessionId, int64_t operatorId, const OperatorCard &card, SearchObserver *observer = nullptr);
    // Thread-safe. now == false: no new proposals, the ones in flight finish. now == true: return at
    // once, the nodes in flight marked `interrupted` (the caller shuts the pool down).
    void requestStop(bool now = false);
    // The same from a signal handler: only sets flags (the run loop looks at them every 250 ms).
    void requestStopFromSignal(bool now);

private:
    struct Completion {
        int treeNode;
        int64_t nodeId;
        Verdict verdict;
    };

    SessionStore &m_store;
    WorkerPool &m_pool;
    Proposer &m_proposer;
    SearchOptions m_options;
    // Where the pool's threads leave verdicts and events. Their callbacks share it, never the engine: a
    // stop `now` returns with evaluations in flight, and their verdicts may come after the engine is gone
    // (a campaign destroys each operator's engine before it shuts the pool down).
    struct Inbox {
        std::mutex mutex;
        std::condition_variable cv;
        std::deque<Completion> done;
        std::deque<PoolEvent> events;
    };
    std::atomic<bool> m_stop{false};
    std::atomic<bool> m_stopNow{false};
    std::shared_ptr<Inbox> m_inbox = std::make_shared<Inbox>();
};

} // namespace kforge
