#pragma once
// Provider clients: one chat turn to a model, whole or streamed, over each provider's own wire format.
//
//   openai     POST {base}/chat/completions          Authorization: Bearer KEY   (OpenAI, and with a base URL
//              vLLM, llama.cpp server, Ollama's /v1; "openrouter" is the same protocol at openrouter.ai)
//   anthropic  POST {base}/v1/messages                x-api-key: KEY, anthropic-version: 2023-06-01
//   gemini     POST {base}/v1beta/models/M:generateContent, :streamGenerateContent?alt=sse   x-goog-api-key: KEY
//
// Streams are server-sent events in each provider's own events (OpenAI's chunks and [DONE], Anthropic's
// message_start / content_block_delta / message_delta / error, Gemini's GenerateContentResponse per
// event). 429 and 5xx are retried with exponential backoff, honouring Retry-After; every other
// failure is an LlmError whose kind says what went wrong and whose message, redacted, says with what.
// The key is passed in by the caller (from the environment) and is never part of a message, a
// stored request or a log.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace kforge {
class Redactor;
}

namespace kforge::llm {

enum class Protocol { OpenAI, Anthropic, Gemini };

enum class ErrorKind {
    BadKey,        // 401/403, or Gemini's API_KEY_INVALID
    UnknownModel,  // 404, or the provider's body names the model as unknown
    RateLimited,   // 429 after every retry
    Server,        // 5xx after every retry
    BadRequest,    // another 4xx
    Timeout,       // connect or total timeout
    Cancelled,     // the caller's flag
    Network,       // could not connect or the transfer broke
    Refusal,       // the model (or its filter) refused: content_filter, refusal, SAFETY, ...
    Truncated,     // cut off by the output limit: length, max_tokens, MAX_TOKENS
    Malformed,     // not the JSON (or events) the protocol promises
    NoPrice,       // the cost of a call cannot be known (no price table entry)
    Budget,        // the money budget is spent
};
std::string errorKindName(ErrorKind k);

class LlmError : public Error {
public:
    LlmError(ErrorKind kind, const std::string &message, long httpStatus = 0)
        : Error(message), m_kind(kind), m_status(httpStatus)
    {
    }
    ErrorKind kind() const { return m_kind; }
    long httpStatus() const { return m_status; }

private:
    ErrorKind m_kind;
    long m_status;
};

struct ProviderConfig {
    std::string provider = "openai"; // openai, openrouter, vllm, llamacpp, ollama, anthropic, gemini
    std::string model;
    std::string baseUrl;             // empty: the provider's public endpoint
    std::string apiKey;              // empty for local servers that need none
    long connectTimeoutMs = 10000;
    long totalTimeoutMs = 300000;
    int maxRetries = 4;              // after the first attempt, for 429 and 5xx
    double backoffMs = 1000;         // first wait; doubles each retry
    double maxBackoffMs = 60000;     // and never more (a Retry-After above it is honoured up to it)
    const std::atomic<bool> *cancel = nullptr;
};

// The provider's protocol, its public base URL and the environment variable its key is read from
// ("" for local servers). Throws Error for an unknown provider.
Protocol protocolFor(const std::string &provider);
std::string defaultBaseUrl(const std::string &provider);
std::string keyVariable(const std::string &provider);
// "anthropic/claude-sonnet-4-5" -> provider and model; a model may itself hold '/' (openrouter's
// "anthropic/claude-sonnet-4.5"). Throws Error when either part is missing or the provider is unknown.
ProviderConfig parseProviderSpec(const std::string &spec);
// A base URL the client can reach: http:// or https:// and a host. Throws Error saying what it takes.
void checkBaseUrl(const std::string &url);

struct Message {
    std::string role; // "user" or "assistant"
    std::string content;
};

struct ChatRequest {
    std::string system;
    std::vector<Message> messages;
    int maxTokens = 8192;
    double temperature = 0.4;
};

struct Usage {
    int64_t inputTokens = 0;
    int64_t outputTokens = 0; // includes reasoning ("thinking") tokens where the provider bills them as output
};

struct ChatReply {
    std::string text;
    std::string finishReason; // as the provider wrote it
    Usage usage;
    std::string model;        // as the provider reported it
    int attempts = 0;
    double millis = 0;
};

// What went over the wire for one call, for the store: the request body exactly as sent and the
// response body exactly as received (for a stream, the events as they came), both redacted.
struct Exchange {
    std::string url;
    std::string requestBody;
    std::string responseBody;
    long httpStatus = 0;
};

class Client {
public:
    explicit Client(ProviderConfig config);
    const ProviderConfig &config() const { return m_config; }
    Protocol protocol() const { return m_protocol; }

    // One turn. `onDelta` non-empty asks for a stream and receives text as it arrives. Throws LlmError.
    // `exchange`, when given, is filled even when the call throws.
    ChatReply chat(const ChatRequest &request, const std::function<void(std::string_view)> &onDelta = {},
                   Exchange *exchange = nullptr) const;

    // The request body this client sends (exposed for tests and the store).
    nlohmann::json requestBody(const ChatRequest &request, bool stream) const;

private:
    std::string url(bool stream) const;
    std::string redact(std::string_view text) const;

    ProviderConfig m_config;
    Protocol m_protocol;
};

// Redacts a JSON document or a stream of events without changing a byte that holds no secret: each
// string literal's contents and each stretch between literals is redacted on its own, so a secret
// value is replaced wherever it is, while `"max_tokens": 2048` (a key that looks like a secret's with
// a number) is left as the provider wrote it.
std::string redactBody(std::string_view text, const Redactor &redactor);

// Retry-After as seconds ("2", "0.5") or an HTTP date; negative when absent or unreadable.
double retryAfterSeconds(const std::string &value);

} // namespace kforge::llm
