#include "llm/client.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <thread>

#include <curl/curl.h>

#include "llm/http.h"
#include "llm/sse.h"
#include "util/redact.h"

namespace kforge::llm {

namespace {

using J = nlohmann::json;

std::string lower(std::string s)
{
    for (auto &c : s)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string excerpt(const std::string &s, size_t n = 300)
{
    std::string out = s.size() > n ? s.substr(0, n) + "..." : s;
    for (auto &c : out)
        if (c == '\n' || c == '\r')
            c = ' ';
    return out;
}

std::string str(const J &j, const char *key)
{
    if (j.is_object()) {
        auto it = j.find(key);
        if (it != j.end() && it->is_string())
            return it->get<std::string>();
    }
    return {};
}

int64_t num(const J &j, const char *key)
{
    if (j.is_object()) {
        auto it = j.find(key);
        if (it != j.end() && it->is_number())
            return it->get<int64_t>();
    }
    return 0;
}

// The provider's own error document: its message, and a code that classifies it where there is one.
struct ErrorBody {
    std::string message;
    std::string code; // OpenAI error.code / type, Anthropic error.type, Gemini error.status and details' reasons
};

ErrorBody errorBody(const std::string &body)
{
    ErrorBody e;
    J j = J::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        e.message = excerpt(body);
        return e;
    }
    const J &err = j.contains("error") ? j["error"] : j;
    if (err.is_string()) {
        e.message = err.get<std::string>();
        return e;
    }
    e.message = str(err, "message");
    for (const char *k : {"code", "type", "status"})
        if (!str(err, k).empty())
            e.code += (e.code.empty() ? "" : " ") + str(err, k);
    if (err.contains("details") && err["details"].is_array())
        for (const auto &d : err["details"])
            if (!str(d, "reason").empty())
                e.code += " " + str(d, "reason");
    if (e.message.empty())
        e.message = excerpt(body);
    return e;
}

bool mentionsUnknownModel(const ErrorBody &e)
{
    const auto m = lower(e.message), c = lower(e.code);
    if (c.find("model_not_found") != std::string::npos || c.find("not_found") != std::string::npos)
        return true;
    if (m.find("model") == std::string::npos)
        return false;
    for (const char *p : {"not found", "does not exist", "not a valid model", "invalid model", "unknown model", "no such model",
                          "is not supported"})
        if (m.find(p) != std::string::npos)
            return true;
    return false;
}

bool isRetryable(long status) { return status == 429 || status >= 500; }

struct Parsed {
    std::string text;
    std::string refusal; // OpenAI's message.refusal
    std::string finish;
    Usage usage;
    std::string model;
    bool done = false; // the protocol's end marker was seen
    std::optional<LlmError> error;
};

class Call {
public:
    Call(const ProviderConfig &c, Protocol p, const Redactor &r) : m_c(c), m_p(p), m_r(r) {}

    std::string who() const { return m_c.provider + " model '" + m_c.model + "'"; }

    LlmError httpError(long status, const std::string &body) const
    {
        const auto e = errorBody(body);
        const std::string detail = m_r.redact(e.message) + (e.code.empty() ? "" : " [" + e.code + "]");
        const std::string var = keyVariable(m_c.provider);
        const std::string keyHint = var.empty() ? "" : " (check " + var + ")";
        const auto lc = lower(e.code + " " + e.message);
        if (status == 401 || status == 403 || lc.find("api_key_invalid") != std::string::npos
            || lc.find("api key not valid") != std::string::npos)
            return LlmError(ErrorKind::BadKey, m_c.provider + " refused the API key" + keyHint + ": HTTP " + std::to_string(status) + ": " + detail,
                            status);
        if (status == 404 || mentionsUnknownModel(e))
            return LlmError(ErrorKind::UnknownModel,
                            m_c.provider + " does not know the model '" + m_c.model + "': HTTP " + std::to_string(status) + ": " + detail, status);
        if (status == 429)
            return LlmError(ErrorKind::RateLimited, who() + " is rate limited: HTTP 429: " + detail, status);
        if (status >= 500)
            return LlmError(ErrorKind::Server, m_c.provider + " failed: HTTP " + std::to_string(status) + ": " + detail, status);
        return LlmError(ErrorKind::BadRequest, m_c.provider + " rejected the request: HTTP " + std::to_string(status) + ": " + detail, status);
    }

