#pragma once
// A kernel pack: a folder with manifest.json and the files it names. For every kernel the manifest says
// which ATen operator it replaces, on which calls (its guards: dtypes, shapes by shape symbol with the
// range the kernel was verified on, contiguity, the device), and where its source, launch plan and
// binaries (a cubin per architecture for CUDA, a shared object for CPU) are, each with its SHA-256.
//
//   {"kforge_pack": 1, "created_by": "kforge-cli 0.1.0", "created_at": "2026-12-01T14:00:00Z",
//    "session": "s.kforge", "kernels": [{
//      "key": "softmax.rows4096x1024.f32", "operator": "aten::_softmax", "overload": "",
//      "schema": "aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", "backend": "cpu",
//      "node": 12, "speedup": 1.4, "error_model": "norm",
//      "arguments": [{"input": 0}, {"int": -1}, {"bool": false}],          (the card's reference arguments)
//      "inputs":  [{"name": "x", "dtype": "f32", "dims": ["rows", "cols"], "contiguous": true, "flatten_leading": true}],
//      "outputs": [{"name": "y", "dtype": "f32", "dims": ["rows", "cols"]}],
//      "symbols": {"rows": [1, 4096], "cols": [7, 1024]},                  (verified from .. to, inclusive)
//      "source": {"path": "kernels/0/source.cpp", "sha256": "..."},
//      "launch": {...},                                                    (cuda: the launch plan)
//      "binaries": [{"arch": "cpu", "path": "kernels/0/kernel.so", "sha256": "..."}]}]}
//
// `flatten_leading`: the kernel sees the tensor as rows x cols, rows the product of all leading dimensions
// (a family card's rows): a [8, 512, 1024] call binds rows = 4096, cols = 1024.
//
// No torch, no Qt: the CLI writes packs, the runtime (runtime/) reads them.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ops/operator_card.h"

namespace kforge::pack {

inline constexpr int kPackFormatVersion = 1;
inline constexpr const char *kManifestName = "manifest.json";

struct PackFile {
    std::string path;   // relative to the pack folder
    std::string sha256; // hex
};

struct PackBinary {
    std::string arch; // "sm_90", or "cpu"
    PackFile file;
};

struct TensorGuard {
    std::string name;
    DType dtype = DType::F32;
    std::vector<std::string> dims; // shape symbols
    bool contiguous = true;
    bool flattenLeading = false; // dims are [rows, cols]; rows is the product of the call's leading dimensions
    // dims are [mrows, cols]: an attention mask broadcast over the flattened input's leading dimensions,
    // its runs bound to minner, mstep and mblock (ops/mask_rows.h)
    bool broadcastRows = false;
};

struct SymbolRange {
    int64_t min = 0;
    int64_t max = 0;
};

struct PackKernel {
    std::string key;
    std::string atenOp;       // "aten::_softmax"
    std::string atenOverload; // "" for the default overload
    std::string atenSchema;
    std::string backend = "cpu"; // "cpu" or "cuda"
    int64_t node = 0;
    double speedup = 0;
    std::string errorModel;
    nlohmann::json arguments = nlohmann::json::array(); // as OperatorCard::referenceArgs
    std::vector<TensorGuard> inputs, outputs;
    std::map<std::string, SymbolRange> symbols;
    // (a, b): calls where symbol a's extent is not a multiple of b's go to the original operator
    // (OperatorCard::multiples).
    std::vector<std::pair<std::string, std::string>> multiples;
    PackFile source;
    nlohmann::json launch = nlohmann::json::object();
    std::vector<PackBinary> binaries;

    std::string qualifiedOp() const { return atenOverload.empty() ? atenOp : atenOp + "." + atenOverload; }
    const PackBinary *binaryFor(const std::string &arch) const;
};

struct PackManifest {
    int formatVersion = kPackFormatVersion;
    std::string createdBy;
    std::string createdAt;
    std::string session;
    std::vector<PackKernel> kernels;
};

nlohmann::json manifestToJson(const PackManifest &m);
// Throws Error naming the field that is missing or malformed ("kernels[1].inputs[0].dtype: ...").
// A manifest of another format version is refused before anything else is read.
PackManifest manifestFromJson(const nlohmann::json &j);

// The guards a card's kernel was verified under: its tensors' dtypes and dims, contiguous, the leading
// dimensions of a family card's rows x cols tensors flattened, and each shape symbol's range over the
// captured shape and the held-out shapes.
PackKernel kernelFromCard(const OperatorCard &card);

} // namespace kforge::pack
