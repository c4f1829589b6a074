#include "pool/worker_pool.h"

#include <algorithm>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <future>
#include <unistd.h>

#include "pool/worker_process.h"
#include "util/error.h"
#include "util/text.h"

namespace kforge {

namespace {

nlohmann::json failureReply(VerdictStatus status, const char *code, const std::string &message)
{
    return {{"type", "failure"}, {"status", statusName(status)}, {"code", code}, {"message", message}};
}

// A string member of a reply, or `def` when it is missing or not a string: a worker's reply is never
// trusted to have the shape we asked for.
std::string textOf(const nlohmann::json &j, const char *key, const std::string &def = {})
{
    if (!j.is_object())
        return def;
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : def;
}

// An evaluate reply (or a failure in its place) as the verdict the search stores. Never throws.
Verdict verdictFromReply(const nlohmann::json &reply)
{
    Verdict v;
    try {
        const auto type = textOf(reply, "type");
        if (type == "result") {
            try {
                v = reply.at("verdict").get<Verdict>();
            } catch (const std::exception &e) {
                v = failureVerdict(VerdictStatus::Error, reason::BadRequest,
                                   std::string("the worker's verdict was malformed: ") + printable(e.what(), 300));
            }
        } else if (type == "failure") {
            VerdictStatus status = VerdictStatus::Error;
            std::string note;
            try {
                status = statusFromName(textOf(reply, "status", "error"));
            } catch (const std::exception &e) {
                note = " (the failure named " + printable(e.what(), 200) + ")";
            }
            v = failureVerdict(status, textOf(reply, "code", reason::BadRequest), textOf(reply, "message") + note);
        } else if (type == "error") {
            v = failureVerdict(VerdictStatus::Error, reason::BadRequest, "the worker refused the request: " + textOf(reply, "error", "(no reason given)"));
        } else {
            v = failureVerdict(VerdictStatus::Error, reason::BadRequest,
                               "the worker answered with a reply of type '" + printable(type, 100) + "' to an evaluate request: "
                                   + printable(reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 300));
        }
    } catch (const std::exception &e) {
        v = failureVerdict(VerdictStatus::Error, reason::BadRequest, std::string("the worker's reply was malformed: ") + e.what());
    }
    v.worker = textOf(reply, "worker_name", v.worker);
    v.device = textOf(reply, "worker_device", v.device);
    return v;
}

std::string describeJson(const nlohmann::json &j)
{
    return printable(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 120);
}

} // namespace

WorkerPool::WorkerPool(PoolOptions options) : m_options(std::move(options))
{
    if (m_options.command.empty())
        throw Error("worker pool: no worker command given");
    if (m_options.workers < 1)
        m_options.workers = 1;
    if (m_options.logDir.empty())
        if (const char *keep = std::getenv("KFORGE_WORKER_LOG_DIR"); keep && *keep)
            m_options.logDir = keep; // the user's folder, kept: to read where an evaluation's time went
    if (m_options.logDir.empty()) {
        // Private: worker logs may quote what candidates printed. Ours to remove.
        auto tmpl = (std::filesystem::temp_directory_path() / "kforge-workers-XXXXXX").string();
        if (!::mkdtemp(tmpl.data()))
            throw Error("cannot create a folder for worker logs in " + std::filesystem::temp_directory_path().string() + ": "
                        + std::strerror(errno));
        m_options.logDir = tmpl;
        m_ownsLogDir = true;
    } else {
        std::filesystem::create_directories(m_options.logDir);
    }
}

WorkerPool::~WorkerPool()
{
    shutdown();
    m_slots.clear();
    if (m_ownsLogDir) {
        std::error_code ec;
        std::filesystem::remove_all(m_options.logDir, ec);
    }
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
                                                   std::map<std::string, std::string>{{"KFORGE_WORKER_SLOT", std::to_string(slot.index)}},
                                                   m_options.limits);
    try {
        slot.process->start();
    } catch (const Error &e) {
        error = e.what();
        notify({slot.index, "failed_to_start", error});
        return false;
    }
    auto hello = helloRequest(m_options.measureDevices);
    hello["id"] = 0;
    std::string line;
    const bool sent = slot.process->writeLine(hello.dump());
    const auto r = sent ? slot.process->readLine(line, m_options.helloTimeoutMs) : WorkerProcess::Read::Eof;
    if (r != WorkerProcess::Read::Line) {
        const auto how = r == WorkerProcess::Read::Overlong ? "its hello was longer than " + std::to_string(m_options.limits.maxLineBytes) + " bytes"
                       : r == WorkerProcess::Read::Timeout ? "no answer within " + std::to_string(m_options.helloTimeoutMs) + " ms"
                                                           : std::string();
        slot.process->kill();
        error = "worker '" + m_options.command + "' did not answer hello (" + (how.empty() ? slot.process->exitDescription() : how) + ")";
        const auto tail = slot.process->lastWords(600);
        if (!tail.empty())
            error += ": " + tail;
        notify({slot.index, "failed_to_start", error});
        return false;
    }
    try {
        auto reply = nlohmann::json::parse(line);
        if (!reply.is_object() || textOf(reply, "type") != "hello")
            throw Error("expected a hello object, got " + describeJson(reply));
        const auto protocol = reply.find("protocol");
        if (protocol == reply.end() || !protocol->is_number_integer() || protocol->get<int64_t>() != kProtocolVersion)
            throw Error("it speaks protocol " + (protocol == reply.end() ? std::string("(none)") : describeJson(*protocol))
                        + ", this build speaks " + std::to_string(kProtocolVersion));
        std::vector<std::string> prepares;
        if (const auto p = reply.find("prepares"); p != reply.end() && p->is_array())
            for (const auto &b : *p)
                if (b.is_string())
                    prepares.push_back(b.get<std::string>());
        const auto threads = reply.find("prepare_threads");
        {
            std::lock_guard lock(m_mutex);
            slot.hello = reply;
            slot.prepares = std::move(prepares);
            slot.prepareThreads = threads != reply.end() && threads->is_number_integer() ? int(std::clamp<int64_t>(threads->get<int64_t>(), 0, 64)) : 1;
            slot.hinted.clear(); // a new process holds no build
        }
        slot.name = textOf(reply, "worker", "worker-" + std::to_string(slot.index));
    } catch (const std::exception &e) {
        slot.process->kill();
        error = "worker hello was not understood: " + printable(e.what(), 400);
        notify({slot.index, "failed_to_start", error});
        return false;
    }
    notify({slot.index, restart ? "restarted" : "started", slot.name});
    return true;
}

