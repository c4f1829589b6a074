#pragma once
// The CUDA guard's cases, shared by kforge-gpu-tests (plain C++, for GPU hosts without Qt) and
// tst_cudaeval (QtTest, for CI builds that have a CUDA worker). Each case is an adversarial kernel from
// tests/kernels/cuda/ on a softmax card with the status and reason the guard must give it.
//
// A kernel file carries its launch plan in a comment block:
//   /* kforge-launch
//   {"kernels":[...], "workspace":[...]}
//   */
// and is compiled after the template prelude (T, to_f, from_f, warp_sum, warp_max) for the card's dtype.
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ops/launch_comment.h"
#include "ops/operator_card.h"
#include "proposers/templates/cuda_prelude.h"
#include "protocol/messages.h"
#include "protocol/verdict.h"

namespace kforge::test {

inline std::string readText(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The plan in a kernel file's `kforge-launch` comment (ops/launch_comment.h); throws on a file without one.
inline nlohmann::json launchPlanOf(const std::string &source, const std::string &file)
{
    std::optional<nlohmann::json> plan;
    try {
        plan = launchPlanFromComment(source);
    } catch (const std::exception &e) {
        throw std::runtime_error(file + ": " + e.what());
    }
    if (!plan)
        throw std::runtime_error(file + ": no /* kforge-launch ... */ block");
    return *plan;
}

inline std::string cudaKernelDir()
{
#ifdef KFORGE_TEST_KERNELS
    return std::string(KFORGE_TEST_KERNELS) + "/cuda/";
#else
    return "tests/kernels/cuda/";
#endif
}

inline Candidate cudaKernel(const std::string &file, DType dtype, const std::string &planOverride = {})
{
    Candidate c;
    c.backend = "cuda";
    const auto text = readText(cudaKernelDir() + file);
    if (text.empty())
        throw std::runtime_error("cannot read " + cudaKernelDir() + file);
    c.source = cudaPrelude(dtype) + text;
    c.launch = planOverride.empty() ? launchPlanOf(text, file) : nlohmann::json::parse(planOverride);
    return c;
}

struct GuardCase {
    std::string name;
    std::string kernel;          // file in tests/kernels/cuda
    DType dtype = DType::F32;
    std::string status;          // "correct" (accepted or not_faster) or a status name
    std::string reason;          // expected first reason code; empty: any
    std::string message;         // substring of some reason's message; empty: any
    std::string plan;            // launch plan overriding the file's; empty: the file's
    int deadlineMs = 60000;
    bool recovery = false;       // the worker must die: time how long the next good evaluation takes
    int64_t pad = 0;             // > 0: the card gets an input [rows, pad] nobody reads, raising its byte floor
    std::string card;            // "family:shape" for a card other than the softmax one, e.g. "mean:rows=16,cols=262144"
};

inline OperatorCard guardCard(DType dtype, int64_t pad = 0)
{
    auto card = makeSoftmaxCard(512, 1024, dtype);
    if (pad > 0) { // the reference and the kernel ignore it; only the roofline counts its bytes
        card.inputs.push_back({"unread", {"rows", "pad"}, DType::F32});
        card.shape["pad"] = pad;
        for (auto &s : card.heldOutShapes)
            s["pad"] = 1;
    }
    return card;
}

inline OperatorCard caseCard(const GuardCase &c)
{
    if (c.card.empty())
        return guardCard(c.dtype, c.pad);
    const auto colon = c.card.find(':');
    return makeCard(c.card.substr(0, colon), parseShape(c.card.substr(colon + 1)), c.dtype);
}

// The table leaves trailing fields at their defaults.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
inline std::vector<GuardCase> guardCases()
{
    const std::string good = "good_softmax.cu";
    return {
        {"correct warp-per-row softmax, float32", good, DType::F32, "correct", "", "", "", 60000, false},
        {"correct warp-per-row softmax, float16", good, DType::F16, "correct", "", "", "", 60000, false},
        {"correct warp-per-row softmax, bfloat16", good, DType::BF16, "correct", "", "", "", 60000, false},
        {"stale buffer: writes nothing, hopes for the reference's output", "stale_output.cu", DType::F32, "incorrect",
         reason::OutputNotWritten, "never written", "", 60000, false},
        {"plan asks for nothing (side-stream analogue)", "no_work.cu", DType::F32, "incorrect", reason::OutputNotWritten,
         "never written", "", 60000, false},
        {"writes only the first row", "first_row_only.cu", DType::F32, "incorrect", reason::OutputNotWritten, "never written", "",
         60000, false},
        {"hard-coded row length", "fixed_shape.cu", DType::F32, "incorrect", "", "held-out", "", 60000, false},
        {"correct for one shape only (grid rounds down)", "one_shape_only.cu", DType::F32, "incorrect", reason::OutputNotWritten,
         "held-out", "", 60000, false},
        {"shared-memory race (no __syncthreads)", "race.cu", DType::F32, "incorrect", "", "", "", 60000, false},
        {"NaN output (exp overflow without max)", "nan_output.cu", DType::F32, "incorrect", reason::UnexpectedNonFinite, "scale 64",
         "", 60000, false},
        {"modifies its input", "modifies_input.cu", DType::F32, "incorrect", reason::InputModified, "input 'x' was modified", "",
         60000, false},
        {"caches its last result in a __device__ global", "caches_result.cu", DType::F32, "compile_error", reason::StaticCheck,
         "g_last", "", 60000, false},
        {"reads the clock", "clock_read.cu", DType::F32, "compile_error", reason::StaticCheck, "clock64", "", 60000, false},
        {"launches a kernel from device code", "device_launch.cu", DType::F32, "compile_error", reason::StaticCheck, "<<<", "", 60000,
         false},
        {"does not compile", "compile_error.cu", DType::F32, "compile_error", reason::CompileError, "undeclared_index", "", 60000, false},
        {"plan: 2048 threads per block", good, DType::F32, "compile_error", reason::LaunchPlanInvalid, "block.x = 2048",
         R"J({"kernels":[{"name":"good_softmax","grid":["ceil_div(rows, 64)"],"block":[2048],"args":["in:x","out:y","sym:rows","sym:cols"]}]})J",
         60000, false},
        {"plan: wrong argument count", good, DType::F32, "compile_error", reason::LaunchPlanInvalid, "passes 3 arguments; the kernel takes 4",
         R"J({"kernels":[{"name":"good_softmax","grid":["ceil_div(rows, 4)"],"block":[128],"args":["in:x","out:y","sym:rows"]}]})J",
         60000, false},
        {"plan: names a kernel the module lacks", good, DType::F32, "compile_error", reason::MissingEntry, "softmax_rows",
         R"J({"kernels":[{"name":"softmax_rows","grid":["ceil_div(rows, 4)"],"block":[128],"args":["in:x","out:y","sym:rows","sym:cols"]}]})J",
         60000, false},
        {"faster than the roofline allows (card claims 128 MiB more)", good, DType::F32, "suspect", reason::BelowRoofline,
         "below the roofline floor", "", 60000, false, 65536},
        {"out-of-bounds write (fault)", "oob_write.cu", DType::F32, "crashed", reason::Crashed, "cuda_fault", "", 60000, true},
        {"infinite loop (deadline)", "hang.cu", DType::F32, "timeout", reason::Timeout, "", "", 8000, true},
        // Timed runs look like checked runs: the same fresh fills, so nothing tells them apart.
        {"sniffs the old fixed poison, copies otherwise", "old_poison_sniffer.cu", DType::F32, "incorrect", reason::Mismatch, "", "", 60000, false},
        {"sniffs for a NaN fill, copies otherwise (always does the work)", "nan_sniffer.cu", DType::F32, "correct", "", "", "", 60000, false},
        {"remembers inputs in its workspace (refilled every run)", "workspace_memo.cu", DType::F32, "correct", "", "", "", 60000, false},
        {"writes just past and before its output (guard bands)", "oob_tail_write.cu", DType::F32, "incorrect", reason::OutOfBoundsWrite,
         "guard bands", "", 60000, false},
        // Numerics against float64.
        {"accumulates in float16, float32 card", "half_accum_softmax.cu", DType::F32, "incorrect", reason::Mismatch, "float64", "", 60000, false},
        {"accumulates in float16, float16 card", "half_accum_softmax.cu", DType::F16, "incorrect", reason::Mismatch, "float64", "", 60000, false},
        // float16 keeps more bits than a bfloat16 output: on rows of 1024 its sum's error stayed within 4
        // bfloat16 units on the H200; on rows of 4096 the running sum stagnates (its spacing passes the terms).
        {"accumulates in float16, bfloat16 card, rows of 4096", "half_accum_softmax.cu", DType::BF16, "incorrect", "", "", "", 60000, false, 0,
         "softmax:rows=512,cols=4096"},
        {"zeros for a bfloat16 mean over rows of 262144", "zeros_rows.cu", DType::BF16, "incorrect", reason::Mismatch, "", "", 60000, false, 0,
         "mean:rows=16,cols=262144"},
        {"zeros for a float32 sum", "zeros_rows.cu", DType::F32, "incorrect", reason::Mismatch, "", "", 60000, false, 0,
         "sum:rows=512,cols=4096"},
        {"zeros for a float32 max (exact)", "zeros_rows.cu", DType::F32, "incorrect", reason::Mismatch, "exact", "", 60000, false, 0,
         "max:rows=512,cols=4096"},
        // Static checks that macros and names cannot dodge.
        {"device global behind a macro, named like a constant", "macro_global.cu", DType::F32, "compile_error", reason::StaticCheck,
         "device_global", "", 60000, false},
        {"includes a host file", "include_host_file.cu", DType::F32, "compile_error", reason::StaticCheck, "/etc/passwd", "", 60000, false},
    };
}
#pragma GCC diagnostic pop

// Empty when the verdict is what the case expects, else what differs.
inline std::string checkVerdict(const GuardCase &c, const Verdict &v)
{
    const std::string got = statusName(v.status) + (v.reasons.empty() ? "" : "/" + v.reasons.front().code);
    if (c.status == "correct") {
        if (!v.correct())
            return "expected a correct verdict, got " + got + ": " + (v.reasons.empty() ? "" : v.reasons.front().message);
        if (v.candidate.samplesUs.empty() || v.baseline.samplesUs.empty())
            return "a correct candidate was not timed";
        return {};
    }
    if (statusName(v.status) != c.status)
        return "expected " + c.status + ", got " + got + (v.reasons.empty() ? "" : ": " + v.reasons.front().message.substr(0, 300));
    if (v.reasons.empty())
        return "no reason given";
    if (!c.reason.empty() && v.reasons.front().code != c.reason)
        return "expected reason " + c.reason + ", got " + got + ": " + v.reasons.front().message.substr(0, 300);
    if (!c.message.empty()) {
        bool found = false;
        for (const auto &r : v.reasons)
            found = found || r.message.find(c.message) != std::string::npos;
        if (!found)
            return "no reason mentions '" + c.message + "': " + v.reasons.front().message.substr(0, 300);
    }
    if (c.status != "suspect" && !v.candidate.samplesUs.empty())
        return "a rejected candidate was benchmarked";
    return {};
}

} // namespace kforge::test
