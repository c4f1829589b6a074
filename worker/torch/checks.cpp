#include "worker/torch/checks.h"

#include <cstdio>

namespace kforge::worker {

namespace {

at::ScalarType bitsType(at::ScalarType t)
{
    switch (at::elementSize(t)) {
    case 2: return at::kShort;
    case 4: return at::kInt;
    default: return at::kLong;
    }
}

int64_t poisonBits(at::ScalarType t)
{
    switch (at::elementSize(t)) {
    case 2: return t == at::kBFloat16 ? 0x7fbd : 0x7ebd;
    case 4: return 0x7fbadbad;
    default: return 0x7ff7badbadbadbadll;
    }
}

std::string fmt(const char *f, double a, double b = 0, double c = 0)
{
    char buf[200];
    std::snprintf(buf, sizeof buf, f, a, b, c);
    return buf;
}

} // namespace

void poison(at::Tensor &t)
{
    t.view(bitsType(t.scalar_type())).fill_(poisonBits(t.scalar_type()));
}

int64_t countPoisoned(const at::Tensor &t)
{
    return t.view(bitsType(t.scalar_type())).eq(poisonBits(t.scalar_type())).sum().item<int64_t>();
}

int64_t countChanged(const at::Tensor &a, const at::Tensor &b)
{
    const auto bt = bitsType(a.scalar_type());
    return a.contiguous().view(bt).ne(b.contiguous().view(bt)).sum().item<int64_t>();
}

Comparison compareOutput(const at::Tensor &out, const at::Tensor &ref, const Tolerance &tol, const std::string &name)
{
    Comparison c;
    const auto o = out.to(at::kDouble).flatten();
    const auto r = ref.to(at::kDouble).flatten();
    const auto oFinite = o.isfinite(), rFinite = r.isfinite();
    // Non-finite values must match the reference exactly: NaN where it has NaN, the same infinity.
    const auto nonFiniteBad = (oFinite.logical_not() | rFinite.logical_not())
                                  .logical_and((o.isnan().logical_and(r.isnan())).logical_or(o.eq(r)).logical_not());
    const int64_t nBad = nonFiniteBad.sum().item<int64_t>();
    const auto both = oFinite.logical_and(rFinite);
    const auto err = at::where(both, (o - r).abs(), at::zeros_like(o));
    const auto rel = err / (r.abs() + tol.atol);
    c.maxAbsError = err.numel() ? err.max().item<double>() : 0.0;
    c.maxRelError = rel.numel() ? rel.max().item<double>() : 0.0;
    if (nBad > 0) {
        const int64_t i = nonFiniteBad.to(at::kInt).argmax().item<int64_t>();
        c.failure = CheckFailure{"unexpected_nan_or_inf",
                                 "output '" + name + "' has " + std::to_string(nBad) + " NaN/Inf values where the reference has none"
                                     + fmt(" (first at index %.0f: got %g, expected %g)", double(i), o[i].item<double>(), r[i].item<double>())};
        return c;
    }
    const auto over = err - (r.abs() * tol.rtol + tol.atol);
    const int64_t nOver = over.gt(0).sum().item<int64_t>();
    if (nOver > 0) {
        const int64_t i = over.argmax().item<int64_t>();
        c.failure = CheckFailure{"mismatch", "output '" + name + "' differs from the reference in " + std::to_string(nOver) + " of "
                                                 + std::to_string(o.numel()) + " elements"
                                                 + fmt(" (worst at index %.0f: got %.9g, expected %.9g", double(i), o[i].item<double>(), r[i].item<double>())
                                                 + fmt("; tolerance %g + %g*|expected|)", tol.atol, tol.rtol)};
    }
    return c;
}

std::optional<CheckFailure> checkInvariant(const std::string &invariant, const at::Tensor &out)
{
    if (invariant == "rows_sum_to_one") {
        const auto sums = out.to(at::kDouble).sum(-1);
        const double worst = (sums - 1.0).abs().max().item<double>();
        const double limit = out.scalar_type() == at::kFloat || out.scalar_type() == at::kDouble ? 1e-3 : 2e-2;
        if (!(worst <= limit))
            return CheckFailure{"invariant_violated", fmt("rows do not sum to 1: the worst row is off by %g (limit %g)", worst, limit)};
        return std::nullopt;
    }
    return CheckFailure{"bad_request", "unknown invariant '" + invariant + "'"};
}

Comparison checkTrial(const OperatorCard &card, const std::vector<at::Tensor> &inputs, const std::vector<at::Tensor> &inputsBefore,
                      const std::vector<at::Tensor> &outputs, const std::vector<at::Tensor> &reference, double scale)
{
    Tolerance tol = card.tolerance;
    if (tol.scaleAtol)
        tol.atol *= scale;
    Comparison worst;
    for (size_t i = 0; i < inputs.size(); ++i)
        if (const int64_t n = countChanged(inputs[i], inputsBefore[i]); n > 0) {
            worst.failure = CheckFailure{"input_modified", "input '" + card.inputs[i].name + "' was modified: " + std::to_string(n)
                                                               + " of " + std::to_string(inputs[i].numel()) + " elements changed"};
            return worst;
        }
    for (size_t i = 0; i < outputs.size(); ++i)
        if (const int64_t n = countPoisoned(outputs[i]); n > 0) {
            worst.failure = CheckFailure{"output_not_written", "output '" + card.outputs[i].name + "': " + std::to_string(n) + " of "
                                                                   + std::to_string(outputs[i].numel()) + " elements were never written"};
            return worst;
        }
    for (size_t i = 0; i < outputs.size(); ++i) {
        auto c = compareOutput(outputs[i], reference[i], tol, card.outputs[i].name);
        worst.maxAbsError = std::max(worst.maxAbsError, c.maxAbsError);
        worst.maxRelError = std::max(worst.maxRelError, c.maxRelError);
        if (c.failure) {
            worst.failure = c.failure;
            return worst;
        }
    }
    for (const auto &inv : card.invariants)
        if (auto f = checkInvariant(inv, outputs.front())) {
            worst.failure = f;
            return worst;
        }
    return worst;
}

} // namespace kforge::worker
