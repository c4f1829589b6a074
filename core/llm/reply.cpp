#include "llm/reply.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "ops/launch_comment.h"
#include "util/error.h"

namespace kforge::llm {

namespace {

struct Block {
    std::string lang;
    std::string code;
    bool closed = false;
};

std::string trim(std::string_view s)
{
    size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b])))
        ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])))
        --e;
    return std::string(s.substr(b, e - b));
}

std::string lower(std::string s)
{
    for (auto &c : s)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// Fenced blocks (``` or ~~~, three or more) and the prose lines outside them.
void split(std::string_view text, std::vector<Block> &blocks, std::vector<std::string> &prose)
{
    Block *open = nullptr;
    std::string fence;
    size_t pos = 0;
    while (pos <= text.size()) {
        const auto nl = text.find('\n', pos);
        const auto line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        const auto t = trim(line);
        if (!open) {
            if (t.rfind("```", 0) == 0 || t.rfind("~~~", 0) == 0) {
                size_t n = 0;
                while (n < t.size() && t[n] == t[0])
                    ++n;
                fence = t.substr(0, n);
                blocks.push_back({lower(trim(t.substr(n))), {}, false});
                open = &blocks.back();
            } else if (!t.empty()) {
                prose.push_back(t);
            }
        } else if (t.rfind(fence, 0) == 0 && trim(t.substr(fence.size())).empty()) {
            open->closed = true;
            open = nullptr;
        } else {
            open->code.append(line);
            open->code += '\n';
        }
        if (nl == std::string_view::npos)
            break;
        pos = nl + 1;
    }
}

bool isCodeLang(const std::string &l)
{
    // "```cpp title=x.cpp" and the like: the first word names the language.
    const auto w = l.substr(0, l.find_first_of(" \t{"));
    return w.empty() || w == "cpp" || w == "c++" || w == "cxx" || w == "cc" || w == "c" || w == "cuda" || w == "cu" || w == "h" || w == "hpp";
}

} // namespace

ParsedReply parseReply(std::string_view text, const std::string &backend)
{
    ParsedReply r;
    r.candidate.backend = backend;
    std::vector<Block> blocks;
    std::vector<std::string> prose;
    split(text, blocks, prose);

    for (const auto &p : prose)
        if (lower(p).rfind("change:", 0) == 0) {
            r.rationale = trim(p.substr(7));
            break;
        }
    if (r.rationale.empty() && !prose.empty())
        r.rationale = prose.front();
    if (r.rationale.size() > 240)
        r.rationale = r.rationale.substr(0, 237) + "...";

    const std::string marker = backend == "cuda" ? "__global__" : "kforge_entry";
    const Block *code = nullptr;
    bool sawUnclosed = false;
    for (const auto &b : blocks) {
        if (!b.closed) {
            sawUnclosed = true;
            continue;
        }
        if (!isCodeLang(b.lang) || trim(b.code).empty())
            continue;
        const bool hasMarker = b.code.find(marker) != std::string::npos;
        const bool bestHasMarker = code && code->code.find(marker) != std::string::npos;
        if (!code || (hasMarker && !bestHasMarker) || (hasMarker == bestHasMarker && b.code.size() > code->code.size()))
            code = &b;
    }
    if (!code) {
        r.failure = "no_code";
        r.message = sawUnclosed ? "the reply's code block is not closed (was the reply cut off?)"
                                : "the reply has no fenced code block (```cpp ... ```) holding the candidate";
        return r;
    }
    if (code->code.find(marker) == std::string::npos) {
        r.failure = "no_entry_point";
        r.message = backend == "cuda" ? "the reply's code defines no __global__ kernel"
                                      : "the reply's code does not define extern \"C\" int kforge_entry(...)";
        return r;
    }
    r.candidate.source = code->code;
    if (backend == "cuda") {
        try {
            if (auto plan = launchPlanFromComment(r.candidate.source)) {
                r.candidate.launch = std::move(*plan);
            } else {
                for (const auto &b : blocks) {
                    if (!b.closed || b.lang.rfind("json", 0) != 0)
                        continue;
                    auto j = nlohmann::json::parse(b.code, nullptr, false);
                    if (j.is_object() && j.contains("kernels")) {
                        r.candidate.launch = std::move(j);
                        break;
                    }
                }
            }
        } catch (const Error &e) {
            r.failure = "bad_launch_plan";
            r.message = std::string("the kforge-launch comment is unusable: ") + e.what();
            return r;
        }
        if (r.candidate.launch.empty()) {
            r.failure = "no_launch_plan";
            r.message = "the reply gives no launch plan: put /* kforge-launch {\"kernels\":[...]} */ in the source or a ```json block";
            return r;
        }
    }
    r.ok = true;
    return r;
}

} // namespace kforge::llm