    LlmError malformed(const std::string &what, const std::string &body) const
    {
        return LlmError(ErrorKind::Malformed, "the reply of " + who() + " is malformed: " + what + " (it began: " + m_r.redact(excerpt(body, 200)) + ")");
    }

    LlmError streamError(const J &err) const
    {
        const auto e = errorBody(J{{"error", err}}.dump());
        const auto lc = lower(e.code);
        ErrorKind k = ErrorKind::Server;
        if (lc.find("rate_limit") != std::string::npos)
            k = ErrorKind::RateLimited;
        else if (lc.find("overloaded") != std::string::npos || lc.find("api_error") != std::string::npos || lc.find("server") != std::string::npos)
            k = ErrorKind::Server;
        else if (lc.find("invalid_request") != std::string::npos)
            k = ErrorKind::BadRequest;
        return LlmError(k, who() + " stopped the stream with an error: " + m_r.redact(e.message) + (e.code.empty() ? "" : " [" + e.code + "]"));
    }

    // A whole (non-streamed) reply body.
    Parsed whole(const std::string &body) const
    {
        J j = J::parse(body, nullptr, false);
        if (j.is_discarded())
            throw malformed("not JSON", body);
        if (!j.is_object())
            throw malformed("not a JSON object", body);
        Parsed p;
        try {
            switch (m_p) {
            case Protocol::OpenAI: openaiChunk(j, p, false); break;
            case Protocol::Anthropic: anthropicWhole(j, p); break;
            case Protocol::Gemini: geminiChunk(j, p); break;
            }
        } catch (const std::exception &e) {
            throw malformed(e.what(), body);
        }
        if (p.error)
            throw *p.error;
        p.done = true;
        return p;
    }

    // One server-sent event of a stream.
    void event(const std::string &name, const std::string &data, Parsed &p) const
    {
        if (p.error)
            return;
        if (m_p == Protocol::OpenAI && data == "[DONE]") {
            p.done = true;
            return;
        }
        J j = J::parse(data, nullptr, false);
        if (j.is_discarded() || !j.is_object()) {
            p.error = malformed("an event's data is not a JSON object", data);
            return;
        }
        try {
            switch (m_p) {
            case Protocol::OpenAI: openaiChunk(j, p, true); break;
            case Protocol::Anthropic: anthropicEvent(name, j, p); break;
            case Protocol::Gemini: geminiChunk(j, p); break;
            }
        } catch (const std::exception &e) {
            p.error = malformed(e.what(), data);
        }
    }

    // The reason a finished reply is unusable: a refusal or the length limit.
    void checkFinish(const Parsed &p) const
    {
        const auto f = p.finish;
        if (!p.refusal.empty())
            throw LlmError(ErrorKind::Refusal, who() + " refused: " + excerpt(p.refusal));
        if (f == "length" || f == "max_tokens" || f == "MAX_TOKENS" || f == "model_context_window_exceeded")
            throw LlmError(ErrorKind::Truncated, "the reply of " + who() + " was cut off by the output limit (finish reason '" + f + "', "
                                                     + std::to_string(p.usage.outputTokens) + " output tokens)");
        if (f == "content_filter" || f == "refusal" || f == "SAFETY" || f == "RECITATION" || f == "BLOCKLIST" || f == "PROHIBITED_CONTENT"
            || f == "SPII" || f == "IMAGE_SAFETY" || f.rfind("blocked:", 0) == 0)
            throw LlmError(ErrorKind::Refusal, who() + " refused to answer (finish reason '" + f + "')");
    }

private:
    void openaiChunk(const J &j, Parsed &p, bool stream) const
    {
        if (j.contains("error") && !j["error"].is_null()) {
            p.error = stream ? streamError(j["error"]) : malformed("an error object in a 200 reply", j.dump());
            return;
        }
        if (!str(j, "model").empty())
            p.model = str(j, "model");
        if (j.contains("usage") && j["usage"].is_object()) {
            p.usage.inputTokens = num(j["usage"], "prompt_tokens");
            p.usage.outputTokens = num(j["usage"], "completion_tokens");
        }
        if (!j.contains("choices") || !j["choices"].is_array())
            throw std::runtime_error("no \"choices\" array");
        if (j["choices"].empty()) {
            if (!stream)
                throw std::runtime_error("\"choices\" is empty");
            return; // the usage chunk
        }
        const J &c = j["choices"][0];
        const J &m = stream ? c.at("delta") : c.at("message");
        if (m.contains("content") && m["content"].is_string())
            p.text += m["content"].get<std::string>();
        else if (!stream && !(m.contains("refusal") && m["refusal"].is_string()) && !(m.contains("content") && m["content"].is_null()))
            throw std::runtime_error("the message has no \"content\" string");
        if (m.contains("refusal") && m["refusal"].is_string())
            p.refusal += m["refusal"].get<std::string>();
        if (c.contains("finish_reason") && c["finish_reason"].is_string())
            p.finish = c["finish_reason"].get<std::string>();
    }

