#include "worker/cuda/source_checks.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <unistd.h>

#include "util/paths.h"

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

// A candidate is one file: it may include the toolkit's device headers and nothing else, so no
// include can read a file of the worker's host into the compile log.
void includeFindings(const std::string &source, std::vector<StaticFinding> &out)
{
    static const std::regex includeRe(R"(^[ \t]*#[ \t]*include[ \t]*(.*)$)");
    static const std::regex allowed(
        R"(^<(cuda_(fp16|bf16|fp8|pipeline|pipeline_primitives|awbarrier)\.h|cooperative_groups(\.h|/[a-z_]+\.h)|mma\.h|cuda/(barrier|pipeline|ptx|std/[a-z_]+))>$)");
    std::istringstream in(source);
    int line = 0;
    for (std::string text; std::getline(in, text);) {
        ++line;
        std::smatch m;
        if (!std::regex_match(text, m, includeRe))
            continue;
        std::string target = m[1].str();
        while (!target.empty() && (target.back() == ' ' || target.back() == '\t' || target.back() == '\r'))
            target.pop_back();
        if (!std::regex_match(target, allowed))
            out.push_back({"include", line, "includes " + target.substr(0, 120)
                                                + "; a candidate may include only the toolkit's device headers (cuda_fp16.h, cuda_bf16.h, "
                                                  "cuda_pipeline.h, cooperative_groups.h, mma.h, cuda/barrier, ...)"});
    }
}

SourceScan scanSource(const std::string &source)
{
    SourceScan scan;
    const std::string code = stripCommentsAndStrings(source);
    static const std::regex launch(R"(<<<|\bcuda(Launch\w*|GraphLaunch|GetParameterBuffer\w*)\b)");
    static const std::regex clockRe(R"(\b(clock|clock64)\s*\(|%(globaltimer\w*|clock\w*)|\b__globaltimer\b)");
    regexFindings(code, launch, "device_launch",
                  "launches a kernel from device code (no host code runs for CUDA candidates; launches belong in the launch plan):", scan.findings);
    regexFindings(code, clockRe, "clock_read", "reads a clock or timer (a kernel must not behave differently when timed):", scan.findings);
    includeFindings(source, scan.findings);

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
                                             + "' that keeps its value across launches (use a workspace from the launch plan)"});
            else // a const __device__ variable is global memory all the same: a cast writes it
                scan.findings.push_back({"device_global", toks[i].line,
                                         "declares a __device__ variable '" + name
                                             + "' in global memory, where even a const one can be written through a cast and keep its value "
                                               "across launches (put read-only tables in __constant__ memory)"});
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

std::vector<StaticFinding> scanPtx(const std::string &ptx)
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
            out.push_back({"device_global", 0, "the compiled code has a variable '" + m[3].str()
                                                    + "' in global memory, which keeps its value across launches"});
        }
        for (char c : line)
            depth += c == '{' ? 1 : c == '}' ? -1 : 0;
    }
    return out;
}

std::string expandMacros(const std::string &source, std::string *why)
{
    // The candidate's own #include lines are left out (the toolkit's headers are not the candidate's
    // macros, and an include is checked on its own); line breaks are kept.
    std::string text;
    std::istringstream in(source);
    static const std::regex includeRe(R"(^[ \t]*#[ \t]*include\b.*$)");
    for (std::string line; std::getline(in, line);)
        text += (std::regex_match(line, includeRe) ? std::string() : line) + "\n";
    char dir[] = "/tmp/kforge-cpp-XXXXXX";
    if (!::mkdtemp(dir)) {
        if (why)
            *why = "no private temporary folder for the preprocessor";
        return {};
    }
    const std::string file = std::string(dir) + "/candidate.cu";
    std::ofstream(file) << text;
    // Bounded in time and size: a macro can expand exponentially.
    const std::string cmd = "timeout 10 c++ -E -P -undef -w -x c++ '" + file + "' 2>/dev/null | head -c 33554432";
    std::string out;
    if (FILE *p = ::popen(cmd.c_str(), "r")) {
        char buf[65536];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
            out.append(buf, n);
        ::pclose(p);
    }
    removeTree(dir);
    if (out.empty() && why)
        *why = "the host preprocessor (c++ -E) gave nothing";
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
