#include "workload/fastp.h"

#include <cstdio>

namespace kforge {

namespace {

using J = nlohmann::json;

std::string fixed(double v, int digits = 3)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string pipes(std::string s) // a Markdown table cell
{
    for (size_t at = s.find('|'); at != std::string::npos; at = s.find('|', at + 2))
        s.replace(at, 1, "\\|");
    for (auto &ch : s)
        if (ch == '\n')
            ch = ' ';
    return s;
}

bool fast(bool correct, double speedup, double p)
{
    return correct && (p == 0 || speedup > p);
}

} // namespace

std::optional<double> FastpRow::speedupCompile() const
{
    if (!compileRatio || *compileRatio <= 0)
        return std::nullopt;
    return speedupEager / *compileRatio;
}

double fastP(const std::vector<FastpRow> &rows, double p)
{
    if (rows.empty())
        return 0;
    int n = 0;
    for (const auto &r : rows)
        n += fast(r.correct, r.speedupEager, p);
    return double(n) / double(rows.size());
}

std::optional<double> fastPOverCompile(const std::vector<FastpRow> &rows, double p)
{
    int measured = 0, n = 0;
    for (const auto &r : rows)
        if (const auto s = r.speedupCompile()) {
            ++measured;
            n += fast(r.correct, *s, p);
        }
    if (!measured)
        return std::nullopt;
    return double(n) / double(measured);
}

FastpSummary summarize(const std::vector<FastpRow> &rows)
{
    FastpSummary s;
    s.problems = int(rows.size());
    s.fast0 = fastP(rows, 0);
    s.fast1 = fastP(rows, 1);
    s.fast15 = fastP(rows, 1.5);
    for (const auto &r : rows)
        s.compileProblems += r.speedupCompile().has_value();
    s.compileFast0 = fastPOverCompile(rows, 0);
    s.compileFast1 = fastPOverCompile(rows, 1);
    s.compileFast15 = fastPOverCompile(rows, 1.5);
    return s;
}

J fastpJson(const FastpRun &run)
{
    const auto s = summarize(run.rows);
    J rows = J::array();
    for (const auto &r : run.rows) {
        J j = {{"problem", r.problem}, {"workload", r.workload}, {"cards_searched", r.cardsSearched}, {"nodes", r.nodes},
               {"correct", r.correct}, {"accepted", r.accepted}, {"speedup_eager", r.speedupEager}, {"best_card", r.bestCard},
               {"best_template", r.bestTemplate}, {"best_node", r.bestNode}, {"note", r.note}};
        j["compile_ratio"] = r.compileRatio ? J(*r.compileRatio) : J();
        const auto sc = r.speedupCompile();
        j["speedup_compile"] = sc ? J(*sc) : J();
        rows.push_back(j);
    }
    J compile;
    if (s.compileProblems)
        compile = {{"available", true}, {"problems", s.compileProblems}, {"fast_0", *s.compileFast0}, {"fast_1", *s.compileFast1},
                   {"fast_1.5", *s.compileFast15}};
    else
        compile = {{"available", false}, {"why", run.compileNote.empty() ? "no problem was measured with torch.compile" : run.compileNote}};
    return {{"kforge_fastp", 1}, {"backend", run.backend}, {"nodes", run.nodes}, {"problems", rows},
            {"fast_p", {{"problems", s.problems}, {"eager", {{"fast_0", s.fast0}, {"fast_1", s.fast1}, {"fast_1.5", s.fast15}}},
                        {"compile", compile}}}};
}

std::string fastpMarkdown(const FastpRun &run)
{
    const auto s = summarize(run.rows);
    std::string md = "# fast_p report\n\n";
    md += "Backend " + run.backend + ", " + std::to_string(run.nodes) + " nodes per card, " + std::to_string(s.problems)
          + " problems. Speedup over eager is the problem's forward as the worker times it beside the candidate; over "
            "torch.compile it is that speedup divided by torch.compile's own gain over eager, both measured in one "
            "Python process.\n\n";
    md += "| | fast_0 | fast_1 | fast_1.5 |\n|---|---|---|---|\n";
    md += "| over eager | " + fixed(s.fast0) + " | " + fixed(s.fast1) + " | " + fixed(s.fast15) + " |\n";
    if (s.compileProblems)
        md += "| over torch.compile (" + std::to_string(s.compileProblems) + " problems) | " + fixed(*s.compileFast0) + " | "
              + fixed(*s.compileFast1) + " | " + fixed(*s.compileFast15) + " |\n";
    else
        md += "| over torch.compile | not available | | |\n";
    if (!s.compileProblems)
        md += "\ntorch.compile: not available: " + pipes(run.compileNote.empty() ? "no problem was measured" : run.compileNote) + "\n";
    md += "\nfast_p counts raw speedups, as KernelBench does; \"accepted\" says whether the guard also found a kernel faster "
          "than eager by more than the measured noise.\n";
    md += "\n| problem | correct | accepted | speedup over eager | over torch.compile | best card | template | node | cards | nodes | note |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const auto &r : run.rows) {
        const auto sc = r.speedupCompile();
        md += "| " + pipes(r.problem) + " | " + (r.correct ? "yes" : "no") + " | " + (r.accepted ? "yes" : "no") + " | " + (r.correct ? fixed(r.speedupEager) + "x" : "-")
              + " | " + (sc && r.correct ? fixed(*sc) + "x" : "-") + " | " + pipes(r.bestCard) + " | " + pipes(r.bestTemplate) + " | "
              + (r.bestNode ? std::to_string(r.bestNode) : "-") + " | " + std::to_string(r.cardsSearched) + " | "
              + std::to_string(r.nodes) + " | " + pipes(r.note) + " |\n";
    }
    return md;
}

} // namespace kforge
