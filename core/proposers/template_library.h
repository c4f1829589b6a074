#pragma once
// Parameterized kernel templates: each has a tuning space (a list of values per parameter, ordered so
// that neighbours are similar) and renders source for a point in it. Invalid points are pruned before
// anything is compiled.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ops/operator_card.h"

namespace kforge {

// A point an expert would try, and why (the rationale a search shows for it).
struct ExpertStart {
    nlohmann::json point;
    std::string why;
};

struct KernelTemplate {
    std::string id;      // "cpu.softmax.three_pass"
    std::string family;  // matches OperatorCard::family
    std::string backend; // "cpu" or "cuda"
    std::string description;
    std::map<std::string, std::vector<nlohmann::json>> space;
    std::function<bool(const nlohmann::json &params, const OperatorCard &card)> valid;
    std::function<std::string(const nlohmann::json &params, const OperatorCard &card)> render;
    // The CUDA launch plan for a point (kernels, grid and block as expressions over the card's shape
    // symbols, workspace); unset for CPU templates.
    std::function<nlohmann::json(const nlohmann::json &params, const OperatorCard &card)> launch;
    // An expert's starting point for a card (unset: a random valid point). The proposer tries each
    // template's seed first, so a search starts from good kernels and spends its budget improving them.
    std::function<nlohmann::json(const OperatorCard &card)> seed;
    // How many times a point reads its input from device memory: 1 when each element is read once (or
    // read again while the cache still holds it), 2 when a statistics pass and an output pass both
    // stream it. The proposer starts with the templates whose seeds read least, so a search of a few
    // nodes tries the kernels that can reach the one-read floor first. Unset: once.
    std::function<int(const nlohmann::json &params, const OperatorCard &card)> reads;
    // Further expert starts, each tried once after the seed and before any move from the template's
    // results (unset: none). On a space of ten points a search's first two evaluations are a fifth of
    // it: a second guess that differs from the seed in the way that matters spends the second one better
    // than the seed's nearest neighbour.
    std::function<std::vector<ExpertStart>(const OperatorCard &card)> moreStarts;
};

class TemplateLibrary {
public:
    static const TemplateLibrary &builtin();
    void add(KernelTemplate t);
    std::vector<const KernelTemplate *> forFamily(const std::string &family, const std::string &backend) const;
    const KernelTemplate *find(const std::string &id) const;

private:
    std::vector<KernelTemplate> m_templates;
};

// Helpers for rendering templates: "#define NAME VALUE" lines (strings unquoted), a template's header
// with one define per parameter (upper-cased), and the epsilon a normalization card's reference uses.
std::string defineLine(const std::string &name, const nlohmann::json &value);
std::string paramDefines(const std::string &templateId, const nlohmann::json &params);
double referenceEps(const OperatorCard &card);
// "#define EPS <eps>f" with nine significant digits for CUDA's float math, or a double literal with 17 for
// the CPU kernels (std::to_string would write 1e-12 as 0.000000).
std::string epsDefine(double eps, bool floatLiteral = true);
// The last floating argument of a card's reference: the eps where another float comes first (instance
// norm's momentum).
double lastDoubleArg(const OperatorCard &card);

// A CPU template "cpu.<family>.rows" over float32 cards: UNROLL in {1, 4, 8, 16} (seed 8), its source
// the card's defines (from `defines`) then cpu_rows.h then `source` (a file of resources/templates).
KernelTemplate cpuUnrolledRowsTemplate(const std::string &family, std::string description,
                                       std::function<std::string(const OperatorCard &)> defines, const std::string &source);

// The starts of a CPU template that keeps ACCUMULATORS independent partial results of type ACC. The
// seed: eight chains, enough to keep a core's two floating-point adders busy through an add's latency,
// in double, which keeps a long sum inside the guard's bound (on the 2-core VM's sweeps of 21 such
// families, 0.89 of each family's best in the geometric mean where the middle of the values, float and
// 4, gave 0.74). `overOneRow`, where each sum runs over one row or plane (not a whole tensor or a channel
// across the batch, whose float sums leave the bound): a second start, the seed's 64 bytes of partial
// results as sixteen floats, which fill the same vector with twice the lanes and add the input with no
// conversion (bench/RESULTS-search.md). No seed for a space without ACCUMULATORS.
void seedPartialResults(KernelTemplate &t, bool overOneRow);
// A CPU template's fixed seed: `point`, with ACC double where the space offers it (the guard's bound on
// long sums, as above).
std::function<nlohmann::json(const OperatorCard &)> cpuSeedInDouble(const std::map<std::string, std::vector<nlohmann::json>> &space,
                                                                     nlohmann::json point);

// Registration hooks, one per source file of templates.
void addCpuSoftmaxTemplates(TemplateLibrary &lib);
void addCpuRowwiseTemplates(TemplateLibrary &lib);
void addCudaRowTemplates(TemplateLibrary &lib);
void addCudaOtherTemplates(TemplateLibrary &lib);
void addCudaClusterTemplates(TemplateLibrary &lib);
void addCudaRowGroupTemplates(TemplateLibrary &lib);
void addCudaPipeTemplates(TemplateLibrary &lib);
void addPointwiseTemplates(TemplateLibrary &lib);
void addCpuAnyDimTemplates(TemplateLibrary &lib);
void addCudaAnyDimTemplates(TemplateLibrary &lib);
void addFusedSoftmaxTemplates(TemplateLibrary &lib);
void addLossTemplates(TemplateLibrary &lib);
void addSplitNormTemplates(TemplateLibrary &lib);
void addScanTemplates(TemplateLibrary &lib);
void addRotaryTemplates(TemplateLibrary &lib);
void addResidualNormTemplates(TemplateLibrary &lib);

} // namespace kforge