    static void anthropicUsage(const J &u, Usage &usage)
    {
        if (!u.is_object())
            return;
        // Cache writes and reads are input too; counting them at the input price errs on the high side.
        const int64_t in = num(u, "input_tokens") + num(u, "cache_creation_input_tokens") + num(u, "cache_read_input_tokens");
        if (in)
            usage.inputTokens = in;
        if (u.contains("output_tokens"))
            usage.outputTokens = num(u, "output_tokens");
    }

    void anthropicWhole(const J &j, Parsed &p) const
    {
        if (str(j, "type") == "error") {
            p.error = malformed("an error object in a 200 reply", j.dump());
            return;
        }
        if (!j.contains("content") || !j["content"].is_array())
            throw std::runtime_error("no \"content\" array");
        for (const auto &b : j["content"])
            if (str(b, "type") == "text")
                p.text += b.at("text").get<std::string>();
        p.finish = str(j, "stop_reason");
        p.model = str(j, "model");
        anthropicUsage(j.value("usage", J::object()), p.usage);
    }

    void anthropicEvent(const std::string &name, const J &j, Parsed &p) const
    {
        const std::string type = str(j, "type").empty() ? name : str(j, "type");
        if (type == "message_start") {
            const J &m = j.at("message");
            p.model = str(m, "model");
            anthropicUsage(m.value("usage", J::object()), p.usage);
        } else if (type == "content_block_delta") {
            const J &d = j.at("delta");
            if (str(d, "type") == "text_delta")
                p.text += d.at("text").get<std::string>();
        } else if (type == "message_delta") {
            if (j.contains("delta") && !str(j["delta"], "stop_reason").empty())
                p.finish = str(j["delta"], "stop_reason");
            anthropicUsage(j.value("usage", J::object()), p.usage);
        } else if (type == "message_stop") {
            p.done = true;
        } else if (type == "error") {
            p.error = streamError(j.value("error", J::object()));
        }
        // ping, content_block_start and content_block_stop carry nothing we need.
    }

    void geminiChunk(const J &j, Parsed &p) const
    {
        if (j.contains("error")) {
            p.error = streamError(j["error"]);
            return;
        }
        if (j.contains("usageMetadata")) {
            const J &u = j["usageMetadata"];
            p.usage.inputTokens = num(u, "promptTokenCount");
            p.usage.outputTokens = num(u, "candidatesTokenCount") + num(u, "thoughtsTokenCount");
        }
        if (!str(j, "modelVersion").empty())
            p.model = str(j, "modelVersion");
        const bool hasCandidates = j.contains("candidates") && j["candidates"].is_array() && !j["candidates"].empty();
        if (!hasCandidates) {
            if (j.contains("promptFeedback") && !str(j["promptFeedback"], "blockReason").empty()) {
                p.finish = "blocked:" + str(j["promptFeedback"], "blockReason");
                p.done = true;
                return;
            }
            if (!j.contains("usageMetadata"))
                throw std::runtime_error("no \"candidates\"");
            return;
        }
        const J &c = j["candidates"][0];
        if (c.contains("content") && c["content"].contains("parts"))
            for (const auto &part : c["content"]["parts"])
                if (part.contains("text") && !part.value("thought", false))
                    p.text += part["text"].get<std::string>();
        if (!str(c, "finishReason").empty()) {
            p.finish = str(c, "finishReason");
            p.done = true;
        }
    }

    const ProviderConfig &m_c;
    Protocol m_p;
    const Redactor &m_r;
};

// Waits `seconds`, waking every 50 ms to see whether the caller cancelled.
bool sleepUnlessCancelled(double seconds, const std::atomic<bool> *cancel)
{
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until) {
        if (cancel && cancel->load())
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(std::min<int64_t>(
            50, std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count() + 1)));
    }
    return !(cancel && cancel->load());
}

} // namespace

