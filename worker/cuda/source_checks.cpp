#include "worker/cuda/source_checks.h"

#include <cctype>
#include <regex>
#include <sstream>

namespace kforge::worker {

namespace {

// Comments and string/char literals replaced by spaces (newlines kept), so the checks see only code
// and line numbers stay right.
std::string stripCommentsAndStrings(const std::string &s)
{
    std::string out = s;
    enum { Code, Line, Block, Str, Chr } st = Code;
    for (size_t i = 0; i < s.size(); ++i) {
        const char c = s[i], n = i + 1 < s.size() ? s[i + 1] : '\0';
        switch (st) {
        case Code:
            if (c == '/' && n == '/') {
                st = Line;
                out[i] = ' ';
            } else if (c == '/' && n == '*') {
                st = Block;
                out[i] = ' ';
                out[++i] = ' ';
            } else if (c == '"') {
                st = Str;
            } else if (c == '\'') {
                st = Chr;
            }
            break;
        case Line:
            if (c == '\n')
                st = Code;
            else
                out[i] = ' ';
            break;
        case Block:
            if (c == '*' && n == '/') {
                out[i] = ' ';
                out[++i] = ' ';
                st = Code;
            } else if (c != '\n')
                out[i] = ' ';
            break;
        case Str:
        case Chr:
            if (c == '\\' && i + 1 < s.size()) {
                out[i] = ' ';
                if (s[i + 1] != '\n')
                    out[++i] = ' ';
            } else if ((st == Str && c == '"') || (st == Chr && c == '\'')) {
                st = Code;
            } else if (c != '\n')
                out[i] = ' ';
            break;
        }
    }
    return out;
}

struct Token {
    std::string text;
    int line;
};

// Identifiers, numbers and single punctuation characters; preprocessor lines are skipped except that
// their text is still searched by the regex checks.
std::vector<Token> tokenize(const std::string &code)
{
    std::vector<Token> toks;
    int line = 1;
    bool lineStart = true;
    for (size_t i = 0; i < code.size();) {
        const char c = code[i];
        if (c == '\n') {
            ++line;
            lineStart = true;
            ++i;
            continue;
        }
        if (std::isspace(static_cast<unsigned char>(c))) {
            ++i;
            continue;
        }
        if (lineStart && c == '#') { // a directive, with its continuation lines
            while (i < code.size() && !(code[i] == '\n' && code[i - 1] != '\\')) {
                if (code[i] == '\n')
                    ++line;
                ++i;
            }
            continue;
        }
        lineStart = false;
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
            size_t j = i;
            while (j < code.size() && (std::isalnum(static_cast<unsigned char>(code[j])) || code[j] == '_'))
                ++j;
            toks.push_back({code.substr(i, j - i), line});
            i = j;
            continue;
        }
        toks.push_back({std::string(1, c), line});
        ++i;
    }
    return toks;
}

int lineOf(const std::string &s, size_t pos)
{
    int line = 1;
    for (size_t i = 0; i < pos && i < s.size(); ++i)
        line += s[i] == '\n';
    return line;
}

void regexFindings(const std::string &code, const std::regex &re, const char *check, const std::string &what,
                   std::vector<StaticFinding> &out)
{
    for (auto it = std::sregex_iterator(code.begin(), code.end(), re); it != std::sregex_iterator(); ++it)
        out.push_back({check, lineOf(code, size_t(it->position())), what + " '" + it->str() + "'"});
}

bool has(const std::vector<Token> &toks, size_t from, size_t to, const char *word)
{
    for (size_t i = from; i < to; ++i)
        if (toks[i].text == word)
            return true;
    return false;
}

// A declaration from toks[from] up to its end: the index of the first `;`, `=`, `{`, `[` or `(` (and
// which one), skipping template argument lists.
size_t declEnd(const std::vector<Token> &toks, size_t from)
{
    int angle = 0;
    for (size_t i = from; i < toks.size(); ++i) {
        const auto &t = toks[i].text;
        if (t == "<")
            ++angle;
        else if (t == ">" && angle > 0)
            --angle;
        else if (angle == 0 && (t == ";" || t == "=" || t == "{" || t == "[" || t == "(" || t == ","))
            return i;
    }
    return toks.size();
}

// Mutable when not const, or const only through a pointer (`const float *p` can be pointed elsewhere).
bool isMutable(const std::vector<Token> &toks, size_t from, size_t to)
{
    if (has(toks, from, to, "constexpr") || has(toks, from, to, "__constant__"))
        return false;
    size_t lastStar = from, constAt = to;
    bool star = false;
    for (size_t i = from; i < to; ++i) {
        if (toks[i].text == "*") {
            lastStar = i;
            star = true;
        }
        if (toks[i].text == "const")
            constAt = i;
    }
    if (constAt == to)
        return true;
    return star && constAt < lastStar;
}

std::string nameBefore(const std::vector<Token> &toks, size_t end)
{
    for (size_t i = end; i-- > 0;)
        if (std::isalpha(static_cast<unsigned char>(toks[i].text[0])) || toks[i].text[0] == '_')
            return toks[i].text;
    return "?";
}

} // namespace

