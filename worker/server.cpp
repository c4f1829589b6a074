#include "worker/server.h"

#include <cstdlib>
#include <fcntl.h>
#include <iostream>
#include <unistd.h>

#include "util/error.h"
#include "worker/profile/ncu_profiler.h"

namespace kforge::worker {

Server::Server()
{
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    const char *slot = std::getenv("KFORGE_WORKER_SLOT");
    m_name = std::string("kforge-worker@") + host + " pid " + std::to_string(::getpid()) + (slot ? std::string(" slot ") + slot : "");
}

void Server::addBackend(std::unique_ptr<Backend> backend)
{
    m_backends.push_back(std::move(backend));
}

nlohmann::json Server::hello(const nlohmann::json &id) const
{
    nlohmann::json backends = nlohmann::json::array(), devices = nlohmann::json::array();
    for (const auto &b : m_backends) {
        backends.push_back(b->name());
        for (const auto &d : b->devices())
            devices.push_back(d);
    }
    return {{"id", id}, {"type", "hello"}, {"ok", true}, {"protocol", kProtocolVersion}, {"worker", m_name},
            {"backends", backends}, {"devices", devices}};
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
        return hello(id);
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
        for (auto &b : m_backends)
            if (b->name() == cand.backend) {
                try {
                    return {{"id", id}, {"type", "result"}, {"ok", true}, {"verdict", b->evaluate(card, cand, opts)}};
                } catch (const std::exception &e) {
                    return {{"id", id}, {"type", "result"}, {"ok", true},
                            {"verdict", failureVerdict(VerdictStatus::Error, reason::BadRequest, e.what())}};
                }
            }
        return errorReply(id, "this worker has no '" + cand.backend + "' backend");
    }
    return errorReply(id, type.empty() ? "malformed request: no \"type\"" : "unknown request type '" + type + "'");
}

int Server::serve()
{
    // Keep the protocol on private descriptors; fd 0 reads nothing and fd 1 goes to stderr.
    const int protoIn = ::dup(0);
    const int protoOut = ::dup(1);
    const int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    ::dup2(2, 1);
    ::close(devnull);
    FILE *in = ::fdopen(protoIn, "r");
    FILE *out = ::fdopen(protoOut, "w");
    if (!in || !out)
        return 2;
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
        const auto reply = handle(line, quit).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        std::fputs(reply.c_str(), out);
        std::fputc('\n', out);
        std::fflush(out);
    }
    std::free(buf);
    return 0;
}

} // namespace kforge::worker
