#pragma once
// The workload file: a real model brought into kforge, and what profiling it found.
//
//   {"kforge_workload": 1, "name": "mlp",
//    "model": {"kind": "torchscript", "path": "mlp.pt"}            (or "problem": a KernelBench-style .py;
//              a built-in model also has "source": its methods' TorchScript)
//    "inputs": {"seed": 0, "tensors": [{"shape": [4, 32], "dtype": "float32", "init": "randn"}]}
//              (or {"captured": "mlp.inputs.pt"}: a TorchScript module whose buffers i0, i1, ... are the inputs)
//    "calls": [{"op": "aten::gelu", "overload": "", "schema": "aten::gelu(Tensor self, *, str approximate=...)",
//               "args": [{"name": "self", "tensor": {"shape": [4, 64], "dtype": "float32", "strides": [64, 1]}},
//                        {"name": "approximate", "str": "none"}],
//               "start_us": 12.5, "dur_us": 3.1, "depth": 0, "tid": 0}],
//    "cards": [<operator cards>], "skipped": [{"op": "aten::t", "why": "..."}],
//    "samples": {"<card key>": {"file": "mlp.samples.pt", "prefix": "c3_"}},
//    "problem": "silu.py",   (imported from a KernelBench-style problem: it also gets problem cards)
//    "problem_source": "<the problem file's text>"}   (as imported: its cards' definition)
//
// Paths are relative to the file's folder. An argument is one of {"tensor": meta}, {"int"}, {"double"},
// {"bool"}, {"str"}, {"int_list"}, {"double_list"}, {"bool_list"}, {"tensor_list": [meta..]}, {"none": true}
// or {"other": "<text>"} (a device, a layout: recorded, never turned into a card). A tensor's meta may carry
// "min"/"max", the value range seen (integer tensors, so index inputs stay in range). Calls nest (depth): an
// operator's own ATen calls have depth > 0 and are in the trace but not in the ranking.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ops/operator_card.h"

namespace kforge {

inline constexpr int kWorkloadFormat = 1;

struct TensorMeta {
    std::vector<int64_t> shape, strides;
    std::string dtype; // "float32", "int64", ... also dtypes kforge has no cards for ("bool", "uint8")
    std::optional<double> min, max;
    bool contiguous() const;
    int64_t numel() const;
};

struct CallArg {
    std::string name;   // the schema's argument name ("" when unknown)
    std::string kind;   // "tensor", "int", "double", "bool", "str", "int_list", "double_list", "bool_list",
                        // "tensor_list", "none", "other"
    nlohmann::json value; // the scalar, list or text; unused for tensors
    std::vector<TensorMeta> tensors; // one for "tensor", any number for "tensor_list"
};

struct CapturedCall {
    std::string op;       // "aten::gelu"
    std::string overload; // "" for the default overload
    std::string schema;
    std::vector<CallArg> args;
    double startUs = 0, durUs = 0;
    int depth = 0;
    int64_t tid = 0;
    // The call pattern: operator, overload and every argument's shape, dtype, strides and value, without
    // times or value ranges. Calls with one signature share a card.
    std::string signature() const;
    std::string qualifiedName() const { return overload.empty() ? op : op + "." + overload; }
};

struct ModelSource {
    std::string kind; // "torchscript" or "problem"
    std::string path; // as written in the file (relative to its folder)
    // A built-in model's methods as TorchScript source (Python syntax), so a Python helper can rebuild
    // it as an eager module with the .pt's weights and time it eager and under torch.compile.
    std::string source;
};

struct InputSpec {
    std::vector<int64_t> shape;
    std::string dtype = "float32";
    std::string init = "randn"; // "randn", "rand", "zeros", "ones", "randint:LO:HI"
};

struct SkippedCall {
    std::string op, why;
};

struct CardSample {
    std::string file, prefix; // buffers <prefix>0, <prefix>1, ... of the TorchScript container `file`
};

struct WorkloadFile {
    std::string name;
    ModelSource model;
    std::string problem; // the KernelBench-style problem file it was imported from ("" for a model)
    std::string problemSource; // that file's text, as imported ("" when unknown): what its cards are defined by
    uint64_t seed = 0;
    std::vector<InputSpec> inputs;
    std::string capturedInputs; // a container file of real inputs, instead of `inputs`
    std::vector<CapturedCall> calls;
    std::vector<OperatorCard> cards;
    std::vector<SkippedCall> skipped;
    std::map<std::string, CardSample> samples;
    std::string dir; // the folder the file was read from; relative paths resolve against it

    std::string resolve(const std::string &relative) const;
};

// Parses and validates; `where` names the source in errors ("workload file mlp.json"). Throws Error
// naming the field that is wrong: "workload file mlp.json: calls[3].args[1]: a tensor needs a shape".
WorkloadFile parseWorkload(const nlohmann::json &j, const std::string &where = "workload");
// Also points each card that has a sample at it (OperatorCard::capturedFile, resolved against the folder).
WorkloadFile loadWorkloadFile(const std::string &path);
nlohmann::json workloadToJson(const WorkloadFile &w);
void saveWorkloadFile(const WorkloadFile &w, const std::string &path);
CapturedCall callFromJson(const nlohmann::json &j, const std::string &where);
nlohmann::json callToJson(const CapturedCall &c);
nlohmann::json tensorMetaToJson(const TensorMeta &t);

// Top-level calls (depth 0) grouped by signature, ranked by total time, largest first.
struct CallGroup {
    std::string signature;
    std::vector<size_t> calls; // indices into the workload's calls, in order
    double totalUs = 0;
    double share = 0; // of all top-level time
};
std::vector<CallGroup> groupCalls(const std::vector<CapturedCall> &calls);

// The calls as a Chrome trace (Perfetto and chrome://tracing open it): complete events, microseconds.
nlohmann::json chromeTrace(const std::vector<CapturedCall> &calls, const std::string &processName = "kforge workload");

// The ranked table `kforge-cli profile` prints.
std::string rankedTable(const WorkloadFile &w, const std::vector<CallGroup> &groups, size_t maxRows = 30);

} // namespace kforge
