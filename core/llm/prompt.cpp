#include "llm/prompt.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "ops/operator_meaning.h"
#include "proposers/templates/cuda_prelude.h"
#include "protocol/cpu_abi.h"
#include "protocol/ptxas_log.h"
#include "util/text.h"

namespace kforge::llm {

namespace {

std::string dimsOf(const OperatorCard &card, const TensorSpec &t, const ShapeBindings &s)
{
    if (t.dims.empty())
        return "[] (a scalar)";
    std::string names, sizes;
    for (size_t i = 0; i < t.dims.size(); ++i) {
        names += (i ? ", " : "") + t.dims[i];
        auto it = s.find(t.dims[i]);
        sizes += (i ? " x " : "") + (it == s.end() ? t.dims[i] : std::to_string(it->second));
    }
    return "[" + names + "] = " + sizes;
}

std::string errorModelText(ErrorModel m)
{
    switch (m) {
    case ErrorModel::Exact: return "exact: the output must equal ATen's bit for bit";
    case ErrorModel::Pointwise: return "pointwise: each element within a few units of float rounding of its value, as ATen is";
    case ErrorModel::Normalization: return "norm: statistics over a row or group carry their own rounding; accumulate them in float or wider";
    case ErrorModel::Sum: return "sum: error may grow with the sum of the magnitudes reduced; accumulate in float or wider";
    }
    return {};
}

std::string stripPrelude(const std::string &source, const OperatorCard &card)
{
    const auto prelude = cudaPrelude(card.inputs.empty() ? DType::F32 : card.inputs.front().dtype);
    if (source.rfind(prelude, 0) == 0)
        return source.substr(prelude.size());
    return source;
}

} // namespace

std::string capCompileLog(const std::string &log, size_t cap)
{
    if (log.size() <= cap)
        return log;
    // The first error is what matters; cut at a line boundary and say how much is left out.
    size_t cut = log.rfind('\n', cap);
    if (cut == std::string::npos || cut < cap / 2)
        cut = cap;
    return log.substr(0, cut) + "\n[... " + std::to_string(log.size() - cut) + " more bytes of the log left out]\n";
}

std::string describeDevice(const nlohmann::json &device, const knowledge::Note *hardware)
{
    std::ostringstream o;
    auto num = [&](const char *k) { return device.is_object() && device.contains(k) && device[k].is_number() ? device[k].get<double>() : 0.0; };
    auto str = [&](const char *k) { return device.is_object() && device.contains(k) && device[k].is_string() ? device[k].get<std::string>() : std::string(); };
    if (device.is_object()) {
        o << "The worker reports: " << (str("name").empty() ? std::string("an unnamed device") : str("name"));
        if (!str("sm").empty())
            o << ", " << str("sm");
        if (num("sms") > 0)
            o << ", " << formatNumber(num("sms"), "%.0f") << " SMs";
        if (num("memory_bytes") > 0)
            o << ", " << formatNumber(num("memory_bytes") / (1024.0 * 1024 * 1024), "%.0f") << " GiB of memory";
        if (num("l2_bytes") > 0)
            o << ", " << formatNumber(num("l2_bytes") / (1024.0 * 1024), "%.0f") << " MiB of L2";
        if (num("copy_bandwidth_gbs") > 0)
            o << ", a measured copy rate of " << formatNumber(num("copy_bandwidth_gbs"), "%.0f") << " GB/s (the roofline's rate)";
        if (num("cores") > 0)
            o << ", " << formatNumber(num("cores"), "%.0f") << " cores (the candidate runs on one)";
        if (num("cache_bytes") > 0)
            o << ", " << formatNumber(num("cache_bytes") / 1024.0, "%.0f") << " KiB of last-level cache";
        o << ".\n";
    }
    if (hardware)
        o << "\n" << hardware->title << ":\n" << hardware->body;
    return o.str();
}

std::string describeResources(const std::string &compileLog)
{
    const auto kernels = parsePtxasLog(compileLog);
    if (kernels.empty())
        return {};
    std::ostringstream o;
    for (const auto &k : kernels) {
        o << "- " << k.name << ": " << k.registers << " registers, " << k.sharedBytes << " bytes of static shared memory, " << k.stackBytes
          << " bytes of stack, " << k.spillStores << " bytes of spill stores and " << k.spillLoads << " bytes of spill loads\n";
    }
    const auto s = summarizePtxasLog(compileLog);
    if (s && s->spillBytes > 0)
        o << "ptxas spilled registers to local memory: reduce live values in the hot loop.\n";
    return o.str();
}

std::string describeProfile(const nlohmann::json &p)
{
    if (!p.is_object())
        return {};
    std::ostringstream o;
    auto pct = [&](const char *k, const char *what) {
        if (p.contains(k) && p[k].is_number())
            o << (o.tellp() > 0 ? ", " : "") << what << " " << formatNumber(p[k].get<double>(), "%.0f") << "%";
    };
    pct("memory_throughput_pct", "memory throughput");
    pct("compute_throughput_pct", "compute (SM) throughput");
    pct("achieved_occupancy_pct", "achieved occupancy");
    std::string out = o.str();
    if (p.contains("duration_us") && p["duration_us"].is_number())
        out += (out.empty() ? "" : ", ") + std::string("kernel time ") + formatNumber(p["duration_us"].get<double>()) + " us";
    if (p.contains("top_stalls") && p["top_stalls"].is_array() && !p["top_stalls"].empty()) {
        out += "; top stall reasons:";
        for (const auto &st : p["top_stalls"])
            if (st.is_object() && st.contains("reason") && st["reason"].is_string())
                out += " " + st["reason"].get<std::string>()
                       + (st.contains("value") && st["value"].is_number() ? " (" + formatNumber(st["value"].get<double>()) + ")" : "");
    }
    if (out.empty())
        return {};
    const auto kernel = p.contains("kernel") && p["kernel"].is_string() ? p["kernel"].get<std::string>() : std::string();
    return "Nsight Compute" + (kernel.empty() ? std::string() : " (" + kernel + ")") + ": " + out + " (percentages of peak).\n";
}

std::string describePassages(const std::vector<knowledge::Passage> &passages, size_t cap)
{
    std::ostringstream o;
    size_t used = 0, left = 0;
    for (const auto &p : passages) {
        if (!p.note)
            continue;
        std::string text = "## " + p.note->title + "\n" + p.note->body;
        const size_t room = std::min(cap / 2, cap - std::min(cap, used));
        if (room < 200) {
            ++left;
            continue;
        }
        if (text.size() > room) {
            size_t cut = text.rfind('\n', room);
            if (cut == std::string::npos || cut < room / 2)
                cut = room;
            text = text.substr(0, cut) + "\n[... " + std::to_string(text.size() - cut) + " more bytes of this note left out]\n";
        }
        if (text.back() != '\n')
            text += "\n";
        used += text.size();
        o << text << "\n";
    }
    if (left)
        o << "(" << left << " more notes left out for length)\n";
    return o.str();
}

// How an input is filled, in words where the name alone would not say what a kernel must handle.
static std::string fillText(const std::string &init)
{
    if (init.rfind("index:", 0) == 0)
        return init + " (integers in [0, " + init.substr(6) + "))";
    return init;
}

// What a special trial's inputs hold.
static std::string specialText(const std::string &kind)
{
    if (kind == kMaskedRows)
        return "about a quarter of each row is -inf, the first column finite";
    if (kind == kIgnoredTargets)
        return "about one index in eight is " + std::to_string(kIgnoreIndex)
               + ", the ignore index, which adds nothing to the loss and is not counted in the mean";
    return "see the operator";
}

std::string describeCard(const OperatorCard &card)
{
    std::ostringstream o;
    o << "Operator: " << card.atenOp << (card.atenOverload.empty() ? "" : "." + card.atenOverload) << " (card " << card.key << ")\n";
    o << "Schema: " << card.atenSchema << "\n";
    if (const auto meaning = operatorMeaning(card); !meaning.empty())
        o << "It computes: " << meaning << "\n";
    if (!card.definition.empty()) {
        // A problem's program: its Model's forward is the operator, get_inputs made the captured inputs.
        constexpr size_t kDefinitionCap = 12000;
        const auto text = card.definition.substr(0, kDefinitionCap);
        o << "Defined by this PyTorch program (the operator is Model.forward; get_inputs made the captured inputs):\n```python\n" << text
          << (text.empty() || text.back() == '\n' ? "" : "\n") << "```\n";
        if (card.definition.size() > kDefinitionCap)
            o << "(" << card.definition.size() - kDefinitionCap << " more bytes of it left out)\n";
    }
    o << "Reference call arguments, in schema order: " << card.referenceArgs.dump() << "\n";
    o << "Inputs, in the order the kernel receives them:\n";
    for (size_t i = 0; i < card.inputs.size(); ++i) {
        const auto &t = card.inputs[i];
        o << "  inputs[" << i << "] " << t.name << ": " << dtypeName(t.dtype) << " " << dimsOf(card, t, card.shape) << ", filled "
          << fillText(t.init) << "\n";
    }
    o << "Outputs:\n";
    for (size_t i = 0; i < card.outputs.size(); ++i) {
        const auto &t = card.outputs[i];
        o << "  outputs[" << i << "] " << t.name << ": " << dtypeName(t.dtype) << " " << dimsOf(card, t, card.shape) << "\n";
    }
    o << "Captured shape: " << shapeText(card.shape, ", ") << "\n";
    if (!card.heldOutShapes.empty()) {
        o << "Held-out shapes the same kernel must also handle:";
        for (const auto &s : card.heldOutShapes)
            o << " {" << shapeText(s, ", ") << "}";
        o << "\n";
    }
    o << "Inputs are drawn at scales";
    for (double s : card.inputScales)
        o << " " << formatNumber(s);
    o << "; numerics: " << errorModelText(card.errorModel) << ".\n";
    if (!card.invariants.empty()) {
        o << "Invariants checked:";
        for (const auto &i : card.invariants)
            o << " " << i;
        o << "\n";
    }
    if (!card.specialInputs.empty()) {
        o << "Special inputs tried:";
        for (const auto &i : card.specialInputs)
            o << " " << i << " (" << specialText(i) << ")";
        o << "\n";
    }
    o << "Roofline: at least " << formatNumber(card.minBytes(card.shape) / 1e6) << " MB moved and " << formatNumber(card.flops(card.shape) / 1e6)
      << " MFLOP at the captured shape.\n";
    return o.str();
}

std::string candidateContract(const OperatorCard &card, const std::string &backend)
{
    std::ostringstream o;
    if (backend == "cuda") {
        o << "The candidate is CUDA device code compiled by NVRTC for the GPU, plus a declarative launch plan; no host code runs.\n"
             "No CUDA headers are available. This prelude is prepended to your source (use T, to_f, from_f; do not repeat it):\n"
             "```cuda\n"
          << cudaPrelude(card.inputs.empty() ? DType::F32 : card.inputs.front().dtype)
          << "```\n"
             "Declare kernels extern \"C\" __global__. Put the launch plan in the source as a comment:\n"
             "/* kforge-launch\n"
             "{\"kernels\":[{\"name\":\"k\",\"grid\":[\"ceil_div(rows, 4)\",1,1],\"block\":[128,1,1],\"shared_bytes\":\"0\",\n"
             "  \"args\":[\"in:x\",\"out:y\",\"sym:rows\",\"sym:cols\"]}],\"workspace\":[]}\n"
             "*/\n"
             "Arguments: in:<input>, out:<output>, ws:<workspace> pass device pointers; sym:<symbol> passes a shape extent as a 64-bit "
             "integer; i64:<expr>, i32:<expr>, f32:<number> pass values. Expressions use integers, the card's shape symbols, sm_count, "
             "+ - * / %, parentheses, ceil_div, min, max. Kernels run in order. Every output element must be written; inputs are "
             "read-only; writing outside a buffer is caught. No device-side launches, clocks or persistent globals.\n";
    } else {
        o << "The candidate is C++17 compiled by the host compiler with -O3 into a shared object and run single-threaded in a sandbox. "
             "This preamble is prepended to your source (do not repeat it):\n```cpp\n"
          << kCpuAbiPreamble
          << "```\n"
             "Define extern \"C\" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs). "
             "Tensors come in the card's order with sizes and strides in elements; check dtype and contiguity and return non-zero to "
             "refuse arguments you do not handle. Write every output element; never write inputs. No threads, files, network or "
             "system calls; standard headers (<cmath>, <cstring>, <algorithm>, <immintrin.h>) are fine.\n";
    }
    return o.str();
}

std::string describeFeedback(const NodeDetail &parent, size_t compileLogCap, int maxFailedTrials)
{
    std::ostringstream o;
    const auto &v = parent.verdict;
    o << "Result: " << parent.node.status;
    if (!parent.node.summary.empty())
        o << " (" << parent.node.summary << ")";
    o << "\n";
    for (const auto &r : v.reasons)
        o << "- " << r.code << ": " << r.message << "\n";
    if (const auto res = describeResources(v.compile.log); !res.empty())
        o << "Kernel resources as ptxas reported them:\n" << res;
    if (!v.compile.ok || v.status == VerdictStatus::CompileError) {
        o << "Compile log (" << v.compile.target << "):\n```\n" << capCompileLog(v.compile.log, compileLogCap) << "```\n";
    } else if (!v.compile.log.empty() && v.compile.log.find("warning") != std::string::npos) {
        o << "Compiler warnings:\n```\n" << capCompileLog(v.compile.log, compileLogCap / 4) << "```\n";
    }
    int shown = 0, failedTrials = 0;
    for (const auto &t : v.trials) {
        if (t.passed)
            continue;
        ++failedTrials;
        if (shown >= maxFailedTrials)
            continue;
        ++shown;
        o << "Failed trial " << t.label << " at " << t.shape << ": " << t.failure;
        if (!t.detail.empty())
            o << " - " << t.detail;
        if (t.allowedError > 0)
            o << " (error " << formatNumber(t.candidateError) << " units against ATen's " << formatNumber(t.atenError) << ", allowed " << formatNumber(t.allowedError)
              << ")";
        o << "\n";
    }
    if (failedTrials > shown)
        o << "(" << failedTrials - shown << " more failed trials)\n";
    if (!v.trials.empty() && failedTrials == 0)
        o << "All " << v.trials.size() << " verification trials passed.\n";
    if (v.candidate.summary.median > 0) {
        o << "Timing: candidate median " << formatNumber(v.candidate.summary.median) << " us, ATen " << formatNumber(v.baseline.summary.median)
          << " us, speedup " << formatNumber(v.speedup) << "x (noise band " << formatNumber(v.noise * 100, "%.1f") << "%)";
        const double floor = v.rooflineUs > 0 ? v.rooflineUs : parent.node.rooflineUs;
        if (floor > 0)
            o << "; the roofline floor is " << formatNumber(floor) << " us, so the candidate runs at " << formatNumber(100 * floor / v.candidate.summary.median, "%.0f")
              << "% of the roofline";
        o << ".\n";
    }
    for (const auto &n : v.notes)
        o << "Note: " << n << "\n";
    o << describeProfile(parent.profile);
    return o.str();
}

std::string promptMode(const PromptInput &in)
{
    if (!in.parent)
        return "first";
    return statusIsFailure(statusFromName(in.parent->node.status)) ? "repair" : "improve";
}

ChatRequest buildPrompt(const PromptInput &in)
{
    const OperatorCard &card = *in.card;
    const auto mode = promptMode(in);
    ChatRequest r;
    r.system = "You write fast, correct " + std::string(in.backend == "cuda" ? "CUDA kernels" : "CPU kernels in C++")
               + " that replace one PyTorch operator. A candidate is verified against the ATen reference on random inputs at several "
                 "scales and held-out shapes, judged against a float64 reference, then timed against ATen. Reply with one line "
                 "'Change: <what you changed and why>' and then the complete source in one fenced code block.";
    std::ostringstream u;
    u << "# Operator\n" << describeCard(card) << "\n# Candidate contract\n" << candidateContract(card, in.backend) << "\n";
    if (!in.device.empty())
        u << "# Target device\n" << in.device << (in.device.back() == '\n' ? "" : "\n") << "\n";
    if (const auto k = describePassages(in.passages, in.knowledgeCap); !k.empty())
        u << "# From the knowledge base (notes for this device and operator, and lessons of earlier searches)\n" << k;
    if (in.parent && in.parent->node.status != "baseline") {
        const auto code = in.backend == "cuda" ? stripPrelude(in.parent->candidate.source, card) : in.parent->candidate.source;
        u << "# Parent candidate (node " << in.parent->node.id << ")\n```" << (in.backend == "cuda" ? "cuda" : "cpp") << "\n" << code
          << (code.empty() || code.back() == '\n' ? "" : "\n") << "```\n";
        if (in.backend == "cuda" && !in.parent->candidate.launch.empty())
            u << "Its launch plan: " << in.parent->candidate.launch.dump() << "\n";
        u << "\n# Parent feedback\n" << describeFeedback(*in.parent, in.compileLogCap, in.maxFailedTrials) << "\n";
    }
    if (in.lineage.size() > 1) {
        u << "# Lineage (root first)\n";
        for (const auto &s : in.lineage) {
            u << "- node " << s.nodeId << " [" << s.expansion << "] " << s.status;
            if (s.speedup > 0)
                u << ", " << formatNumber(s.speedup) << "x";
            if (!s.change.empty())
                u << ": " << s.change;
            u << "\n";
        }
        u << "\n";
    }
    if (!in.failed.empty()) {
        u << "# Approaches that already failed (do not repeat them)\n";
        for (const auto &f : in.failed)
            u << "- node " << f.nodeId << " " << f.status << (f.change.empty() ? "" : ": " + f.change)
              << (f.reason.empty() ? "" : " -- " + f.reason) << "\n";
        u << "\n";
    }
    u << "# Task\n";
    if (mode == "first")
        u << "Write a first candidate for this operator: correct on every shape above, then fast.";
    else if (mode == "repair")
        u << "The parent candidate failed as the feedback says. Fix the cause and keep what was good about it; reply with the whole "
             "corrected source.";
    else
        u << "The parent candidate is correct. Make it faster (it should approach the roofline) while staying correct; reply with the "
             "whole new source.";
    u << "\n";
    r.messages.push_back({"user", u.str()});
    return r;
}

} // namespace kforge::llm
