#pragma once
// The worker's side of protocol v1: reads requests line by line, answers each with one line, and
// survives anything a request contains. The protocol lives on private, close-on-exec copies of stdin
// and stdout, and fds 0 and 1 point elsewhere, so nothing a candidate or a library prints or reads
// can corrupt the stream, and no child process inherits it.
//
// A watchdog thread ends the worker when the pool hangs up (its process died: no worker is left
// spinning on a hung kernel) and when an evaluation runs past its deadline. A CPU candidate is stopped
// by its sandbox; a CUDA kernel cannot be stopped without its context, so the watchdog answers the
// request with a Timeout verdict itself and exits, and the pool starts a fresh worker.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "worker/pipeline/device.h"

namespace kforge::worker {

class Server {
public:
    Server();
    void addDevice(std::unique_ptr<Device> device);
    // A backend this worker was built for but cannot serve here, and why (no GPU, no driver): its hello
    // says so, so a client asking for it is told the reason instead of a failure per candidate.
    void noteUnavailable(const std::string &backend, const std::string &why);
    // Serves until shutdown or end of input; returns the process exit code.
    int serve();
    // Handles one request line; returns the reply (null for a hint, which gets none), and sets `quit`
    // on shutdown.
    nlohmann::json handle(const std::string &line, bool &quit);

private:
    nlohmann::json hello(const nlohmann::json &id, bool measure) const;
    nlohmann::json evaluateReply(const nlohmann::json &id, Device &device, const OperatorCard &card, const Candidate &cand,
                                 const EvalOptions &opts);
    void watch(int protoIn);
    void send(const std::string &line);

    std::vector<std::unique_ptr<Device>> m_devices;
    nlohmann::json m_unavailable = nlohmann::json::object(); // backend -> why
    std::string m_name;
    FILE *m_out = nullptr;
    std::mutex m_outMutex;
    // The evaluation in progress, for the watchdog: its request id and when its deadline passes.
    std::mutex m_busyMutex;
    nlohmann::json m_busyId;
    std::chrono::steady_clock::time_point m_busyUntil;
    bool m_busy = false;
    std::atomic<bool> m_stopWatching{false};
    std::thread m_watcher;
};

} // namespace kforge::worker