void WorkerPool::start()
{
    std::unique_lock lock(m_mutex);
    if (m_started)
        return;
    m_started = true;
    m_stopping = false;
    m_startPending = m_options.workers;
    m_startUp = 0;
    m_startError.clear();
    for (int i = 0; i < m_options.workers; ++i) {
        auto slot = std::make_unique<Slot>();
        slot->index = i;
        m_slots.push_back(std::move(slot));
    }
    // Each slot's thread starts its worker (in parallel: over ssh or srun each can take seconds) and
    // owns it from then on; a worker dies with the thread that forked it, so that must be this one.
    for (auto &slot : m_slots)
        slot->thread = std::thread([this, s = slot.get()] { serve(*s); });
    m_startCv.wait(lock, [this] { return m_startPending == 0; });
    if (m_startUp > 0)
        return;
    const auto firstError = m_startError;
    m_stopping = true;
    lock.unlock();
    m_cv.notify_all();
    for (auto &slot : m_slots)
        slot->thread.join();
    lock.lock();
    m_slots.clear();
    m_started = false;
    throw Error("no worker could be started: " + firstError);
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
        try {
            job.done(failureReply(VerdictStatus::Error, reason::BadRequest, "the worker pool shut down before this ran"));
        } catch (...) {
        }
    m_slots.clear();
}

void WorkerPool::abort()
{
    {
        std::lock_guard lock(m_mutex);
        if (!m_started)
            return;
        m_stopping = true;
    }
    m_cv.notify_all();
    // Each slot's thread then reads the end of its worker's output and reports what it was running as
    // crashed; SIGTERM also cancels an srun step and closes an ssh session.
    for (const int pid : pids())
        if (pid > 0)
            ::kill(-pid, SIGTERM);
    shutdown();
}