std::string errorKindName(ErrorKind k)
{
    switch (k) {
    case ErrorKind::BadKey: return "bad_key";
    case ErrorKind::UnknownModel: return "unknown_model";
    case ErrorKind::RateLimited: return "rate_limited";
    case ErrorKind::Server: return "server_error";
    case ErrorKind::BadRequest: return "bad_request";
    case ErrorKind::Timeout: return "timeout";
    case ErrorKind::Cancelled: return "cancelled";
    case ErrorKind::Network: return "network";
    case ErrorKind::Refusal: return "refusal";
    case ErrorKind::Truncated: return "truncated";
    case ErrorKind::Malformed: return "malformed";
    case ErrorKind::NoPrice: return "no_price";
    case ErrorKind::Budget: return "budget";
    }
    return "unknown";
}

Protocol protocolFor(const std::string &provider)
{
    if (provider == "openai" || provider == "openrouter" || provider == "vllm" || provider == "llamacpp" || provider == "ollama")
        return Protocol::OpenAI;
    if (provider == "anthropic")
        return Protocol::Anthropic;
    if (provider == "gemini")
        return Protocol::Gemini;
    throw Error("unknown provider '" + provider + "' (openai, openrouter, vllm, llamacpp, ollama, anthropic or gemini)");
}

std::string defaultBaseUrl(const std::string &provider)
{
    if (provider == "openai")
        return "https://api.openai.com/v1";
    if (provider == "openrouter")
        return "https://openrouter.ai/api/v1";
    if (provider == "vllm")
        return "http://127.0.0.1:8000/v1";
    if (provider == "llamacpp")
        return "http://127.0.0.1:8080/v1";
    if (provider == "ollama")
        return "http://127.0.0.1:11434/v1";
    if (provider == "anthropic")
        return "https://api.anthropic.com";
    if (provider == "gemini")
        return "https://generativelanguage.googleapis.com";
    protocolFor(provider); // throws for an unknown one
    return {};
}

std::string keyVariable(const std::string &provider)
{
    if (provider == "openai")
        return "OPENAI_API_KEY";
    if (provider == "openrouter")
        return "OPENROUTER_API_KEY";
    if (provider == "anthropic")
        return "ANTHROPIC_API_KEY";
    if (provider == "gemini")
        return "GEMINI_API_KEY";
    return {};
}

ProviderConfig parseProviderSpec(const std::string &spec)
{
    const auto slash = spec.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 >= spec.size())
        throw Error("a provider is given as PROVIDER/MODEL (e.g. anthropic/claude-sonnet-4-5, openai/gpt-4.1, gemini/gemini-2.5-pro), not '"
                    + spec + "'");
    ProviderConfig c;
    c.provider = spec.substr(0, slash);
    c.model = spec.substr(slash + 1);
    protocolFor(c.provider);
    return c;
}

void checkBaseUrl(const std::string &url)
{
    for (const char *scheme : {"http://", "https://"}) {
        const std::string s = scheme;
        if (url.rfind(s, 0) == 0 && url.size() > s.size() && url[s.size()] != '/' && url.find_first_of(" \t\r\n") == std::string::npos)
            return;
    }
    throw Error("a base URL is http:// or https:// and a host (e.g. http://localhost:8000/v1), not '" + url + "'");
}

std::string redactBody(std::string_view text, const Redactor &redactor)
{
    std::string out;
    out.reserve(text.size());
    size_t i = 0;
    while (i < text.size()) {
        const auto q = text.find('"', i);
        if (q == std::string_view::npos) {
            out += redactor.redact(text.substr(i));
            break;
        }
        out += redactor.redact(text.substr(i, q - i));
        size_t e = q + 1;
        while (e < text.size() && text[e] != '"')
            e += text[e] == '\\' ? 2 : 1;
        e = std::min(e, text.size());
        out += '"';
        out += redactor.redact(text.substr(q + 1, e - q - 1));
        if (e < text.size())
            out += '"';
        i = e + 1;
    }
    return out;
}

double retryAfterSeconds(const std::string &value)
{
    if (value.empty())
        return -1;
    char *end = nullptr;
    const double s = std::strtod(value.c_str(), &end);
    if (end != value.c_str() && *end == '\0')
        return s >= 0 && std::isfinite(s) ? s : -1;
    const time_t when = curl_getdate(value.c_str(), nullptr);
    if (when < 0)
        return -1;
    return std::max(0.0, double(when) - double(std::time(nullptr)));
}

