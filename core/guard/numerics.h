#pragma once
// The numerics rule of the guard, pure: no torch, no CUDA. The worker measures errors; this decides.
//
// Every output element is compared with a float64 reference computed on the same inputs. Its error is
// counted in units of what rounding alone may cost that element:
//   unit_i = eps(out) * (|ref_i| + rms(ref))                  every model: the value's own rounding, with
//                                                             a floor at the output's typical size
//          + eps(acc) * log2(terms) * size_i                `norm`: the relative error of statistics
//                                                             reduced over `terms` elements (a row, a group)
//                                                             carried by the normalized term, of size |ref_i|,
//                                                             or for an affine norm |x^||w| + |b| (it cancels)
//          + eps(acc) * log2(terms) * magnitude_i            `sum`: the same reduction or scan over |x|,
//                                                             accumulated at float32 (float64 for float64)
// ATen's own output on the same inputs is measured the same way. A candidate passes when its worst
// element is within kAtenFactor times ATen's worst, and never held to less than kFloorUnits (ATen may be
// exact). So a scan or a long reduction is allowed the error its summation order makes, while zeros, a
// NaN, an unwritten element or a 16-bit accumulator stay far outside the bound at any shape and dtype.
// `exact` outputs (ReLU, max, argmax) must equal ATen's bit for bit.
//
// NaN and Inf must match ATen's, with one exception: the overflow edge of a 16-bit output. Where the
// float64 reference is finite, ATen's NaN or Inf defines nothing (a scan that overflowed inside ATen
// stays Inf, or turns NaN, though the value came back in range), so there a candidate's finite value is
// measured against the reference as any other, and its Inf (not its NaN) is measured as the overflow
// threshold, the value past which rounding gives Inf, against the reference held within it: an Inf
// for a true value just past the threshold costs nothing, an Inf for a small value is far off.
#include <cstdint>
#include <optional>
#include <string>

#include "ops/operator_card.h"
#include "protocol/verdict.h"

namespace kforge::guard {

inline constexpr double kAtenFactor = 8.0;
inline constexpr double kFloorUnits = 4.0;
// A candidate whose error is a quarter of the output's size is no better than a constant, unless ATen's is
// too (the output is rounding noise; the bound in units still holds the candidate to ATen's error).
inline constexpr double kTrivialRelativeRms = 0.25;

double epsilon(DType t);             // machine epsilon of the output type (1 for integers: exact anyway)
double accumulationEpsilon(DType t); // float32's for 16- and 32-bit floats, float64's for float64
// The factor the `sum` model gives a reduction of `terms` elements per result.
double termsFactor(int64_t terms);
// The smallest magnitude a value of type t rounds to Inf from (round to nearest even): 65520 for
// float16; the largest finite double for float64, where no finite reference overflows.
double overflowThreshold(DType t);
// How many units a candidate may be off, given ATen's worst on the same inputs.
double allowedUnits(double atenUnits);

// What the worker measured on one output of one run.
struct OutputErrors {
    std::string name;
    int64_t numel = 0;
    int64_t unwritten = 0;          // elements still holding the fill written before the run
    int64_t nonFiniteMismatch = 0;  // NaN/Inf unlike ATen's, other than at the overflow edge (above)
    int64_t firstNonFinite = -1;    // index of the first such element
    double nonFiniteGot = 0, nonFiniteExpected = 0;
    double candidateUnits = 0;      // worst error of the candidate, in units
    double atenUnits = 0;           // worst error of ATen's output, in units
    int64_t overBound = 0;          // elements of the candidate over allowedUnits(atenUnits) (exact: != ATen)
    int64_t worstIndex = -1;        // the candidate's worst element
    double worstGot = 0, worstExpected = 0, worstAten = 0;
    double candidateRelativeRms = 0; // rms(candidate - ref) / rms(ref)
    // The same for ATen's output, measured only where the candidate's is over kTrivialRelativeRms: an
    // output that is rounding noise (a batch norm over one value per channel is 0, its float64
    // reference about 1e-14) leaves ATen as far from the reference as a constant.
    double atenRelativeRms = 0;
};

// The first rule the output breaks, as a reason (code and message), or nothing.
std::optional<Reason> judgeOutput(const OutputErrors &e, ErrorModel model);

} // namespace kforge::guard
