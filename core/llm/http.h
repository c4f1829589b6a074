#pragma once
// One HTTP POST over libcurl with the controls every provider client needs: a connect and a total
// timeout, cancellation by an atomic flag (checked in curl's progress callback, so a stalled stream
// stops within a tenth of a second), and the body either collected whole or handed over as it arrives.
#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kforge::llm {

struct HttpRequest {
    std::string url;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    long connectTimeoutMs = 10000;
    long totalTimeoutMs = 300000;
    const std::atomic<bool> *cancel = nullptr;
    // Called with each piece of a 2xx body as it arrives (the body is still collected). A non-2xx body
    // is only collected: it is an error document, not a stream.
    std::function<void(std::string_view)> onData;
};

struct HttpResponse {
    long status = 0;
    std::map<std::string, std::string> headers; // names in lower case
    std::string body;
};

enum class TransportFailure { None, Timeout, Cancelled, Connect, Other };

struct HttpResult {
    TransportFailure failure = TransportFailure::None;
    std::string error; // curl's words when failure != None
    HttpResponse response;
};

// Never throws for transport problems: they come back as `failure`.
HttpResult httpPost(const HttpRequest &request);

} // namespace kforge::llm
