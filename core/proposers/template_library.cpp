#include "proposers/template_library.h"
#include "proposers/template_sources.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace kforge {

std::string defineLine(const std::string &name, const nlohmann::json &value)
{
    return "#define " + name + " " + (value.is_string() ? value.get<std::string>() : value.dump()) + "\n";
}

KernelTemplate cpuUnrolledRowsTemplate(const std::string &family, std::string description,
                                       std::function<std::string(const OperatorCard &)> defines, const std::string &source)
{
    KernelTemplate t;
    t.id = "cpu." + family + ".rows";
    t.family = family;
    t.backend = "cpu";
    t.description = std::move(description);
    t.space = {{"unroll", {1, 4, 8, 16}}};
    t.valid = [](const nlohmann::json &, const OperatorCard &card) { return card.inputs.front().dtype == DType::F32; };
    t.render = [id = t.id, defines = std::move(defines), source](const nlohmann::json &p, const OperatorCard &card) {
        return paramDefines(id, p) + defines(card) + templateSource("cpu_rows.h") + templateSource(source);
    };
    t.seed = [](const OperatorCard &) { return nlohmann::json{{"unroll", 8}}; };
    return t;
}

std::string paramDefines(const std::string &templateId, const nlohmann::json &params)
{
    std::string s = "// template " + templateId + "\n";
    for (auto &[k, v] : params.items()) {
        std::string name = k;
        for (auto &ch : name)
            ch = char(std::toupper(static_cast<unsigned char>(ch)));
        s += defineLine(name, v);
    }
    return s;
}

std::string epsDefine(double eps, bool floatLiteral)
{
    char buf[64];
    if (floatLiteral)
        std::snprintf(buf, sizeof buf, "#define EPS %.9gf\n", eps);
    else
        std::snprintf(buf, sizeof buf, "#define EPS %.17g\n", eps);
    return buf;
}

double referenceEps(const OperatorCard &card)
{
    for (const auto &a : card.referenceArgs)
        if (a.contains("double"))
            return a["double"].get<double>();
    return 1e-5;
}

const TemplateLibrary &TemplateLibrary::builtin()
{
    static const TemplateLibrary lib = [] {
        TemplateLibrary l;
        addCpuSoftmaxTemplates(l);
        addCpuRowwiseTemplates(l);
        addCudaRowTemplates(l);
        addCudaOtherTemplates(l);
        // Row groups before clusters: where both read a long row once, plain blocks fill every SM and a
        // cluster fits in one GPC (1024 x 262144 float32 log-softmax on the H200: 601 us against 707).
        addCudaRowGroupTemplates(l);
        addCudaClusterTemplates(l);
        addCudaPipeTemplates(l);
        addPointwiseTemplates(l);
        addCpuAnyDimTemplates(l);
        addCudaAnyDimTemplates(l);
        addFusedSoftmaxTemplates(l);
        addRotaryTemplates(l);
        addResidualNormTemplates(l);
        addLossTemplates(l);
        addSplitNormTemplates(l);
        addScanTemplates(l);
        return l;
    }();
    return lib;
}

void seedPartialResults(KernelTemplate &t, bool overOneRow)
{
    const auto accumulators = t.space.find("accumulators");
    if (accumulators == t.space.end())
        return;
    const nlohmann::json seed = {{"accumulators", 8}};
    t.seed = cpuSeedInDouble(t.space, seed);
    const auto acc = t.space.find("acc");
    const auto offers = [](const std::vector<nlohmann::json> &values, const nlohmann::json &v) {
        return std::find(values.begin(), values.end(), v) != values.end();
    };
    if (!overOneRow || acc == t.space.end() || !offers(acc->second, "float") || !offers(accumulators->second, 16))
        return;
    nlohmann::json wide = seed;
    wide["acc"] = "float";
    wide["accumulators"] = 16;
    t.moreStarts = [wide](const OperatorCard &) {
        return std::vector<ExpertStart>{{wide, "the seed's 64 bytes of partial results as sixteen floats: twice the lanes a vector, no conversion"}};
    };
}

std::function<nlohmann::json(const OperatorCard &)> cpuSeedInDouble(const std::map<std::string, std::vector<nlohmann::json>> &space,
                                                                     nlohmann::json point)
{
    if (space.count("acc"))
        point["acc"] = "double";
    return [point](const OperatorCard &) { return point; };
}

void TemplateLibrary::add(KernelTemplate t)
{
    m_templates.push_back(std::move(t));
}

std::vector<const KernelTemplate *> TemplateLibrary::forFamily(const std::string &family, const std::string &backend) const
{
    std::vector<const KernelTemplate *> out;
    for (const auto &t : m_templates)
        if (t.family == family && t.backend == backend)
            out.push_back(&t);
    return out;
}

const KernelTemplate *TemplateLibrary::find(const std::string &id) const
{
    for (const auto &t : m_templates)
        if (t.id == id)
            return &t;
    return nullptr;
}

} // namespace kforge