namespace {
constexpr int kWorkerAnswerGraceMs = 5000;
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
    // The worker stops a candidate at its deadline and answers (worker/server.h); the pool waits a little
    // longer, for a worker that cannot answer at all.
    enqueue(evaluateRequest(card, candidate, options), options.deadlineMs + kWorkerAnswerGraceMs,
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

void WorkerPool::finish(Slot &slot, Job &job, const nlohmann::json &reply)
{
    // The callback is the caller's code on our thread: what it throws must not end the thread (and
    // with it, the process).
    try {
        job.done(reply);
    } catch (const std::exception &e) {
        notify({slot.index, "callback_failed", e.what()});
    } catch (...) {
        notify({slot.index, "callback_failed", "an exception that is not a std::exception"});
    }
}

void WorkerPool::serve(Slot &slot)
{
    {
        std::string error;
        const bool up = ensureRunning(slot, error);
        std::lock_guard lock(m_mutex);
        if (up)
            ++m_startUp;
        else if (m_startError.empty())
            m_startError = error;
        --m_startPending;
    }
    m_startCv.notify_all();
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
            finish(slot, job, failureReply(VerdictStatus::Error, reason::Crashed, "no worker to run this: " + error));
            if (slot.restarts > m_options.maxRestarts)
                break; // this slot is dead; the others keep serving the queue
            continue;
        }
        nlohmann::json reply;
        try {
            reply = exchange(slot, job);
        } catch (const std::exception &e) {
            slot.process->kill();
            reply = failureReply(VerdictStatus::Error, reason::BadRequest, std::string("the worker pool could not run this: ") + e.what());
        }
        finish(slot, job, reply);
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
    // Every reply names the worker and the device it evaluates this backend on (its hello's), so a
    // verdict says where both of its sides were timed, a crash's or a timeout's included.
    std::string device;
    {
        const auto c = job.request.find("candidate");
        const std::string backend = c != job.request.end() && c->is_object() ? c->value("backend", std::string("cpu")) : std::string("cpu");
        std::lock_guard lock(m_mutex);
        device = deviceLabel(helloDevice(slot.hello, backend));
    }
    auto named = [&](nlohmann::json reply) {
        reply["worker_name"] = slot.name;
        reply["worker_device"] = device;
        return reply;
    };
    std::string payload;
    try {
        payload = job.request.dump();
    } catch (const nlohmann::json::exception &e) {
        return named(failureReply(VerdictStatus::Error, reason::BadRequest, std::string("the request could not be encoded: ") + e.what()));
    }
    hintNext(slot);
    if (!slot.process->writeLine(payload)) {
        const auto how = slot.process->exitDescription();
        notify({slot.index, "crashed", how});
        slot.process->kill();
        return named(failureReply(VerdictStatus::Crashed, reason::Crashed, "the worker was gone before the request was sent (" + how + ")"));
    }
    // Its stdout is the worker's own (fds 0 and 1 point elsewhere before any candidate runs), so every
    // line on it is a reply to the one request in flight; anything else means the stream can no longer
    // be trusted, whatever wrote it: the worker is replaced.
    auto violation = [&](const std::string &what) {
        slot.process->kill();
        const auto msg = "the worker broke the protocol: " + what + "; it was stopped and will be restarted";
        notify({slot.index, "protocol_violation", msg});
        return named(failureReply(VerdictStatus::Crashed, reason::Crashed, msg));
    };
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(job.deadlineMs);
    std::string line;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        const auto r = slot.process->readLine(line, int(std::max<long long>(left, 0)));
        if (r == WorkerProcess::Read::Timeout) {
            slot.process->kill();
            const auto msg = "no answer within " + std::to_string(job.deadlineMs) + " ms; the worker was stopped and will be restarted";
            notify({slot.index, "timeout", msg});
            return named(failureReply(VerdictStatus::Timeout, reason::Timeout, msg));
        }
        if (r == WorkerProcess::Read::Overlong)
            return violation("a reply line over the " + std::to_string(m_options.limits.maxLineBytes) + "-byte limit ("
                             + std::to_string(slot.process->overlongBytes())
                             + (slot.process->overlongHadNewline() ? " bytes)" : " bytes and no end of line yet)"));
        if (r == WorkerProcess::Read::Eof) {
            auto how = slot.process->exitDescription();
            slot.process->kill(); // also drains the rest of its stderr
            const auto tail = slot.process->lastWords(m_options.lastWordsBytes);
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
            return violation("a reply that is not JSON (" + std::to_string(line.size()) + " bytes: " + printable(line, 120) + ")");
        }
        if (!reply.is_object())
            return violation(std::string("a reply that is not a JSON object (") + reply.type_name() + ": " + describeJson(reply) + ")");
        const auto rid = reply.find("id");
        if (rid != reply.end() && *rid == id) {
            // A worker that answers and then exits (its watchdog stopped a kernel that hung) says so;
            // it is reaped now, so the next request goes to a fresh one.
            if (reply.value("exiting", false)) {
                slot.process->kill();
                notify({slot.index, "timeout", "the worker stopped a candidate at its deadline and exited"});
            }
            return named(std::move(reply));
        }
        // The worker could not read our request, so it could not know its id.
        if ((rid == reply.end() || rid->is_null()) && textOf(reply, "type") == "error")
            return named(std::move(reply));
        return violation("a reply with id " + (rid == reply.end() ? std::string("(none)") : describeJson(*rid)) + " to request "
                         + id.dump());
    }
}

