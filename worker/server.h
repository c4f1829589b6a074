#pragma once
// The worker's side of protocol v1: reads requests line by line, answers each with one line, and
// survives anything a request contains. Candidate code runs in this process, so the server keeps the
// protocol on private copies of stdin and stdout and points fds 0 and 1 elsewhere: a candidate that
// prints or reads cannot corrupt the stream.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "worker/backend.h"

namespace kforge::worker {

class Server {
public:
    Server();
    void addBackend(std::unique_ptr<Backend> backend);
    // Serves until shutdown or end of input; returns the process exit code.
    int serve();
    // Handles one request line; returns the reply, and sets `quit` on shutdown.
    nlohmann::json handle(const std::string &line, bool &quit);

private:
    nlohmann::json hello(const nlohmann::json &id) const;

    std::vector<std::unique_ptr<Backend>> m_backends;
    std::string m_name;
};

} // namespace kforge::worker
