#include "util/redact.h"

#include <algorithm>
#include <cctype>
#include <cstring>

extern char **environ;

namespace kforge {

namespace {

bool isWordChar(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

// Characters a token (an API key, a bearer token) is made of.
bool isTokenChar(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '~' || c == '+' || c == '/'
        || c == '=';
}

std::string upperKey(std::string_view s)
{
    std::string u(s);
    for (auto &c : u)
        c = c == '-' ? '_' : char(std::toupper(static_cast<unsigned char>(c)));
    return u;
}

bool startsWithAt(std::string_view text, size_t at, std::string_view prefix, bool caseInsensitive = false)
{
    if (at + prefix.size() > text.size())
        return false;
    for (size_t k = 0; k < prefix.size(); ++k) {
        const char a = text[at + k], b = prefix[k];
        if (caseInsensitive ? std::tolower(static_cast<unsigned char>(a)) != std::tolower(static_cast<unsigned char>(b)) : a != b)
            return false;
    }
    return true;
}

// Provider key prefixes, each followed by at least this many token characters.
struct KeyShape {
    const char *prefix;
    size_t minRest;
};
constexpr KeyShape kKeyShapes[] = {
    {"sk-", 8},  {"ghp_", 16}, {"gho_", 16}, {"ghu_", 16}, {"ghs_", 16}, {"github_pat_", 16},
    {"xoxb-", 8}, {"xoxp-", 8}, {"AKIA", 16}, {"AIza", 20}, {"hf_", 16},  {"glpat-", 16},
};

// Pass 1 and 2 on one string: the known values, then token shapes and bearer tokens.
std::string redactTokens(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    size_t i = 0;
    while (i < text.size()) {
        const bool boundary = i == 0 || !isWordChar(text[i - 1]);
        if (boundary) {
            bool matched = false;
            for (const auto &k : kKeyShapes) {
                if (!startsWithAt(text, i, k.prefix))
                    continue;
                size_t j = i + std::strlen(k.prefix);
                while (j < text.size() && isTokenChar(text[j]))
                    ++j;
                if (j - i - std::strlen(k.prefix) >= k.minRest) {
                    out += kRedacted;
                    i = j;
                    matched = true;
                    break;
                }
            }
            if (matched)
                continue;
            if (startsWithAt(text, i, "bearer", true) && i + 6 < text.size() && (text[i + 6] == ' ' || text[i + 6] == '\t')) {
                size_t j = i + 6;
                while (j < text.size() && (text[j] == ' ' || text[j] == '\t'))
                    ++j;
                size_t k = j;
                while (k < text.size() && isTokenChar(text[k]))
                    ++k;
                if (k > j) {
                    out.append(text.substr(i, j - i));
                    out += kRedacted;
                    i = k;
                    continue;
                }
            }
        }
        out += text[i++];
    }
    return out;
}

// Pass 3: `key=value`, `key: value`, `"key": "value"` where the key looks like a secret's name.
std::string redactAssignments(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    size_t copied = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '=' && text[i] != ':')
            continue;
        // The key: a word just before, perhaps closed by a quote.
        size_t end = i;
        if (end > 0 && (text[end - 1] == '"' || text[end - 1] == '\''))
            --end;
        size_t begin = end;
        while (begin > 0 && isWordChar(text[begin - 1]))
            --begin;
        if (begin == end || !looksLikeSecretName(text.substr(begin, end - begin)))
            continue;
        size_t v = i + 1;
        while (v < text.size() && (text[v] == ' ' || text[v] == '\t'))
            ++v;
        char quote = 0;
        if (v < text.size() && (text[v] == '"' || text[v] == '\''))
            quote = text[v++];
        size_t e = v;
        if (quote)
            while (e < text.size() && text[e] != quote && text[e] != '\n')
                ++e;
        else
            while (e < text.size() && !std::isspace(static_cast<unsigned char>(text[e])) && text[e] != ',' && text[e] != ';'
                   && text[e] != '&' && text[e] != ')' && text[e] != '}' && text[e] != ']' && text[e] != '"' && text[e] != '\'')
                ++e;
        if (e == v || text.substr(v).starts_with(kRedacted))
            continue;
        out.append(text.substr(copied, v - copied));
        out += kRedacted;
        copied = e;
        i = e > 0 ? e - 1 : e;
    }
    out.append(text.substr(copied));
    return out;
}

// Pass 4: PEM private key blocks.
std::string redactPem(std::string text)
{
    for (size_t at = 0; (at = text.find("-----BEGIN", at)) != std::string::npos;) {
        const auto lineEnd = text.find("-----", at + 10);
        if (lineEnd == std::string::npos)
            break;
        if (text.substr(at, lineEnd - at).find("PRIVATE KEY") == std::string::npos) {
            at = lineEnd;
            continue;
        }
        auto stop = text.find("-----END", lineEnd + 5);
        stop = stop == std::string::npos ? text.size() : text.find("-----", stop + 8);
        stop = stop == std::string::npos ? text.size() : stop + 5;
        text.replace(at, stop - at, std::string("[redacted private key]"));
        at += 22;
    }
    return text;
}

} // namespace

bool looksLikeSecretName(std::string_view name)
{
    const auto u = upperKey(name);
    if (u.size() >= 7 && u.compare(u.size() - 7, 7, "API_KEY") == 0)
        return true;
    for (const char *part : {"APIKEY", "API_KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE_KEY", "ACCESS_KEY"})
        if (u.find(part) != std::string::npos)
            return true;
    return false;
}

Redactor Redactor::fromEnvironment()
{
    Redactor r;
    for (char **e = environ; e && *e; ++e) {
        const char *eq = std::strchr(*e, '=');
        if (!eq)
            continue;
        if (looksLikeSecretName(std::string_view(*e, size_t(eq - *e))))
            r.addSecret(eq + 1);
    }
    return r;
}

void Redactor::addSecret(std::string value)
{
    if (value.size() < 6 || std::find(m_values.begin(), m_values.end(), value) != m_values.end())
        return;
    m_values.push_back(std::move(value));
    std::stable_sort(m_values.begin(), m_values.end(), [](const auto &a, const auto &b) { return a.size() > b.size(); });
}

std::string Redactor::redact(std::string_view text) const
{
    std::string s(text);
    for (const auto &v : m_values)
        for (size_t at = 0; (at = s.find(v, at)) != std::string::npos;) {
            s.replace(at, v.size(), kRedacted);
            at += std::strlen(kRedacted);
        }
    return redactPem(redactAssignments(redactTokens(s)));
}

std::string redactSecrets(std::string_view text)
{
    return Redactor::fromEnvironment().redact(text);
}

} // namespace kforge
