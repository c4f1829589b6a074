#include "protocol/verdict.h"

#include <cstdio>
#include <limits>

#include "util/error.h"

namespace kforge {

namespace {
// A number field of a verdict: `def` where absent, and infinity where null, which is how JSON carries
// the non-finite errors of a kernel whose output overflowed (it has no NaN or infinity, and
// nlohmann_json writes them as null). Anything else that is not a number is malformed and throws.
double numberOr(const nlohmann::json &j, const char *key, double def)
{
    const auto it = j.find(key);
    if (it == j.end())
        return def;
    if (it->is_null())
        return std::numeric_limits<double>::infinity();
    return it->get<double>();
}

const std::pair<VerdictStatus, const char *> kStatusNames[] = {
    {VerdictStatus::Accepted, "accepted"},     {VerdictStatus::NotFaster, "not_faster"},
    {VerdictStatus::CompileError, "compile_error"}, {VerdictStatus::Incorrect, "incorrect"},
    {VerdictStatus::Suspect, "suspect"},       {VerdictStatus::Crashed, "crashed"},
    {VerdictStatus::Timeout, "timeout"},       {VerdictStatus::Error, "error"},
};
}

std::string statusName(VerdictStatus s)
{
    for (auto &[k, n] : kStatusNames)
        if (k == s)
            return n;
    return "error";
}

VerdictStatus statusFromName(const std::string &s)
{
    for (auto &[k, n] : kStatusNames)
        if (s == n)
            return k;
    throw Error("unknown verdict status '" + s + "'");
}

bool statusIsFailure(VerdictStatus s)
{
    return s == VerdictStatus::CompileError || s == VerdictStatus::Incorrect || s == VerdictStatus::Suspect
        || s == VerdictStatus::Crashed || s == VerdictStatus::Timeout || s == VerdictStatus::Error;
}

bool Verdict::correct() const
{
    return status == VerdictStatus::Accepted || status == VerdictStatus::NotFaster;
}

std::string Verdict::summaryLine() const
{
    char buf[160];
    if (correct())
        std::snprintf(buf, sizeof buf, "%s: %.3fx (%.1f us vs %.1f us, noise %.1f%%)", statusName(status).c_str(),
                      speedup, candidate.summary.median, baseline.summary.median, noise * 100);
    else
        std::snprintf(buf, sizeof buf, "%s: %s", statusName(status).c_str(),
                      reasons.empty() ? "" : reasons.front().message.substr(0, 120).c_str());
    return buf;
}

void to_json(nlohmann::json &j, const TimingReport &t)
{
    j = {{"samples_us", t.samplesUs},
         {"median_us", t.summary.median},
         {"p25_us", t.summary.p25},
         {"p75_us", t.summary.p75},
         {"min_us", t.summary.min},
         {"max_us", t.summary.max}};
}

void from_json(const nlohmann::json &j, TimingReport &t)
{
    t.samplesUs = j.value("samples_us", std::vector<double>{});
    t.summary = summarize(t.samplesUs);
}

void to_json(nlohmann::json &j, const Verdict &v)
{
    nlohmann::json reasons = nlohmann::json::array(), trials = nlohmann::json::array();
    for (const auto &r : v.reasons)
        reasons.push_back({{"code", r.code}, {"message", r.message}});
    for (const auto &t : v.trials)
        trials.push_back({{"label", t.label},
                          {"shape", t.shape},
                          {"passed", t.passed},
                          {"max_abs_error", t.maxAbsError},
                          {"max_rel_error", t.maxRelError},
                          {"failure", t.failure},
                          {"detail", t.detail},
                          {"candidate_error", t.candidateError},
                          {"aten_error", t.atenError},
                          {"allowed_error", t.allowedError}});
    j = {{"status", statusName(v.status)},
         {"compiled", v.compile.ok},
         {"correct", v.correct()},
         {"reasons", reasons},
         {"compile",
          {{"ok", v.compile.ok},
           {"cached", v.compile.cached},
           {"millis", v.compile.millis},
           {"log", v.compile.log},
           {"target", v.compile.target},
           {"ahead_wait_ms", v.compile.aheadWaitMs}}},
         {"trials", trials},
         {"candidate", v.candidate},
         {"baseline", v.baseline},
         {"speedup", v.speedup},
         {"noise", v.noise},
         {"roofline_us", v.rooflineUs},
         {"worker", v.worker},
         {"device", v.device},
         {"notes", v.notes}};
}

void from_json(const nlohmann::json &j, Verdict &v)
{
    v.status = statusFromName(j.at("status").get<std::string>());
    v.reasons.clear();
    for (const auto &r : j.value("reasons", nlohmann::json::array()))
        v.reasons.push_back({r.value("code", ""), r.value("message", "")});
    if (j.contains("compile")) {
        const auto &c = j["compile"];
        v.compile = {c.value("ok", false), c.value("cached", false), c.value("millis", 0.0), c.value("log", ""),
                     c.value("target", ""), c.value("ahead_wait_ms", -1.0)};
    }
    v.trials.clear();
    for (const auto &t : j.value("trials", nlohmann::json::array()))
        v.trials.push_back({t.value("label", ""), t.value("shape", ""), t.value("passed", false),
                            numberOr(t, "max_abs_error", 0.0), numberOr(t, "max_rel_error", 0.0), t.value("failure", ""),
                            t.value("detail", ""), numberOr(t, "candidate_error", 0.0), numberOr(t, "aten_error", 0.0),
                            numberOr(t, "allowed_error", 0.0)});
    if (j.contains("candidate"))
        v.candidate = j["candidate"].get<TimingReport>();
    if (j.contains("baseline"))
        v.baseline = j["baseline"].get<TimingReport>();
    v.speedup = numberOr(j, "speedup", 0.0);
    v.noise = numberOr(j, "noise", 0.0);
    v.rooflineUs = numberOr(j, "roofline_us", 0.0);
    v.worker = j.value("worker", "");
    v.device = j.value("device", "");
    v.notes = j.value("notes", std::vector<std::string>{});
}

Verdict failureVerdict(VerdictStatus status, const std::string &code, const std::string &message)
{
    Verdict v;
    v.status = status;
    v.reasons.push_back({code, message});
    return v;
}

} // namespace kforge