// A worker that compiles ahead hears of the next queued evaluations (up to hintsFor) before it starts
// this one, each once, so its compilers work while this one holds the device. Only hints: nothing is
// owed for them, and the worker drops a build that is never claimed.
void WorkerPool::hintNext(Slot &slot)
{
    std::vector<std::string> hints;
    {
        std::lock_guard lock(m_mutex);
        const size_t k = size_t(hintsFor(slot));
        std::vector<uint64_t> window;
        for (const auto &job : m_queue) {
            if (window.size() >= k)
                break;
            const auto &next = job.request;
            const auto cand = next.find("candidate");
            if (textOf(next, "type") != "evaluate" || cand == next.end() || !cand->is_object())
                continue;
            const auto backend = textOf(*cand, "backend");
            if (std::find(slot.prepares.begin(), slot.prepares.end(), backend) == slot.prepares.end())
                continue;
            const auto id = next.value("id", uint64_t(0));
            window.push_back(id);
            if (std::find(slot.hinted.begin(), slot.hinted.end(), id) != slot.hinted.end())
                continue; // told already: its build is on the way
            try {
                hints.push_back(nlohmann::json{{"type", "prepare"}, {"candidate", *cand}}.dump());
            } catch (const nlohmann::json::exception &) {
            }
        }
        slot.hinted = std::move(window); // the rest were taken, by this worker or another
    }
    for (const auto &h : hints)
        slot.process->writeLine(h);
}

int WorkerPool::hintsFor(const Slot &slot) const
{
    return slot.prepares.empty() ? 0 : std::max(0, std::min(m_options.compileAhead, slot.prepareThreads));
}

int WorkerPool::lookahead(const std::string &backend) const
{
    std::lock_guard lock(m_mutex);
    int n = 0;
    for (const auto &s : m_slots)
        if (std::find(s->prepares.begin(), s->prepares.end(), backend) != s->prepares.end())
            n += hintsFor(*s);
    return n;
}

void WorkerPool::requireBackend(const std::string &backend) const
{
    std::string why;
    for (const auto &h : hellos()) {
        const auto offered = h.value("backends", nlohmann::json::array());
        if (std::find(offered.begin(), offered.end(), backend) != offered.end())
            return;
        const auto unavailable = h.value("unavailable", nlohmann::json::object());
        const auto reason = unavailable.contains(backend) && unavailable[backend].is_string() ? unavailable[backend].get<std::string>()
                                                                                              : "it offers " + offered.dump();
        why += (why.empty() ? "" : "; ") + h.value("worker", std::string("a worker")) + ": " + reason;
    }
    throw Error("no worker can evaluate " + backend + " kernels (" + (why.empty() ? std::string("no worker answered") : why) + ")");
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
