#pragma once
// A pool of worker processes started from one command line. Each worker has its own thread that takes
// requests from one shared queue, so N workers stay busy. A worker that dies or stops answering is
// killed and started again; the request it was running gets a Crashed or Timeout verdict naming what
// happened, and queued requests go to the restarted worker.
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/messages.h"
#include "protocol/verdict.h"

namespace kforge {

class WorkerProcess;

struct PoolOptions {
    PoolOptions(std::string command = {}, int workers = 1) : command(std::move(command)), workers(workers) {}
    std::string command;       // shell command line that starts one worker
    int workers = 1;
    int helloTimeoutMs = 60000; // ssh or srun may take a while to bring a worker up
    int maxRestarts = 50;       // per worker slot; past this the slot gives up
    std::string logDir;         // worker stderr logs; a temporary folder when empty
};

struct PoolEvent {
    int slot = 0;
    std::string kind; // "started", "crashed", "timeout", "restarted", "failed_to_start"
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
    int queued() const;
    int restarts() const;
    std::vector<int> pids() const; // of live workers, for diagnostics and tests

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
        int restarts = 0;
        std::thread thread;
    };

    bool ensureRunning(Slot &slot, std::string &error);
    void serve(Slot &slot);
    nlohmann::json exchange(Slot &slot, Job &job);
    void enqueue(nlohmann::json request, int deadlineMs, ReplyCallback done);
    void notify(const PoolEvent &e);

    PoolOptions m_options;
    std::vector<std::unique_ptr<Slot>> m_slots;
    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<Job> m_queue;
    bool m_stopping = false;
    bool m_started = false;
    uint64_t m_nextId = 1;
    std::function<void(const PoolEvent &)> m_sink;
};

} // namespace kforge
