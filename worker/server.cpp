#include "worker/server.h"

#include <algorithm>
#include <cstdlib>
#include <fcntl.h>
#include <iostream>
#include <poll.h>
#include <thread>
#include <unistd.h>

#include "util/error.h"
#include "worker/pipeline/evaluation.h"
#include "worker/profile/builtin_model.h"
#include "worker/profile/ncu_profiler.h"
#include "worker/profile/pack_run.h"
#include "worker/profile/workload_profiler.h"

namespace kforge::worker {

Server::Server()
{
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    const char *slot = std::getenv("KFORGE_WORKER_SLOT");
    m_name = std::string("kforge-worker@") + host + " pid " + std::to_string(::getpid()) + (slot ? std::string(" slot ") + slot : "");
}

void Server::addDevice(std::unique_ptr<Device> device)
{
    m_devices.push_back(std::move(device));
}

void Server::noteUnavailable(const std::string &backend, const std::string &why)
{
    m_unavailable[backend] = why;
}

namespace {
// Past its deadline by this much, a CUDA evaluation is taken to hang: the pipeline's own checks and a
// CPU sandbox's limit answer before then.
constexpr auto kWatchdogGrace = std::chrono::milliseconds(2000);
} // namespace

nlohmann::json Server::evaluateReply(const nlohmann::json &id, Device &device, const OperatorCard &card, const Candidate &cand,
                                     const EvalOptions &opts)
{
    {
        std::lock_guard lock(m_busyMutex);
        m_busy = true;
        m_busyId = id;
        m_busyUntil = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(1, opts.deadlineMs)) + kWatchdogGrace;
    }
    nlohmann::json reply;
    try {
        reply = {{"id", id}, {"type", "result"}, {"ok", true}, {"verdict", evaluate(device, card, cand, opts)}};
    } catch (const std::exception &e) {
        reply = {{"id", id}, {"type", "result"}, {"ok", true}, {"verdict", failureVerdict(VerdictStatus::Error, reason::BadRequest, e.what())}};
    }
    std::lock_guard lock(m_busyMutex);
    m_busy = false;
    return reply;
}

void Server::send(const std::string &line)
{
    std::lock_guard lock(m_outMutex);
    std::fputs(line.c_str(), m_out);
    std::fputc('\n', m_out);
    std::fflush(m_out);
}

void Server::watch(int protoIn)
{
    while (!m_stopWatching) {
        pollfd p{protoIn, POLLRDHUP, 0};
        if (::poll(&p, 1, 100) > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL))) {
            std::fprintf(stderr, "kforge-worker: the pool hung up; exiting\n");
            std::_Exit(0);
        }
        std::lock_guard lock(m_busyMutex);
        if (m_busy && std::chrono::steady_clock::now() > m_busyUntil) {
            auto v = failureVerdict(VerdictStatus::Timeout, reason::Timeout,
                                    "the candidate was still running at its deadline; the worker stopped it by exiting, and the pool starts a new one");
            v.worker = m_name;
            send(nlohmann::json{{"id", m_busyId}, {"type", "result"}, {"ok", true}, {"exiting", true}, {"verdict", v}}.dump(-1, ' ', false,
                                                                                                           nlohmann::json::error_handler_t::replace));
            std::fprintf(stderr, "kforge-worker: deadline: an evaluation ran past its deadline; exiting\n");
            std::fflush(stderr);
            std::_Exit(75);
        }
    }
}

nlohmann::json Server::hello(const nlohmann::json &id, bool measure) const
{
    nlohmann::json backends = nlohmann::json::array(), devices = nlohmann::json::array(), prepares = nlohmann::json::array();
    int threads = 0; // the fewest of the devices that compile ahead: the pool hints no more than that
    for (const auto &d : m_devices) {
        backends.push_back(d->backend());
        auto described = d->describe();
        // A device that measures its copy rate only when asked (the CPU's) does so now.
        if (measure && !described.contains("copy_bandwidth_gbs"))
            described["copy_bandwidth_gbs"] = d->copyBandwidth() / 1e9;
        devices.push_back(std::move(described));
        if (d->compilesAhead()) {
            prepares.push_back(d->backend());
            threads = threads == 0 ? d->prepareThreads() : std::min(threads, d->prepareThreads());
        }
    }
    return {{"id", id}, {"type", "hello"}, {"ok", true}, {"protocol", kProtocolVersion}, {"worker", m_name},
            {"backends", backends}, {"devices", devices}, {"prepares", prepares}, {"prepare_threads", threads},
            {"unavailable", m_unavailable}};
}

