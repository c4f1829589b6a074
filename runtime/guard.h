#pragma once
// The guard of one pack kernel, compiled against the operator's schema when the pack loads, and checked
// on every call on the dispatcher's argument stack: tensor dtypes, device, rank, contiguity, shape
// symbols bound consistently and within the ranges the kernel was verified on, and every scalar
// argument equal to the card's (a `dim` compared after wrapping a negative one). No allocation and no
// string work on the path that accepts; a mismatch says which check failed, and can describe it.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include "pack/manifest.h"

namespace kforge::runtime {

enum class Mismatch { None, Device, Arch, Dtype, Rank, Shape, Layout, Alignment, Argument, Kernel, Autograd, Count };

// Where a tensor's data must start for the kernel to take it. The worker verifies on buffers at least
// 256-byte aligned (its allocations, each behind a guard band of whole 64 KiB); a CUDA tensor that starts
// elsewhere (x[1:] of a flat tensor, contiguous but 4 bytes off) was never shown to the kernel, whose
// vector loads may fault there, so ATen runs it. On the CPU the bar is the 64 bytes libtorch's allocator
// promises (every fresh CPU tensor would fail 256), which covers the widest aligned SIMD load.
inline constexpr uintptr_t kVerifiedAlignment = 256;
inline constexpr uintptr_t kCpuAlignment = 64;
const char *mismatchName(Mismatch m); // "device", "dtype", ... as the counters print them

inline constexpr int kMaxSymbols = 16;

struct Binding {
    std::array<int64_t, kMaxSymbols> value{};
    uint32_t bound = 0; // bit per symbol
    int device = -1;    // the first tensor's device index
};

class Guard {
public:
    // Throws Error when the kernel's arguments cannot be matched to the schema.
    Guard(const pack::PackKernel &kernel, const c10::FunctionSchema &schema, c10::DeviceType device);

    // `args` points at the operator's first argument on the stack. `recordsGrad`: the kernel stands in
    // front of autograd (a composite operator), so a call that autograd must record falls back.
    Mismatch check(const c10::IValue *args, Binding &b, bool recordsGrad = false) const;
    // What check() found, in words ("x: dtype Double, the kernel takes Float"); for the counters' examples.
    std::string describe(const c10::IValue *args) const;

    size_t argumentCount() const { return m_argCount; }
    const std::vector<std::string> &symbols() const { return m_symbols; }
    // The sizes each tensor has in the kernel's terms (a flattened tensor as rows x cols).
    std::vector<int64_t> kernelSizes(const pack::TensorGuard &t, const Binding &b) const;
    // The sizes of output `i` as the caller sees it (like the input it mirrors, or from the symbols).
    std::vector<int64_t> outputSizes(size_t i, const c10::IValue *args, const Binding &b) const;
    int symbolIndex(const std::string &name) const; // -1 when the kernel has none
    c10::DeviceType deviceType() const { return m_device; }

private:
    struct TensorCheck {
        int arg = 0;
        c10::ScalarType dtype = c10::ScalarType::Float;
        bool flatten = false;
        bool contiguous = true;
        int rank = 0;
        std::array<int8_t, 8> sym{};
        std::string name;
        // A mask [mrows, cols] broadcast over the rows of the tensor at argument `over`: its runs (minner,
        // mstep, mblock, ops/mask_rows.h) bind these symbols.
        int over = -1;
        std::array<int8_t, 3> runSym{};
    };
    struct ValueCheck {
        enum class Kind { Int, Bool, Double, Str, IntList, None, Sym, SymList } kind = Kind::Int;
        int arg = 0;
        bool isDim = false;
        int64_t i = 0;
        double d = 0;
        std::string s;
        std::vector<int64_t> ints;
        std::vector<int8_t> syms;
        std::string name;
    };
    struct OutputRule {
        int likeInput = -1;   // the input tensor whose call sizes it takes
        bool dropLast = false; // ... without its last dimension (a row reduction)
        std::vector<int8_t> sym;
    };

    Mismatch checkTensor(const TensorCheck &t, const at::Tensor &x, const c10::IValue *args, Binding &b, bool first) const;
    Mismatch bindExtent(int s, int64_t extent, Binding &b) const;
    Mismatch checkValue(const ValueCheck &v, const c10::IValue &iv, int64_t rank, Binding &b) const;
    // The first of m_multiples the bound extents break, or null.
    const std::pair<int8_t, int8_t> *brokenMultiple(const Binding &b) const;
    int symbol(const std::string &name);

    c10::DeviceType m_device;
    uintptr_t m_alignment; // kVerifiedAlignment, or kCpuAlignment for a CPU kernel
    size_t m_argCount = 0;
    std::vector<TensorCheck> m_tensors;
    std::vector<ValueCheck> m_values;
    std::vector<OutputRule> m_outputs;
    std::vector<std::string> m_symbols;
    std::vector<pack::SymbolRange> m_ranges;
    std::vector<std::pair<int8_t, int8_t>> m_multiples; // symbol indices (a, b): a's extent a multiple of b's
    int m_rankArg = -1; // the argument a `dim` wraps against
};

} // namespace kforge::runtime