Client::Client(ProviderConfig config) : m_config(std::move(config)), m_protocol(protocolFor(m_config.provider))
{
    if (m_config.baseUrl.empty())
        m_config.baseUrl = defaultBaseUrl(m_config.provider);
    while (!m_config.baseUrl.empty() && m_config.baseUrl.back() == '/')
        m_config.baseUrl.pop_back();
    if (m_config.model.empty())
        throw Error("no model given for the provider " + m_config.provider);
}

std::string Client::redact(std::string_view text) const
{
    auto r = Redactor::fromEnvironment();
    if (!m_config.apiKey.empty())
        r.addSecret(m_config.apiKey);
    return r.redact(text);
}

std::string Client::url(bool stream) const
{
    switch (m_protocol) {
    case Protocol::OpenAI: return m_config.baseUrl + "/chat/completions";
    case Protocol::Anthropic: return m_config.baseUrl + "/v1/messages";
    case Protocol::Gemini: {
        const std::string model = m_config.model.rfind("models/", 0) == 0 ? m_config.model.substr(7) : m_config.model;
        return m_config.baseUrl + "/v1beta/models/" + model + (stream ? ":streamGenerateContent?alt=sse" : ":generateContent");
    }
    }
    return {};
}

nlohmann::json Client::requestBody(const ChatRequest &r, bool stream) const
{
    J body;
    switch (m_protocol) {
    case Protocol::OpenAI: {
        J messages = J::array();
        if (!r.system.empty())
            messages.push_back({{"role", "system"}, {"content", r.system}});
        for (const auto &m : r.messages)
            messages.push_back({{"role", m.role}, {"content", m.content}});
        body = {{"model", m_config.model}, {"messages", messages}, {"temperature", r.temperature}};
        // OpenAI's own API has replaced max_tokens (which its reasoning models refuse); the compatible
        // servers (OpenRouter, vLLM, llama.cpp, Ollama) read max_tokens.
        body[m_config.provider == "openai" ? "max_completion_tokens" : "max_tokens"] = r.maxTokens;
        if (stream) {
            body["stream"] = true;
            body["stream_options"] = {{"include_usage", true}};
        }
        break;
    }
    case Protocol::Anthropic: {
        J messages = J::array();
        for (const auto &m : r.messages)
            messages.push_back({{"role", m.role}, {"content", m.content}});
        body = {{"model", m_config.model}, {"max_tokens", r.maxTokens}, {"messages", messages}, {"temperature", r.temperature}};
        if (!r.system.empty())
            body["system"] = r.system;
        if (stream)
            body["stream"] = true;
        break;
    }
    case Protocol::Gemini: {
        J contents = J::array();
        for (const auto &m : r.messages)
            contents.push_back({{"role", m.role == "assistant" ? "model" : "user"}, {"parts", J::array({{{"text", m.content}}})}});
        body = {{"contents", contents}, {"generationConfig", {{"maxOutputTokens", r.maxTokens}, {"temperature", r.temperature}}}};
        if (!r.system.empty())
            body["systemInstruction"] = {{"parts", J::array({{{"text", r.system}}})}};
        break;
    }
    }
    return body;
}

