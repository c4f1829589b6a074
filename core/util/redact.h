#pragma once
// The one rule for secrets. What looks like a secret never reaches a worker's environment, and text
// that came from elsewhere (a worker's stderr, later a provider's error body) has secret values
// replaced before it is stored, logged or shown.
#include <string>
#include <string_view>
#include <vector>

namespace kforge {

inline constexpr const char *kRedacted = "[redacted]";

// An environment variable (or a key=value key) whose value is a secret: *_API_KEY, *APIKEY*,
// *TOKEN*, *SECRET*, *PASSWORD*, *PASSWD*, *CREDENTIAL*, *PRIVATE_KEY*, *ACCESS_KEY*
// (case-insensitive, '-' counts as '_').
bool looksLikeSecretName(std::string_view name);

class Redactor {
public:
    Redactor() = default;
    // Knows the values of this process's secret-looking environment variables.
    static Redactor fromEnvironment();

    // A value to replace wherever it appears (ignored when shorter than 6 bytes: too common to mean
    // anything, and replacing it would mangle the text).
    void addSecret(std::string value);

    // Known values, then what has the shape of a secret: sk-..., ghp_..., AKIA..., hf_...,
    // "Bearer <token>", `<secret-looking key>=<value>` or `: <value>` (quoted or not), PEM private keys.
    std::string redact(std::string_view text) const;

private:
    std::vector<std::string> m_values; // longest first
};

// Redactor::fromEnvironment().redact(text).
std::string redactSecrets(std::string_view text);

} // namespace kforge