SourceScan scanSource(const std::string &source)
{
    SourceScan scan;
    const std::string code = stripCommentsAndStrings(source);
    static const std::regex launch(R"(<<<|\bcuda(Launch\w*|GraphLaunch|GetParameterBuffer\w*)\b)");
    static const std::regex clockRe(R"(\b(clock|clock64)\s*\(|%(globaltimer\w*|clock\w*)|\b__globaltimer\b)");
    regexFindings(code, launch, "device_launch",
                  "launches a kernel from device code (no host code runs for CUDA candidates; launches belong in the launch plan):", scan.findings);
    regexFindings(code, clockRe, "clock_read", "reads a clock or timer (a kernel must not behave differently when timed):", scan.findings);

    // Namespace-scope `__device__`/`__managed__` variables and `static` locals, by scope tracking:
    // braces that open a namespace or an extern "C" block keep namespace scope.
    const auto toks = tokenize(code);
    std::vector<bool> nsScope; // per open brace: does it keep namespace scope
    auto atNamespaceScope = [&] {
        for (bool b : nsScope)
            if (!b)
                return false;
        return true;
    };
    size_t stmtStart = 0;
    for (size_t i = 0; i < toks.size(); ++i) {
        const auto &t = toks[i].text;
        if (t == "{") {
            // `namespace [a::b] {` or `extern "C" {` (the string's letters became spaces: extern " " {)
            bool ns = i >= 3 && toks[i - 3].text == "extern" && toks[i - 2].text == "\"" && toks[i - 1].text == "\"";
            for (size_t j = i; j-- > 0 && !ns;) {
                const auto &p = toks[j].text;
                if (p == "namespace")
                    ns = true;
                else if (!(p == ":" || std::isalpha(static_cast<unsigned char>(p[0])) || p[0] == '_'))
                    break;
            }
            nsScope.push_back(ns);
            stmtStart = i + 1;
            continue;
        }
        if (t == "}") {
            if (!nsScope.empty())
                nsScope.pop_back();
            stmtStart = i + 1;
            continue;
        }
        if (t == ";") {
            stmtStart = i + 1;
            continue;
        }
        const bool nsLevel = atNamespaceScope();
        if (nsLevel && (t == "__device__" || t == "__managed__")) {
            const size_t end = declEnd(toks, i);
            if (end >= toks.size() || toks[end].text == "(")
                continue; // a function
            if (has(toks, stmtStart, end, "__shared__") || has(toks, stmtStart, end, "__global__"))
                continue;
            const std::string name = nameBefore(toks, end);
            if (t == "__managed__" || isMutable(toks, stmtStart, end))
                scan.findings.push_back({"device_global", toks[i].line,
                                         "declares a mutable " + t + " variable '" + name
                                             + "' that keeps its value across launches (use a workspace from the launch plan, or make it const)"});
            else
                scan.constGlobals.insert(name);
            // Skip to the end of this declaration so a following `__device__` in it is not seen twice.
            while (i + 1 < toks.size() && toks[i + 1].text != ";")
                ++i;
        } else if (!nsLevel && t == "static") {
            const size_t end = declEnd(toks, i);
            if (end >= toks.size() || toks[end].text == "(")
                continue;
            if (has(toks, i, end, "__shared__") || !isMutable(toks, i, end))
                continue;
            scan.findings.push_back({"device_global", toks[i].line,
                                     "declares a static local variable '" + nameBefore(toks, end)
                                         + "' in device code; it lives in global memory and keeps its value across launches"});
        }
    }
    return scan;
}

std::vector<StaticFinding> scanPtx(const std::string &ptx, const std::set<std::string> &constGlobals)
{
    std::vector<StaticFinding> out;
    std::istringstream in(ptx);
    static const std::regex clockRe(R"(%(globaltimer\w*|clock\w*))");
    static const std::regex launchRe(R"(\b(cudaLaunchDevice\w*|cudaGetParameterBuffer\w*|cudaGraphLaunch\w*)\b)");
    // Module-scope variables in global memory: `.global .align 4 .u32 name;` or `.visible .global ...`.
    static const std::regex globalRe(R"(^\s*(\.visible\s+|\.weak\s+)?\.global\s+(\.align\s+\d+\s+)?\.\w+\s+([A-Za-z_$][\w$]*))");
    int depth = 0;
    std::smatch m;
    for (std::string line; std::getline(in, line);) {
        const auto comment = line.find("//");
        if (comment != std::string::npos)
            line.resize(comment);
        if (std::regex_search(line, m, clockRe))
            out.push_back({"clock_read", 0, "the compiled code reads '" + m.str() + "'"});
        if (std::regex_search(line, m, launchRe))
            out.push_back({"device_launch", 0, "the compiled code calls '" + m.str() + "' (a launch from device code)"});
        if (depth == 0 && std::regex_search(line, m, globalRe)) {
            const std::string name = m[3].str();
            bool allowed = false;
            for (const auto &c : constGlobals) // C++ names may be mangled: _ZN2ns4nameE contains "4name"
                allowed = allowed || name == c || name.find(std::to_string(c.size()) + c) != std::string::npos;
            if (!allowed)
                out.push_back({"device_global", 0, "the compiled code has a variable '" + name
                                                        + "' in global memory that keeps its value across launches"});
        }
        for (char c : line)
            depth += c == '{' ? 1 : c == '}' ? -1 : 0;
    }
    return out;
}

std::string describeFindings(const std::vector<StaticFinding> &findings)
{
    std::string s;
    for (const auto &f : findings)
        s += (s.empty() ? "" : "\n") + (f.line > 0 ? "line " + std::to_string(f.line) + ": " : std::string("PTX: ")) + f.check + ": "
           + f.message;
    return s;
}

} // namespace kforge::worker