ChatReply Client::chat(const ChatRequest &request, const std::function<void(std::string_view)> &onDelta, Exchange *exchange) const
{
    auto redactor = Redactor::fromEnvironment();
    if (!m_config.apiKey.empty())
        redactor.addSecret(m_config.apiKey);
    const bool stream = bool(onDelta);
    const Call call(m_config, m_protocol, redactor);
    const auto started = std::chrono::steady_clock::now();

    HttpRequest http;
    http.url = url(stream);
    http.body = requestBody(request, stream).dump();
    http.connectTimeoutMs = m_config.connectTimeoutMs;
    http.totalTimeoutMs = m_config.totalTimeoutMs;
    http.cancel = m_config.cancel;
    http.headers = {{"Content-Type", "application/json"}, {"Accept", stream ? "text/event-stream" : "application/json"}};
    if (!m_config.apiKey.empty()) {
        switch (m_protocol) {
        case Protocol::OpenAI: http.headers.push_back({"Authorization", "Bearer " + m_config.apiKey}); break;
        case Protocol::Anthropic: http.headers.push_back({"x-api-key", m_config.apiKey}); break;
        case Protocol::Gemini: http.headers.push_back({"x-goog-api-key", m_config.apiKey}); break;
        }
    }
    if (m_protocol == Protocol::Anthropic)
        http.headers.push_back({"anthropic-version", "2023-06-01"});
    if (exchange) {
        exchange->url = redactor.redact(http.url);
        exchange->requestBody = redactBody(http.body, redactor);
    }
    auto record = [&](const HttpResult &res) {
        if (exchange) {
            exchange->responseBody = redactBody(res.response.body, redactor);
            exchange->httpStatus = res.response.status;
        }
    };

    for (int attempt = 1;; ++attempt) {
        if (m_config.cancel && m_config.cancel->load())
            throw LlmError(ErrorKind::Cancelled, "the call to " + call.who() + " was cancelled");
        Parsed parsed;
        bool delivered = false;
        SseParser sse([&](const std::string &ev, const std::string &data) {
            const size_t before = parsed.text.size();
            call.event(ev, data, parsed);
            if (parsed.text.size() > before && !parsed.error) {
                delivered = true;
                onDelta(std::string_view(parsed.text).substr(before));
            }
        });
        if (stream)
            http.onData = [&](std::string_view bytes) { sse.feed(bytes); };
        const HttpResult res = httpPost(http);
        record(res);
        const bool lastAttempt = attempt > m_config.maxRetries;
        double wait = m_config.backoffMs / 1000.0 * std::pow(2.0, attempt - 1);
        std::optional<LlmError> failure;

        if (res.failure == TransportFailure::Cancelled)
            throw LlmError(ErrorKind::Cancelled, "the call to " + call.who() + " was cancelled");
        if (res.failure == TransportFailure::Timeout)
            throw LlmError(ErrorKind::Timeout, "no complete reply from " + call.who() + " within the timeout (connect "
                                                   + std::to_string(m_config.connectTimeoutMs) + " ms, total " + std::to_string(m_config.totalTimeoutMs)
                                                   + " ms): " + redactor.redact(res.error));
        if (res.failure != TransportFailure::None) {
            failure = LlmError(ErrorKind::Network, "cannot reach " + m_config.provider + " at " + redactor.redact(http.url) + ": " + redactor.redact(res.error));
            if (delivered || lastAttempt)
                throw *failure;
        } else if (res.response.status < 200 || res.response.status >= 300) {
            failure = call.httpError(res.response.status, res.response.body);
            if (!isRetryable(res.response.status) || lastAttempt)
                throw *failure;
            auto h = res.response.headers.find("retry-after-ms");
            double ra = h != res.response.headers.end() ? retryAfterSeconds(h->second) / 1000.0 : -1;
            if (ra < 0 && (h = res.response.headers.find("retry-after")) != res.response.headers.end())
                ra = retryAfterSeconds(h->second);
            if (ra >= 0)
                wait = ra;
        } else {
            if (stream) {
                sse.finish();
                if (parsed.error) {
                    const auto k = parsed.error->kind();
                    if (delivered || lastAttempt || (k != ErrorKind::Server && k != ErrorKind::RateLimited))
                        throw *parsed.error;
                    failure = parsed.error;
                } else if (!parsed.done && parsed.finish.empty() && parsed.text.empty()
                           && res.response.headers.count("content-type")
                           && res.response.headers.at("content-type").find("application/json") != std::string::npos) {
                    // A server that ignores "stream" (some local ones do) answers with the whole reply.
                    parsed = call.whole(res.response.body);
                    if (!parsed.text.empty())
                        onDelta(parsed.text);
                } else if (!parsed.done && parsed.finish.empty()) {
                    throw LlmError(ErrorKind::Network, "the stream from " + call.who() + " ended before the reply was complete");
                }
            } else {
                parsed = call.whole(res.response.body);
            }
            if (!failure) {
                call.checkFinish(parsed);
                ChatReply reply;
                reply.text = std::move(parsed.text);
                reply.finishReason = parsed.finish;
                reply.usage = parsed.usage;
                reply.model = parsed.model.empty() ? m_config.model : parsed.model;
                reply.attempts = attempt;
                reply.millis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
                return reply;
            }
        }
        if (!sleepUnlessCancelled(std::min(wait, m_config.maxBackoffMs / 1000.0), m_config.cancel))
            throw LlmError(ErrorKind::Cancelled, "the call to " + call.who() + " was cancelled while waiting to retry");
    }
}

} // namespace kforge::llm
