#pragma once
// One-pass versions of the harness's passes over large tensors (worker/torch/checks.h defines each with
// libtorch ops, chunk by chunk, which on a billion-element output costs seconds per check). A device
// that has them (CUDA: worker/cuda/harness_passes.h) registers them once; checks.cpp uses them for
// contiguous tensors on that device and keeps its own definition everywhere else. They compute the
// same numbers (kforge-harness-passes-test compares both on the GPU); what the numbers mean stays in
// core/guard/. No torch here: pointers, element counts and types.
#include <cstdint>

namespace kforge::worker {

// Element types the passes read, by how checks.cpp treats them (a one-byte type is its bits).
enum class PassElem : int { F32 = 0, F16 = 1, BF16 = 2, F64 = 3, I64 = 4, I32 = 5, I16 = 6, Byte = 7 };

struct PassOperands {
    const void *candidate = nullptr; // the output as the candidate wrote it
    const void *aten = nullptr;      // ATen's output, same type and size
    const double *reference = nullptr; // the float64 reference
    const double *magnitude = nullptr; // the same operation over |inputs|, or null
    int64_t numel = 0;
    PassElem type = PassElem::F32; // of candidate and aten: a floating type
};

struct FirstCount {
    int64_t count = 0;
    int64_t first = -1; // the first index counted, -1 when none
};

struct NonFiniteScan {
    FirstCount mismatches; // non-finite values unlike ATen's where the reference is not finite, or the candidate's NaN
    double referenceSumSq = 0; // of the reference's finite values
};

// The unit of an element: (|r| + rms) * eps, plus |magnitude| * accEps (or |r| * accEps when
// `referenceScaled`), never below the smallest normal double. `overflow`: the output type's
// guard::overflowThreshold, where a candidate's Inf unlike ATen's is measured from.
struct UnitRule {
    double rms = 0, eps = 0, accEps = 0;
    bool referenceScaled = false;
    double overflow = 0;
};

struct UnitScan {
    double candidateMax = 0; // worst error in units where the reference is finite (core/guard/numerics.h)
    int64_t candidateAt = -1; // its first index
    double atenMax = 0;
    double errorSumSq = 0; // the candidate's squared errors, as candidateMax measures them
};

class FastPasses {
public:
    virtual ~FastPasses() = default;
    // checks.cpp's fill pattern for `seed`, written over n elements.
    virtual void fill(void *data, int64_t n, PassElem type, uint64_t seed) = 0;
    // Elements still holding that pattern.
    virtual int64_t countPattern(const void *data, int64_t n, PassElem type, uint64_t seed) = 0;
    virtual int64_t countChanged(const void *a, const void *b, int64_t n, int elemBytes) = 0;
    virtual int64_t fingerprint(const void *data, int64_t n, int elemBytes) = 0;
    // Values unequal to ATen's, NaN matching NaN.
    virtual FirstCount exactMismatches(const PassOperands &ops) = 0;
    virtual NonFiniteScan nonFinite(const PassOperands &ops) = 0;
    virtual UnitScan units(const PassOperands &ops, const UnitRule &rule) = 0;
    virtual int64_t countOver(const PassOperands &ops, const UnitRule &rule, double allowedUnits) = 0;
};

// The process's device passes (a worker has one device), or null. Set by the device when it is made,
// cleared before it goes.
void useFastPasses(FastPasses *passes);
FastPasses *fastPasses();

} // namespace kforge::worker
