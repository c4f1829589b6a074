#pragma once
// Built-in models with random weights, so kforge can profile and search a realistic block with nothing
// downloaded: a Llama/Qwen-style decoder block, a diffusion UNet-style block and ResNet-50. A model is
// described here as data (no torch): TorchScript source for its methods, its parameters and buffers with
// how to fill them, and its inputs. The worker (worker/profile/builtin_model.cpp) compiles the source
// with libtorch's own TorchScript compiler onto a module holding those tensors, seeded, and saves it as a
// .pt file that every part of kforge treats like any other TorchScript model.
//
// Options are NAME=VALUE strings, each checked against its kind and range; a preset sets several at once
// ("h200": the sizes the workloads issue measures on the H200), and options given with it override it.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "workload/workload_file.h"

namespace kforge {

struct BuiltinOption {
    std::string name;
    std::string kind; // "int", "dtype", "preset"
    std::string defaultValue;
    int64_t min = 0, max = 0; // for "int"
    std::string help;
};

struct BuiltinModelInfo {
    std::string name, description;
    std::vector<BuiltinOption> options;
    std::map<std::string, std::map<std::string, std::string>> presets; // preset -> option values
};

const std::vector<BuiltinModelInfo> &builtinModels();
const BuiltinModelInfo &builtinModelInfo(const std::string &name); // throws Error naming the known models

// A tensor the module holds. init: "normal:STD", "ones", "zeros", "causal_mask" (0 on and below the
// diagonal, the dtype's lowest value above), "rope_cos:THETA" / "rope_sin:THETA" (rotary tables,
// [positions, head_dim], the halves repeated as Llama does).
struct BuiltinTensor {
    std::string name;
    std::vector<int64_t> shape;
    std::string init;
    bool buffer = false; // a buffer (masks, tables, running statistics) rather than a parameter
};

struct BuiltinModel {
    std::string name;
    std::map<std::string, std::string> options; // every option, resolved
    std::string dtype;                          // of the parameters, buffers and floating inputs
    uint64_t seed = 0;
    std::string source;                         // TorchScript methods, `forward` among them
    std::vector<BuiltinTensor> tensors;
    std::vector<InputSpec> inputs;
    int64_t parameterCount() const;
    int64_t elements(bool parametersOnly = false) const; // of every tensor, or of the parameters alone
    std::string summary() const; // one line: the name and its resolved options
};

// Resolves and validates `options` (NAME -> VALUE) for the model; throws Error naming the option, what
// it takes and what was given ("decoder: option heads=5 does not divide hidden=256").
BuiltinModel makeBuiltinModel(const std::string &name, const std::map<std::string, std::string> &options);

// Parses "--name=value" and "--name value" command-line words into options; throws Error for a word
// that is not an option of the model.
std::map<std::string, std::string> parseBuiltinOptions(const std::string &model, const std::vector<std::string> &words);

// The text `kforge-cli model list` prints.
std::string builtinModelsHelp();

} // namespace kforge
