#include "protocol/ptxas_log.h"

#include <algorithm>
#include <regex>
#include <sstream>

namespace kforge {

std::vector<KernelResources> parsePtxasLog(const std::string &log, int64_t *globalBytes)
{
    static const std::regex entryRe(R"(Compiling entry function '([^']+)')");
    static const std::regex propsRe(R"(Function properties for (\S+))");
    static const std::regex frameRe(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
    static const std::regex usedRe(R"(Used (\d+) registers)");
    static const std::regex barRe(R"(used (\d+) barriers)");
    static const std::regex smemRe(R"((\d+) bytes smem)");
    static const std::regex cmemRe(R"((\d+) bytes cmem\[0\])");
    static const std::regex gmemRe(R"((\d+) bytes gmem)");
    std::vector<KernelResources> out;
    std::string props; // the function the next stack-frame line belongs to
    std::istringstream in(log);
    std::smatch m;
    auto entry = [&](const std::string &name) -> KernelResources & {
        for (auto &k : out)
            if (k.name == name)
                return k;
        out.push_back({});
        out.back().name = name;
        return out.back();
    };
    std::string current;
    for (std::string line; std::getline(in, line);) {
        if (line.find("ptxas") == std::string::npos)
            continue; // only ptxas's own lines: a compiler note quoting "Used 12 registers" is not one
        if (std::regex_search(line, m, gmemRe) && globalBytes)
            *globalBytes += std::stoll(m[1]);
        if (std::regex_search(line, m, entryRe)) {
            current = m[1];
            entry(current);
        } else if (std::regex_search(line, m, propsRe)) {
            props = m[1];
        } else if (std::regex_search(line, m, frameRe)) {
            for (auto &k : out)
                if (k.name == props) {
                    k.stackBytes = std::stoll(m[1]);
                    k.spillStores = std::stoll(m[2]);
                    k.spillLoads = std::stoll(m[3]);
                }
        } else if (std::regex_search(line, m, usedRe) && !current.empty()) {
            auto &k = entry(current);
            k.registers = std::stoi(m[1]);
            if (std::regex_search(line, m, barRe))
                k.barriers = std::stoi(m[1]);
            if (std::regex_search(line, m, smemRe))
                k.sharedBytes = std::stoll(m[1]);
            if (std::regex_search(line, m, cmemRe))
                k.constBytes = std::stoll(m[1]);
        }
    }
    return out;
}

std::optional<PtxasSummary> summarizePtxasLog(const std::string &log)
{
    const auto kernels = parsePtxasLog(log);
    if (kernels.empty())
        return std::nullopt;
    PtxasSummary s;
    for (const auto &k : kernels) {
        ++s.kernels;
        s.registers = std::max(s.registers, k.registers);
        s.sharedBytes = std::max(s.sharedBytes, k.sharedBytes);
        s.spillBytes += k.spillStores + k.spillLoads;
    }
    return s;
}

} // namespace kforge