nlohmann::json Server::handle(const std::string &line, bool &quit)
{
    nlohmann::json req;
    try {
        req = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception &e) {
        return errorReply(nullptr, std::string("malformed request: not valid JSON (") + e.what() + ")");
    }
    if (!req.is_object())
        return errorReply(nullptr, "malformed request: expected a JSON object, got " + std::string(req.type_name()));
    const auto id = req.value("id", nlohmann::json());
    const auto type = req.value("type", std::string());
    if (type == "hello") {
        if (req.value("protocol", 0) != kProtocolVersion)
            return errorReply(id, "this worker speaks protocol " + std::to_string(kProtocolVersion) + ", not "
                                      + req.value("protocol", nlohmann::json()).dump());
        const auto measure = req.find("measure");
        return hello(id, measure != req.end() && measure->is_boolean() && measure->get<bool>());
    }
    if (type == "profile") {
        Candidate cand;
        OperatorCard card;
        try {
            card = req.at("card").get<OperatorCard>();
            cand = req.at("candidate").get<Candidate>();
        } catch (const std::exception &e) {
            return errorReply(id, std::string("malformed profile request: ") + e.what());
        }
        if (cand.backend != "cuda")
            return errorReply(id, "profiling needs a cuda candidate; this one is for the '" + cand.backend + "' backend");
        const auto ncu = findNcu();
        if (ncu.empty())
            return errorReply(id, "Nsight Compute (ncu) is not installed on this worker's host");
        std::vector<std::string> kernels;
        for (const auto &k : cand.launch.value("kernels", nlohmann::json::array()))
            kernels.push_back(k.value("name", ""));
        EvalOptions once;
        once.benchmark = false;
        try {
            auto profile = profileWithNcu(ncu, evaluateRequest(card, cand, once), kernels, req.value("timeout_s", 300));
            return {{"id", id}, {"type", "profile"}, {"ok", true}, {"profile", profile}};
        } catch (const std::exception &e) {
            return errorReply(id, e.what());
        }
    }
    if (type == "profile_workload")
        return profileWorkloadReply(id, req);
    if (type == "build_model")
        return buildModelReply(id, req);
    if (type == "run_pack")
        return runPackReply(id, req);
    if (type == "prepare") { // a hint: no reply, and a malformed one is simply not acted on
        try {
            const auto cand = req.at("candidate").get<Candidate>();
            for (auto &d : m_devices)
                if (d->backend() == cand.backend)
                    d->prepare(cand);
        } catch (const std::exception &e) {
            std::fprintf(stderr, "kforge-worker: ignored a prepare hint: %s\n", e.what());
        }
        return nullptr;
    }
    if (type == "shutdown") {
        quit = true;
        return {{"id", id}, {"type", "bye"}, {"ok", true}};
    }
    if (type == "evaluate") {
        OperatorCard card;
        Candidate cand;
        EvalOptions opts;
        try {
            card = req.at("card").get<OperatorCard>();
            cand = req.at("candidate").get<Candidate>();
            if (req.contains("options"))
                opts = req["options"].get<EvalOptions>();
        } catch (const std::exception &e) {
            return errorReply(id, std::string("malformed evaluate request: ") + e.what());
        }
        for (auto &d : m_devices)
            if (d->backend() == cand.backend)
                return evaluateReply(id, *d, card, cand, opts);
        return errorReply(id, "this worker has no '" + cand.backend + "' backend");
    }
    return errorReply(id, type.empty() ? "malformed request: no \"type\"" : "unknown request type '" + type + "'");
}

int Server::serve()
{
    // Keep the protocol on private descriptors that no child inherits; fd 0 reads nothing and fd 1
    // goes to stderr.
    const int protoIn = ::fcntl(0, F_DUPFD_CLOEXEC, 3);
    const int protoOut = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
    const int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    ::dup2(2, 1);
    ::close(devnull);
    FILE *in = ::fdopen(protoIn, "r");
    FILE *out = ::fdopen(protoOut, "w");
    if (!in || !out)
        return 2;
    m_out = out;
    m_watcher = std::thread([this, protoIn] { watch(protoIn); });
    std::string line;
    char *buf = nullptr;
    size_t cap = 0;
    bool quit = false;
    while (!quit) {
        const ssize_t n = ::getline(&buf, &cap, in);
        if (n < 0)
            break;
        line.assign(buf, size_t(n));
        while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
            line.pop_back();
        if (line.find_first_not_of(" \t") == std::string::npos)
            continue;
        const auto reply = handle(line, quit);
        if (!reply.is_null())
            send(reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    std::free(buf);
    m_stopWatching = true;
    m_watcher.join();
    return 0;
}

} // namespace kforge::worker
