#include "worker/profile/ncu_profiler.h"

#include <algorithm>
#include <set>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "util/error.h"
#include "worker/cpu/cpu_compiler.h"

namespace kforge::worker {

namespace fs = std::filesystem;

std::string findNcu()
{
    if (const char *env = std::getenv("KFORGE_NCU"); env && *env)
        return env;
    std::string out;
    if (runCapture("command -v ncu", out) == 0 && !out.empty()) {
        while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
            out.pop_back();
        return out;
    }
    for (const char *p : {"/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/ncu"})
        if (fs::exists(p))
            return p;
    return {};
}

namespace {

std::vector<std::string> csvFields(const std::string &line)
{
    std::vector<std::string> out;
    std::string cur;
    bool quoted = false;
    for (char c : line) {
        if (c == '"')
            quoted = !quoted;
        else if (c == ',' && !quoted) {
            out.push_back(cur);
            cur.clear();
        } else
            cur.push_back(c);
    }
    out.push_back(cur);
    return out;
}

bool number(const std::string &s, double &v)
{
    std::string t;
    for (char c : s)
        if (c != ',')
            t.push_back(c);
    char *end = nullptr;
    v = std::strtod(t.c_str(), &end);
    return !t.empty() && end && *end == '\0';
}

std::string shellQuote(const std::string &s)
{
    std::string q = "'";
    for (char c : s)
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

} // namespace

nlohmann::json parseNcuRawCsv(const std::string &csv)
{
    std::vector<std::vector<std::string>> rows;
    std::istringstream in(csv);
    for (std::string line; std::getline(in, line);)
        if (!line.empty() && line.front() == '"')
            rows.push_back(csvFields(line));
    if (rows.size() < 3)
        throw Error("ncu profiled no kernel (its report has no data rows)");
    const auto &head = rows[0], &data = rows[2]; // rows[1] holds the units
    nlohmann::json metrics = nlohmann::json::object();
    std::string kernel;
    for (size_t i = 0; i < head.size() && i < data.size(); ++i) {
        double v = 0;
        if (head[i] == "Kernel Name")
            kernel = data[i];
        else if (number(data[i], v))
            metrics[head[i]] = v;
    }
    auto pick = [&](const char *name) { return metrics.contains(name) ? metrics[name] : nlohmann::json(); };
    // Stall reasons as the warp-state section reports them, largest first.
    std::vector<std::pair<double, std::string>> stalls;
    for (auto &[name, v] : metrics.items()) {
        const auto at = name.find("issue_stalled_");
        if (at == std::string::npos || name.find("not_issued") != std::string::npos)
            continue;
        if (name.find("_per_warp_active.pct") == std::string::npos && name.find("_per_issue_active.ratio") == std::string::npos)
            continue;
        std::string reason = name.substr(at + 14);
        reason = reason.substr(0, reason.find("_per_"));
        if (reason == "selected")
            continue;
        stalls.push_back({v.get<double>(), reason});
    }
    std::sort(stalls.begin(), stalls.end(), [](auto &a, auto &b) { return a.first > b.first; });
    nlohmann::json top = nlohmann::json::array();
    std::set<std::string> seen;
    for (auto &[v, r] : stalls)
        if (seen.insert(r).second && top.size() < 5)
            top.push_back({{"reason", r}, {"value", v}});
    nlohmann::json duration = pick("gpu__time_duration.sum");
    return {{"tool", "ncu"},
            {"kernel", kernel},
            {"memory_throughput_pct", pick("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed")},
            {"compute_throughput_pct", pick("sm__throughput.avg.pct_of_peak_sustained_elapsed")},
            {"achieved_occupancy_pct", pick("sm__warps_active.avg.pct_of_peak_sustained_active")},
            {"duration_us", duration.is_number() ? nlohmann::json(duration.get<double>() / 1000.0) : nlohmann::json()},
            {"top_stalls", top},
            {"metrics", metrics}};
}

nlohmann::json profileWithNcu(const std::string &ncu, const nlohmann::json &evaluateRequest,
                              const std::vector<std::string> &kernelNames, int timeoutSeconds)
{
    if (kernelNames.empty())
        throw Error("the candidate's launch plan names no kernel to profile");
    // POSIX calls, not std::filesystem: libtorch 2.x exports std::filesystem symbols of its own that
    // the worker (linked with exported symbols) can bind to, and its remove_all crashed there.
    char tmpl[] = "/tmp/kforge-ncu-XXXXXX";
    if (!::mkdtemp(tmpl))
        throw Error("cannot create a temporary folder for the ncu report");
    const fs::path dir = tmpl;
    const auto req = dir / "request.json", report = dir / "report.csv", verdict = dir / "verdict.json";
    {
        std::ofstream out(req);
        out << evaluateRequest.dump();
    }
    std::string names;
    for (const auto &k : kernelNames)
        names += (names.empty() ? "" : "|") + k;
    char selfBuf[4096] = {};
    const ssize_t selfLen = ::readlink("/proc/self/exe", selfBuf, sizeof selfBuf - 1);
    const std::string self = selfLen > 0 ? std::string(selfBuf, size_t(selfLen)) : std::string("kforge-worker");
    // The clocks are left as the card runs them (--clock-control none); one launch of the candidate's
    // first matching kernel is measured with the sections that give throughput, occupancy and stalls.
    const std::string cmd = "timeout " + std::to_string(timeoutSeconds) + " " + shellQuote(ncu)
                          + " --csv --page raw --clock-control none --launch-count 1 --kernel-name-base function"
                          + " --kernel-name " + shellQuote("regex:^(" + names + ")$")
                          + " --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats"
                          + " --log-file " + shellQuote(report.string()) + " " + shellQuote(self) + " --evaluate-once "
                          + shellQuote(req.string()) + " > " + shellQuote(verdict.string());
    std::string output;
    const int rc = runCapture(cmd, output);
    std::ifstream in(report);
    const std::string csv((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const auto &f : {req, report, verdict})
        ::unlink(f.c_str());
    ::rmdir(dir.c_str());
    if (rc != 0 && csv.find("\"ID\"") == std::string::npos)
        throw Error("ncu failed (status " + std::to_string(rc) + "): " + (output.size() > 600 ? output.substr(output.size() - 600) : output)
                    + (csv.size() > 600 ? csv.substr(csv.size() - 600) : csv));
    return parseNcuRawCsv(csv);
}

} // namespace kforge::worker
