#pragma once
// A pool of worker processes started from one command line. Each worker has its own thread that starts
// it, takes requests from one shared queue, and stops it, so N workers stay busy and each worker dies
// with the thread that owns it (PR_SET_PDEATHSIG), which lives as long as the pool. A worker that dies,
// stops answering or breaks the protocol (a reply that is not a JSON object, a line past the cap, a
// reply to another request) is killed and started again; the request it was running gets a Crashed or
// Timeout verdict naming what happened, and queued requests go to the restarted worker. Nothing a
// worker sends makes the pool throw: a malformed reply becomes an Error verdict for its request.
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "pool/worker_process.h"
#include "protocol/messages.h"
#include "protocol/verdict.h"

namespace kforge {

struct PoolOptions {
    PoolOptions(std::string command = {}, int workers = 1) : command(std::move(command)), workers(workers) {}
    std::string command;       // shell command line that starts one worker
    int workers = 1;
    int helloTimeoutMs = 60000; // ssh or srun may take a while to bring a worker up
    int maxRestarts = 50;       // per worker slot; past this the slot gives up
    std::string logDir;         // worker stderr logs; when empty, $KFORGE_WORKER_LOG_DIR (kept), else a
                                // private temporary folder (0700) that the pool removes when it is destroyed
    WorkerLimits limits;        // a reply line's and a stderr log's caps
    size_t lastWordsBytes = 1500; // how much of a dead worker's stderr (redacted) a verdict quotes
    // Queued evaluations a worker that compiles ahead (its hello's "prepares") is told of before it
    // needs them, each once (protocol "prepare"), so that it compiles that many at once while the device
    // times the one before; capped by the worker's own "prepare_threads" (1 when its hello has none).
    // 0: no hints. 3, because a search submits the candidate that replaces a finished one just after
    // the pool has sent the next evaluation and its hints: that candidate is hinted one evaluation
    // later, so it has K - 1 evaluations of the device's time to compile in (a queue filled at once, as
    // the harness bench fills it, gets K).
    int compileAhead = 3;
    // The hello asks every device for its copy rate (protocol "measure"), which a CPU worker measures
    // first: what a campaign's roofline floors need, and a moment's work no search needs.
    bool measureDevices = false;
};

struct PoolEvent {
    int slot = 0;
    std::string kind; // "started", "crashed", "timeout", "protocol_violation", "restarted", "failed_to_start",
                      // "callback_failed"
    std::string detail;
};

class WorkerPool {
public:
    explicit WorkerPool(PoolOptions options);
    ~WorkerPool();
    WorkerPool(const WorkerPool &) = delete;
    WorkerPool &operator=(const WorkerPool &) = delete;

    // Starts every worker and waits for its hello. Throws Error if no worker answered.
    void start();
    void shutdown();
    // Stops every worker now, whatever it is running (what was in flight gets Crashed verdicts), then
    // shuts down: for a search stopped at once.
    void abort();

    using VerdictCallback = std::function<void(Verdict)>;
    // Queues an evaluation; the callback runs on a pool thread.
    void submit(const OperatorCard &card, const Candidate &candidate, const EvalOptions &options,
                VerdictCallback done);
    // Blocking convenience for the CLI and tests.
    Verdict evaluate(const OperatorCard &card, const Candidate &candidate, const EvalOptions &options);
    // Sends any request (an "id" is added) and returns the worker's reply. When the worker dies or
    // times out, the reply is {"type":"failure","status":"crashed"|"timeout","code":...,"message":...}.
    nlohmann::json request(nlohmann::json request, int deadlineMs);

    void setEventSink(std::function<void(const PoolEvent &)> sink);
    int size() const { return int(m_slots.size()); }
    std::vector<nlohmann::json> hellos() const; // the capabilities of each worker that answered
    // Throws Error, saying why per worker (its hello's "unavailable", e.g. "no CUDA device is visible"),
    // when no worker that answered offers `backend`; so a command refuses at once instead of failing
    // every candidate.
    void requireBackend(const std::string &backend) const;
    // How many more evaluations than workers are worth keeping queued for this backend: for each worker
    // that compiles ahead for it, the candidates it is told of ahead (PoolOptions::compileAhead).
    int lookahead(const std::string &backend) const;
    int queued() const;
    int restarts() const;
    std::vector<int> pids() const; // of live workers, for diagnostics and tests
    const std::string &logDir() const { return m_options.logDir; }

private:
    using ReplyCallback = std::function<void(const nlohmann::json &reply)>;
    struct Job {
        nlohmann::json request;
        int deadlineMs;
        ReplyCallback done;
    };
    struct Slot {
        int index = 0;
        std::unique_ptr<WorkerProcess> process;
        nlohmann::json hello;
        std::vector<std::string> prepares; // backends this worker compiles ahead for (from its hello)
        int prepareThreads = 0;            // how many it compiles at once (its hello's "prepare_threads")
        std::vector<uint64_t> hinted;      // request ids of the queued evaluations it has been told of
        std::string name; // the worker's name from its hello
        int restarts = 0;
        std::thread thread;
    };

    bool ensureRunning(Slot &slot, std::string &error);
    void serve(Slot &slot);
    nlohmann::json exchange(Slot &slot, Job &job);
    void hintNext(Slot &slot);
    int hintsFor(const Slot &slot) const; // under m_mutex
    void finish(Slot &slot, Job &job, const nlohmann::json &reply);
    void enqueue(nlohmann::json request, int deadlineMs, ReplyCallback done);
    void notify(const PoolEvent &e);

    PoolOptions m_options;
    std::vector<std::unique_ptr<Slot>> m_slots;
    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<Job> m_queue;
    bool m_stopping = false;
    bool m_started = false;
    bool m_ownsLogDir = false;
    // start(): each slot's thread reports its first start here
    std::condition_variable m_startCv;
    int m_startPending = 0;
    int m_startUp = 0;
    std::string m_startError;
    uint64_t m_nextId = 1;
    std::function<void(const PoolEvent &)> m_sink;
};

} // namespace kforge
