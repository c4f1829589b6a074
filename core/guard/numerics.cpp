#include "guard/numerics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace kforge::guard {

double epsilon(DType t)
{
    switch (t) {
    case DType::F16: return 0x1p-10;
    case DType::BF16: return 0x1p-7;
    case DType::F32: return 0x1p-23;
    case DType::F64: return 0x1p-52;
    case DType::I64:
    case DType::I32:
    case DType::Bool: return 1.0;
    }
    return 1.0;
}

double accumulationEpsilon(DType t)
{
    return t == DType::F64 ? 0x1p-52 : 0x1p-23;
}

double termsFactor(int64_t terms)
{
    return std::max(1.0, std::log2(double(std::max<int64_t>(terms, 2))));
}

double overflowThreshold(DType t)
{
    switch (t) {
    case DType::F16: return 65520.0;                  // (2 - 2^-11) * 2^15
    case DType::BF16: return 0x1.ffp127;              // (2 - 2^-8) * 2^127
    case DType::F32: return 0x1.ffffffp127;           // (2 - 2^-24) * 2^127
    default: return std::numeric_limits<double>::max();
    }
}

double allowedUnits(double atenUnits)
{
    return std::max(kAtenFactor * (std::isfinite(atenUnits) ? atenUnits : 0.0), kFloorUnits);
}

namespace {
std::string fmt(const char *f, double a, double b = 0, double c = 0, double d = 0)
{
    char buf[256];
    std::snprintf(buf, sizeof buf, f, a, b, c, d);
    return buf;
}
} // namespace

std::optional<Reason> judgeOutput(const OutputErrors &e, ErrorModel model)
{
    const std::string of = " of " + std::to_string(e.numel);
    if (e.unwritten > 0)
        return Reason{reason::OutputNotWritten,
                      "output '" + e.name + "': " + std::to_string(e.unwritten) + of + " elements were never written"};
    if (e.nonFiniteMismatch > 0)
        return Reason{reason::UnexpectedNonFinite,
                      "output '" + e.name + "' has " + std::to_string(e.nonFiniteMismatch)
                          + " elements where its NaN or Inf values differ from ATen's"
                          + fmt(" (first at index %.0f: got %g, ATen %g)", double(e.firstNonFinite), e.nonFiniteGot,
                                e.nonFiniteExpected)};
    if (e.overBound > 0) {
        if (model == ErrorModel::Exact)
            return Reason{reason::Mismatch, "output '" + e.name + "' differs from ATen's exact result in " + std::to_string(e.overBound) + of
                                                + fmt(" elements (first at index %.0f: got %.9g, expected %.9g)", double(e.worstIndex),
                                                      e.worstGot, e.worstAten)};
        return Reason{reason::Mismatch,
                      "output '" + e.name + "' differs from the float64 reference in " + std::to_string(e.overBound) + of
                          + fmt(" elements: its worst error is %.3g units against ATen's %.3g (allowed %.3g)", e.candidateUnits,
                                e.atenUnits, allowedUnits(e.atenUnits))
                          + fmt("; worst at index %.0f: got %.9g, expected %.9g, ATen %.9g", double(e.worstIndex), e.worstGot,
                                e.worstExpected, e.worstAten)};
    }
    if (model != ErrorModel::Exact && e.candidateRelativeRms > kTrivialRelativeRms && !(e.atenRelativeRms > kTrivialRelativeRms))
        return Reason{reason::Mismatch, "output '" + e.name + "'"
                                            + fmt(" is off by %.0f%% of its own size (rms of the error over rms of the reference)",
                                                  e.candidateRelativeRms * 100)
                                            + ": no closer than a constant"};
    return std::nullopt;
}

} // namespace kforge::guard
