#include "pool/worker_pool.h"

#include <cstdlib>
#include <filesystem>
#include <future>
#include <unistd.h>

#include "pool/worker_process.h"
#include "util/error.h"

namespace kforge {

namespace {

nlohmann::json failureReply(VerdictStatus status, const char *code, const std::string &message)
{
    return {{"type", "failure"}, {"status", statusName(status)}, {"code", code}, {"message", message}};
}

// An evaluate reply (or a failure in its place) as the verdict the search stores.
Verdict verdictFromReply(const nlohmann::json &reply)
{
    Verdict v;
    const auto type = reply.value("type", "");
    if (type == "result") {
        try {
            v = reply.at("verdict").get<Verdict>();
        } catch (const std::exception &e) {
            v = failureVerdict(VerdictStatus::Error, reason::BadRequest, std::string("the worker's verdict was malformed: ") + e.what());
        }
    } else if (type == "failure") {
        v = failureVerdict(statusFromName(reply.value("status", "error")), reply.value("code", reason::BadRequest).c_str(),
                           reply.value("message", ""));
    } else {
        v = failureVerdict(VerdictStatus::Error, reason::BadRequest, "the worker refused the request: " + reply.value("error", reply.dump()));
    }
    v.worker = reply.value("worker_name", v.worker);
    return v;
}

} // namespace

WorkerPool::WorkerPool(PoolOptions options) : m_options(std::move(options))
{
    if (m_options.command.empty())
        throw Error("worker pool: no worker command given");
    if (m_options.workers < 1)
        m_options.workers = 1;
    if (m_options.logDir.empty()) {
        auto dir = std::filesystem::temp_directory_path() / ("kforge-workers-" + std::to_string(::getpid()));
        m_options.logDir = dir.string();
    }
    std::filesystem::create_directories(m_options.logDir);
}

WorkerPool::~WorkerPool()
{
    shutdown();
}

void WorkerPool::setEventSink(std::function<void(const PoolEvent &)> sink)
{
    std::lock_guard lock(m_mutex);
    m_sink = std::move(sink);
}

void WorkerPool::notify(const PoolEvent &e)
{
    std::function<void(const PoolEvent &)> sink;
    {
        std::lock_guard lock(m_mutex);
        sink = m_sink;
    }
    if (sink)
        sink(e);
}

bool WorkerPool::ensureRunning(Slot &slot, std::string &error)
{
    if (slot.process && slot.process->isRunning())
        return true;
    const bool restart = bool(slot.process);
    if (restart && ++slot.restarts > m_options.maxRestarts) {
        error = "worker " + std::to_string(slot.index) + " was restarted " + std::to_string(m_options.maxRestarts)
              + " times; giving up on it";
        return false;
    }
    const auto log = (std::filesystem::path(m_options.logDir) / ("worker-" + std::to_string(slot.index) + ".log")).string();
    slot.process = std::make_unique<WorkerProcess>(m_options.command, log,
                                                   std::map<std::string, std::string>{{"KFORGE_WORKER_SLOT", std::to_string(slot.index)}});
    try {
        slot.process->start();
    } catch (const Error &e) {
        error = e.what();
        notify({slot.index, "failed_to_start", error});
        return false;
    }
    auto hello = helloRequest();
    hello["id"] = 0;
    std::string line;
    if (!slot.process->writeLine(hello.dump())
        || slot.process->readLine(line, m_options.helloTimeoutMs) != WorkerProcess::Read::Line) {
        slot.process->kill();
        error = "worker '" + m_options.command + "' did not answer hello (" + slot.process->exitDescription() + ")";
        const auto tail = slot.process->stderrTail(600);
        if (!tail.empty())
            error += ": " + tail;
        notify({slot.index, "failed_to_start", error});
        return false;
    }
    try {
        auto reply = nlohmann::json::parse(line);
        if (reply.value("type", "") != "hello" || reply.value("protocol", 0) != kProtocolVersion)
            throw Error("it speaks protocol " + std::to_string(reply.value("protocol", 0)) + ", this build speaks "
                        + std::to_string(kProtocolVersion));
        slot.hello = reply;
    } catch (const std::exception &e) {
        slot.process->kill();
        error = std::string("worker hello was not understood: ") + e.what();
        notify({slot.index, "failed_to_start", error});
        return false;
    }
    notify({slot.index, restart ? "restarted" : "started", slot.hello.value("worker", "")});
    return true;
}

void WorkerPool::start()
{
    std::unique_lock startLock(m_mutex);
    if (m_started)
        return;
    m_started = true;
    m_stopping = false;
    for (int i = 0; i < m_options.workers; ++i) {
        auto slot = std::make_unique<Slot>();
        slot->index = i;
        m_slots.push_back(std::move(slot));
    }
    // Bring workers up in parallel: over ssh or srun each one can take seconds.
    std::vector<std::future<std::string>> ups;
    startLock.unlock();
    for (auto &slot : m_slots)
        ups.push_back(std::async(std::launch::async, [this, s = slot.get()] {
            std::string err;
            return ensureRunning(*s, err) ? std::string() : err;
        }));
    std::string firstError;
    int up = 0;
    for (auto &f : ups) {
        auto err = f.get();
        if (err.empty())
            ++up;
        else if (firstError.empty())
            firstError = err;
    }
    startLock.lock();
    if (up == 0) {
        m_started = false;
        m_slots.clear();
        throw Error("no worker could be started: " + firstError);
    }
    for (auto &slot : m_slots)
        slot->thread = std::thread([this, s = slot.get()] { serve(*s); });
}

void WorkerPool::shutdown()
{
    {
        std::lock_guard lock(m_mutex);
        if (!m_started)
            return;
        m_stopping = true;
    }
    m_cv.notify_all();
    for (auto &slot : m_slots)
        if (slot->thread.joinable())
            slot->thread.join();
    std::deque<Job> orphans;
    {
        std::lock_guard lock(m_mutex);
        orphans.swap(m_queue);
        m_started = false;
    }
    for (auto &job : orphans)
        job.done(failureReply(VerdictStatus::Error, reason::BadRequest, "the worker pool shut down before this ran"));
    m_slots.clear();
}

void WorkerPool::enqueue(nlohmann::json request, int deadlineMs, ReplyCallback done)
{
    {
        std::lock_guard lock(m_mutex);
        if (!m_started || m_stopping) {
            done(failureReply(VerdictStatus::Error, reason::BadRequest, "the worker pool is not running"));
            return;
        }
        request["id"] = m_nextId++;
        m_queue.push_back({std::move(request), deadlineMs, std::move(done)});
    }
    m_cv.notify_one();
}

void WorkerPool::submit(const OperatorCard &card, const Candidate &candidate, const EvalOptions &options,
                        VerdictCallback done)
{
    enqueue(evaluateRequest(card, candidate, options), options.deadlineMs,
            [done = std::move(done)](const nlohmann::json &reply) { done(verdictFromReply(reply)); });
}

nlohmann::json WorkerPool::request(nlohmann::json request, int deadlineMs)
{
    std::promise<nlohmann::json> promise;
    auto future = promise.get_future();
    enqueue(std::move(request), deadlineMs, [&promise](const nlohmann::json &reply) { promise.set_value(reply); });
    return future.get();
}

Verdict WorkerPool::evaluate(const OperatorCard &card, const Candidate &candidate, const EvalOptions &options)
{
    std::promise<Verdict> promise;
    auto future = promise.get_future();
    submit(card, candidate, options, [&promise](Verdict v) { promise.set_value(std::move(v)); });
    return future.get();
}

void WorkerPool::serve(Slot &slot)
{
    for (;;) {
        Job job;
        {
            std::unique_lock lock(m_mutex);
            m_cv.wait(lock, [this] { return m_stopping || !m_queue.empty(); });
            if (m_stopping)
                break;
            job = std::move(m_queue.front());
            m_queue.pop_front();
        }
        std::string error;
        if (!ensureRunning(slot, error)) {
            job.done(failureReply(VerdictStatus::Error, reason::Crashed, "no worker to run this: " + error));
            if (slot.restarts > m_options.maxRestarts)
                break; // this slot is dead; the others keep serving the queue
            continue;
        }
        job.done(exchange(slot, job));
    }
    if (slot.process && slot.process->isRunning()) {
        auto bye = shutdownRequest();
        bye["id"] = 0;
        std::string line;
        if (slot.process->writeLine(bye.dump()))
            slot.process->readLine(line, 2000);
        slot.process->kill();
    }
}


nlohmann::json WorkerPool::exchange(Slot &slot, Job &job)
{
    const auto id = job.request["id"];
    const std::string workerName = slot.hello.value("worker", "worker-" + std::to_string(slot.index));
    auto named = [&](nlohmann::json reply) {
        reply["worker_name"] = workerName;
        return reply;
    };
    if (!slot.process->writeLine(job.request.dump())) {
        const auto how = slot.process->exitDescription();
        notify({slot.index, "crashed", how});
        slot.process->kill();
        return named(failureReply(VerdictStatus::Crashed, reason::Crashed, "the worker was gone before the request was sent (" + how + ")"));
    }
    std::string line;
    for (;;) {
        const auto r = slot.process->readLine(line, job.deadlineMs);
        if (r == WorkerProcess::Read::Timeout) {
            slot.process->kill();
            const auto msg = "no answer within " + std::to_string(job.deadlineMs) + " ms; the worker was stopped and will be restarted";
            notify({slot.index, "timeout", msg});
            return named(failureReply(VerdictStatus::Timeout, reason::Timeout, msg));
        }
        if (r == WorkerProcess::Read::Eof) {
            auto how = slot.process->exitDescription();
            const auto tail = slot.process->stderrTail(800);
            slot.process->kill();
            notify({slot.index, "crashed", how});
            std::string msg = "the worker died while evaluating this candidate: " + how;
            if (!tail.empty())
                msg += "; its last words: " + tail;
            return named(failureReply(VerdictStatus::Crashed, reason::Crashed, msg));
        }
        nlohmann::json reply;
        try {
            reply = nlohmann::json::parse(line);
        } catch (const nlohmann::json::exception &) {
            continue; // stray output (a library printing to stdout); keep waiting for our reply
        }
        if (reply.value("id", nlohmann::json()) == id)
            return named(std::move(reply));
    }
}

std::vector<nlohmann::json> WorkerPool::hellos() const
{
    std::lock_guard lock(m_mutex);
    std::vector<nlohmann::json> out;
    for (const auto &s : m_slots)
        if (s->hello.is_object()) // a slot whose worker never answered has none
            out.push_back(s->hello);
    return out;
}

int WorkerPool::queued() const
{
    std::lock_guard lock(m_mutex);
    return int(m_queue.size());
}

std::vector<int> WorkerPool::pids() const
{
    std::lock_guard lock(m_mutex);
    std::vector<int> out;
    for (const auto &s : m_slots)
        if (s->process)
            out.push_back(int(s->process->pid()));
    return out;
}

int WorkerPool::restarts() const
{
    std::lock_guard lock(m_mutex);
    int n = 0;
    for (const auto &s : m_slots)
        n += s->restarts;
    return n;
}

} // namespace kforge
