#include "worker/torch/checks.h"

#include <cmath>
#include <cstdio>

#include "worker/pipeline/fast_passes.h"

namespace kforge::worker {

namespace {

constexpr int64_t kChunk = int64_t(1) << 24; // elements per float64 chunk: 128 MiB per tensor

FastPasses *g_passes = nullptr;

// How the device passes read a tensor of this type: as checks here treat it (a one-byte type is its
// bits); none for a type whose fill below has no pass.
std::optional<PassElem> passElem(at::ScalarType t)
{
    switch (t) {
    case at::kFloat: return PassElem::F32;
    case at::kHalf: return PassElem::F16;
    case at::kBFloat16: return PassElem::BF16;
    case at::kDouble: return PassElem::F64;
    case at::kLong: return PassElem::I64;
    case at::kInt: return PassElem::I32;
    case at::kShort: return PassElem::I16;
    default: return at::elementSize(t) == 1 ? std::optional(PassElem::Byte) : std::nullopt;
    }
}

// The device passes, where they apply: every tensor contiguous on the device they were made for (the
// one the worker uses, so any CUDA tensor here), and of a type they read.
FastPasses *passesFor(std::initializer_list<const at::Tensor *> ts)
{
    if (!g_passes)
        return nullptr;
    for (const auto *t : ts)
        if (!t->defined() || !t->is_cuda() || !t->is_contiguous() || !passElem(t->scalar_type()))
            return nullptr;
    return g_passes;
}

// Calls f(start, count) over [0, total) in chunks of kChunk elements.
template<typename F>
void forChunks(int64_t total, F &&f)
{
    for (int64_t s = 0; s < total; s += kChunk)
        f(s, std::min(kChunk, total - s));
}

at::ScalarType bitsType(at::ScalarType t)
{
    switch (at::elementSize(t)) {
    case 1: return at::kByte;
    case 2: return at::kShort;
    case 4: return at::kInt;
    default: return at::kLong;
    }
}

// A counter-based mix (splitmix64's finalizer) over element indices, so any chunk of a pattern can be
// made again without storing it. Signed int64 arithmetic wraps on every libtorch device.
at::Tensor mixed(int64_t start, int64_t n, uint64_t seed, at::Device device)
{
    auto z = at::arange(start, start + n, at::TensorOptions().dtype(at::kLong).device(device));
    z = z.add(int64_t(seed * 0x9E3779B97F4A7C15ull));
    z = at::bitwise_xor(z, z.__rshift__(30)).mul(int64_t(0xBF58476D1CE4E5B9ull));
    z = at::bitwise_xor(z, z.__rshift__(27)).mul(int64_t(0x94D049BB133111EBull));
    return at::bitwise_xor(z, z.__rshift__(31));
}

// The fill's bits for elements [start, start + n) of a tensor of type `t`, in bitsType(t).
at::Tensor fillBits(at::ScalarType t, int64_t start, int64_t n, uint64_t seed, at::Device device)
{
    const auto z = mixed(start, n, seed, device);
    const auto neg = z.lt(0).to(at::kLong);
    switch (t) {
    case at::kFloat: // exponent all ones, quiet bit clear, payload never zero: a signalling NaN, sign from z
        return (at::bitwise_or(z.bitwise_and(0x3fffff), 1).bitwise_or(0x7f800000) + neg * (int64_t(1) << 31)).to(at::kInt);
    case at::kHalf:
        return (at::bitwise_or(z.bitwise_and(0x1ff), 1).bitwise_or(0x7c00) + neg * 32768).to(at::kShort);
    case at::kBFloat16:
        return (at::bitwise_or(z.bitwise_and(0x3f), 1).bitwise_or(0x7f80) + neg * 32768).to(at::kShort);
    case at::kDouble:
        return at::bitwise_or(z.bitwise_and(int64_t(0x3ffffffffffffll)), 1)
            .bitwise_or(int64_t(0x7ff0000000000000ll))
            .bitwise_or(z.bitwise_and(std::numeric_limits<int64_t>::min()));
    case at::kInt: return (z.bitwise_and(int64_t(0xffffffffll)) - (int64_t(1) << 31)).to(at::kInt);
    case at::kShort: return (z.bitwise_and(0xffff) - 32768).to(at::kShort);
    case at::kByte: return z.bitwise_and(0xff).to(at::kByte);
    default: return z.to(bitsType(t)); // the low bits of z, in the type the tensor's bits are viewed as
    }
}

std::string fmt(const char *f, double a, double b = 0)
{
    char buf[200];
    std::snprintf(buf, sizeof buf, f, a, b);
    return buf;
}

} // namespace

void useFastPasses(FastPasses *passes)
{
    g_passes = passes;
}

FastPasses *fastPasses()
{
    return g_passes;
}

void fillUnwritten(at::Tensor &t, uint64_t seed)
{
    if (auto *p = passesFor({&t}))
        return p->fill(t.data_ptr(), t.numel(), *passElem(t.scalar_type()), seed);
    auto flat = t.view(bitsType(t.scalar_type())).view({-1});
    forChunks(flat.numel(), [&](int64_t s, int64_t n) {
        flat.narrow(0, s, n).copy_(fillBits(t.scalar_type(), s, n, seed, t.device()));
    });
}

int64_t countUnwritten(const at::Tensor &t, uint64_t seed)
{
    if (auto *p = passesFor({&t}))
        return p->countPattern(t.data_ptr(), t.numel(), *passElem(t.scalar_type()), seed);
    const auto flat = t.view(bitsType(t.scalar_type())).view({-1});
    int64_t count = 0;
    forChunks(flat.numel(), [&](int64_t s, int64_t n) {
        count += flat.narrow(0, s, n).eq(fillBits(t.scalar_type(), s, n, seed, t.device())).sum().item<int64_t>();
    });
    return count;
}

void fillBytes(at::Tensor &bytes, uint64_t seed)
{
    fillUnwritten(bytes, seed); // a byte tensor's fill is random bytes
}

int64_t countChangedBytes(const at::Tensor &bytes, uint64_t seed)
{
    return bytes.numel() - countUnwritten(bytes, seed);
}

int64_t countChanged(const at::Tensor &a, const at::Tensor &b)
{
    // By chunks: a whole 7.5 GB tensor's comparison is a 1.9 GB mask, which sum() widens to a 15 GB
    // int64 copy, and that ran the H200 out of memory on a group norm of 112x64x512x512.
    if (auto *p = passesFor({&a, &b}); p && a.scalar_type() == b.scalar_type() && a.numel() == b.numel())
        return p->countChanged(a.data_ptr(), b.data_ptr(), a.numel(), int(a.element_size()));
    const auto bt = bitsType(a.scalar_type());
    const auto fa = a.contiguous().view(bt).view({-1}), fb = b.contiguous().view(bt).view({-1});
    int64_t count = 0;
    forChunks(fa.numel(), [&](int64_t s, int64_t n) { count += fa.narrow(0, s, n).ne(fb.narrow(0, s, n)).sum().item<int64_t>(); });
    return count;
}

int64_t fingerprint(const at::Tensor &t)
{
    if (auto *p = passesFor({&t}))
        return p->fingerprint(t.data_ptr(), t.numel(), int(t.element_size()));
    const auto bits = t.contiguous().view(bitsType(t.scalar_type())).view({-1});
    uint64_t sum = 0; // wraps, like the tensor arithmetic
    forChunks(bits.numel(), [&](int64_t s, int64_t n) {
        const auto w = at::arange(s + 1, s + n + 1, bits.options().dtype(at::kLong)).mul(int64_t(0x9E3779B97F4A7C15ull));
        sum += uint64_t((bits.narrow(0, s, n).to(at::kLong) * w).sum().item<int64_t>());
    });
    return int64_t(sum);
}

namespace {

// The unit of an element's error (fast_passes.h's UnitRule), given the reference's rms.
UnitRule unitRule(double rms, const Reference64 &ref, ErrorModel model, DType dtype)
{
    UnitRule u;
    u.rms = rms;
    u.eps = guard::epsilon(dtype);
    u.accEps = guard::accumulationEpsilon(dtype) * guard::termsFactor(ref.terms);
    // `sum`: |x| reduced alike (the magnitude); `norm`: the affine terms' size
    u.referenceScaled = !ref.magnitude.defined() && model == ErrorModel::Normalization;
    u.overflow = guard::overflowThreshold(dtype);
    return u;
}

// measureOutput's passes as device kernels, one read of the operands each (fast_passes.h): the same
// numbers as the libtorch passes below.
void measureWithPasses(FastPasses &p, guard::OutputErrors &e, const at::Tensor &candidate, const at::Tensor &aten, const Reference64 &ref,
                       ErrorModel model, DType dtype)
{
    PassOperands ops;
    ops.candidate = candidate.data_ptr();
    ops.aten = aten.data_ptr();
    ops.reference = ref.value.data_ptr<double>();
    ops.magnitude = ref.magnitude.defined() ? ref.magnitude.data_ptr<double>() : nullptr;
    ops.numel = e.numel;
    ops.type = *passElem(candidate.scalar_type());
    const auto c = candidate.reshape({-1}), a = aten.reshape({-1}), r = ref.value.reshape({-1});
    auto valueAt = [](const at::Tensor &t, int64_t i) { return t[i].item<double>(); };
    if (model == ErrorModel::Exact) {
        const auto bad = p.exactMismatches(ops);
        e.overBound = bad.count;
        if (bad.first >= 0) {
            e.worstIndex = bad.first;
            e.worstGot = valueAt(c, bad.first);
            e.worstAten = e.worstExpected = valueAt(a, bad.first);
        }
        return;
    }
    const auto nf = p.nonFinite(ops);
    e.nonFiniteMismatch = nf.mismatches.count;
    if (nf.mismatches.first >= 0) {
        e.firstNonFinite = nf.mismatches.first;
        e.nonFiniteGot = valueAt(c, nf.mismatches.first);
        e.nonFiniteExpected = valueAt(a, nf.mismatches.first);
    }
    if (e.nonFiniteMismatch > 0)
        return;
    const auto rule = unitRule(std::sqrt(nf.referenceSumSq / double(e.numel)), ref, model, dtype);
    const auto u = p.units(ops, rule);
    e.atenUnits = std::max(e.atenUnits, u.atenMax);
    if (u.candidateAt >= 0) {
        e.candidateUnits = std::max(e.candidateUnits, u.candidateMax);
        e.worstIndex = u.candidateAt;
        e.worstGot = valueAt(c, u.candidateAt);
        e.worstExpected = valueAt(r, u.candidateAt);
        e.worstAten = valueAt(a, u.candidateAt);
    }
    e.candidateRelativeRms = rule.rms > 0 ? std::sqrt(u.errorSumSq / double(e.numel)) / rule.rms : 0.0;
    if (model != ErrorModel::Exact && e.candidateRelativeRms > guard::kTrivialRelativeRms) {
        // ATen's own distance, by the same pass with ATen's output in the candidate's place.
        auto atenOps = ops;
        atenOps.candidate = ops.aten;
        e.atenRelativeRms = std::sqrt(p.units(atenOps, rule).errorSumSq / double(e.numel)) / rule.rms;
    }
    const double allowed = guard::allowedUnits(e.atenUnits);
    if (e.candidateUnits > allowed)
        e.overBound = p.countOver(ops, rule, allowed);
}

} // namespace

guard::OutputErrors measureOutput(const std::string &name, const at::Tensor &candidate, const at::Tensor &aten, const Reference64 &ref,
                                  ErrorModel model, DType dtype, uint64_t seed)
{
    guard::OutputErrors e;
    e.name = name;
    e.numel = candidate.numel();
    e.unwritten = countUnwritten(candidate, seed);
    if (e.unwritten > 0 || e.numel == 0)
        return e;
    if (at::isFloatingType(candidate.scalar_type()) && aten.scalar_type() == candidate.scalar_type() && aten.numel() == e.numel
        && ref.value.scalar_type() == at::kDouble && ref.value.numel() == e.numel
        && (!ref.magnitude.defined() || (ref.magnitude.scalar_type() == at::kDouble && ref.magnitude.numel() == e.numel)))
        if (auto *p = ref.magnitude.defined() ? passesFor({&candidate, &aten, &ref.value, &ref.magnitude}) : passesFor({&candidate, &aten, &ref.value})) {
            measureWithPasses(*p, e, candidate, aten, ref, model, dtype);
            return e;
        }
    // Chunks are compared where the candidate's output is: a float64 reference that had to stay on the
    // host comes over a chunk at a time rather than every chunk's arithmetic running on the host.
    const auto where = candidate.device();
    const auto c = candidate.reshape({-1}), a = aten.reshape({-1}), r = ref.value.reshape({-1});
    const auto m = ref.magnitude.defined() ? ref.magnitude.reshape({-1}) : at::Tensor();
    auto chunk = [&](const at::Tensor &t, int64_t s, int64_t n) { return t.narrow(0, s, n).to(where).to(at::kDouble); };

    if (model == ErrorModel::Exact || !at::isFloatingType(candidate.scalar_type())) {
        // Equal to ATen's result, NaN where it has NaN.
        forChunks(e.numel, [&](int64_t s, int64_t n) {
            const auto cc = chunk(c, s, n), ac = chunk(a, s, n);
            const auto bad = cc.ne(ac).logical_and(cc.isnan().logical_and(ac.isnan()).logical_not());
            const int64_t k = bad.sum().item<int64_t>();
            if (k > 0 && e.worstIndex < 0) {
                const int64_t i = bad.to(at::kInt).argmax().item<int64_t>();
                e.worstIndex = s + i;
                e.worstGot = cc[i].item<double>();
                e.worstAten = e.worstExpected = ac[i].item<double>();
            }
            e.overBound += k;
        });
        return e;
    }

    // Pass 1: non-finite values must match ATen's exactly, but where the reference is finite (there pass 2
    // measures a candidate's finite value or Inf; numerics.h); the reference's rms sets the unit's floor.
    double sumSq = 0;
    forChunks(e.numel, [&](int64_t s, int64_t n) {
        const auto cc = chunk(c, s, n), ac = chunk(a, s, n), rc = chunk(r, s, n);
        const auto measured = rc.isfinite().logical_and(cc.isnan().logical_not());
        const auto bad = (cc.isfinite().logical_not().logical_or(ac.isfinite().logical_not()))
                             .logical_and(cc.isnan().logical_and(ac.isnan()).logical_or(cc.eq(ac)).logical_not())
                             .logical_and(measured.logical_not());
        const int64_t k = bad.sum().item<int64_t>();
        if (k > 0 && e.firstNonFinite < 0) {
            const int64_t i = bad.to(at::kInt).argmax().item<int64_t>();
            e.firstNonFinite = s + i;
            e.nonFiniteGot = cc[i].item<double>();
            e.nonFiniteExpected = ac[i].item<double>();
        }
        e.nonFiniteMismatch += k;
        sumSq += at::where(rc.isfinite(), rc * rc, at::zeros_like(rc)).sum().item<double>();
    });
    if (e.nonFiniteMismatch > 0)
        return e;
    const auto rule = unitRule(std::sqrt(sumSq / double(e.numel)), ref, model, dtype);
    const double rms = rule.rms;

    // Pass 2: worst errors in units, for both; pass 3 counts the candidate's elements over the bound.
    // ATen's errors where both are finite; the candidate's also where its Inf is not ATen's (numerics.h).
    auto units = [&](const at::Tensor &x, const at::Tensor &rc, const at::Tensor &unit) {
        const auto both = x.isfinite().logical_and(rc.isfinite());
        return at::where(both, (x - rc).abs() / unit, at::zeros_like(x));
    };
    auto candidateError = [&](const at::Tensor &cc, const at::Tensor &ac, const at::Tensor &rc) {
        const auto edge = (cc.sign() * rule.overflow - rc.clamp(-rule.overflow, rule.overflow)).abs();
        const auto err = at::where(cc.isfinite().logical_and(rc.isfinite()), (cc - rc).abs(), at::zeros_like(cc));
        return at::where(cc.isinf().logical_and(rc.isfinite()).logical_and(cc.ne(ac)), edge, err);
    };
    auto unitOf = [&](const at::Tensor &rc, int64_t s, int64_t n) {
        auto u = (rc.abs() + rms) * rule.eps;
        if (m.defined())
            u = u + chunk(m, s, n).abs() * rule.accEps;
        else if (rule.referenceScaled)
            u = u + rc.abs() * rule.accEps;
        return at::clamp_min(u, std::numeric_limits<double>::min());
    };
    double errSq = 0;
    forChunks(e.numel, [&](int64_t s, int64_t n) {
        const auto cc = chunk(c, s, n), ac = chunk(a, s, n), rc = chunk(r, s, n);
        const auto u = unitOf(rc, s, n);
        const auto ce = candidateError(cc, ac, rc);
        const auto cu = ce / u;
        const double cworst = cu.max().item<double>();
        e.atenUnits = std::max(e.atenUnits, units(ac, rc, u).max().item<double>());
        if (cworst > e.candidateUnits || e.worstIndex < 0) {
            const int64_t i = cu.argmax().item<int64_t>();
            e.candidateUnits = std::max(e.candidateUnits, cworst);
            e.worstIndex = s + i;
            e.worstGot = cc[i].item<double>();
            e.worstExpected = rc[i].item<double>();
            e.worstAten = ac[i].item<double>();
        }
        errSq += (ce * ce).sum().item<double>();
    });
    e.candidateRelativeRms = rms > 0 ? std::sqrt(errSq / double(e.numel)) / rms : 0.0;
    if (model != ErrorModel::Exact && e.candidateRelativeRms > guard::kTrivialRelativeRms) {
        // ATen's own distance, a pass of its own: needed only here, not on every evaluation.
        double atenErrSq = 0;
        forChunks(e.numel, [&](int64_t s, int64_t n) {
            const auto ac = chunk(a, s, n), rc = chunk(r, s, n);
            const auto d = at::where(ac.isfinite().logical_and(rc.isfinite()), ac - rc, at::zeros_like(ac));
            atenErrSq += (d * d).sum().item<double>();
        });
        e.atenRelativeRms = std::sqrt(atenErrSq / double(e.numel)) / rms;
    }
    const double allowed = guard::allowedUnits(e.atenUnits);
    if (e.candidateUnits > allowed)
        forChunks(e.numel, [&](int64_t s, int64_t n) {
            const auto rc = chunk(r, s, n);
            e.overBound += (candidateError(chunk(c, s, n), chunk(a, s, n), rc) / unitOf(rc, s, n)).gt(allowed).sum().item<int64_t>();
        });
    return e;
}

std::optional<Reason> checkInvariant(const std::string &invariant, const at::Tensor &out)
{
    if (invariant == "rows_sum_to_one") {
        // Rows a chunk at a time, so no float64 copy of a whole output.
        const int64_t cols = std::max<int64_t>(1, out.dim() ? out.size(-1) : 1);
        const auto rows = out.reshape({-1, cols});
        double worst = 0;
        forChunks(rows.size(0) * cols, [&](int64_t s, int64_t n) {
            const int64_t r0 = s / cols, r1 = std::min<int64_t>(rows.size(0), (s + n + cols - 1) / cols);
            if (r1 > r0) {
                const auto sums = rows.narrow(0, r0, r1 - r0).to(at::kDouble).sum(-1);
                const double w = (sums - 1.0).abs().max().item<double>();
                worst = std::isnan(w) || std::isnan(worst) ? std::nan("") : std::max(worst, w);
            }
        });
        const double limit = out.scalar_type() == at::kFloat || out.scalar_type() == at::kDouble ? 1e-3 : 2e-2;
        if (!(worst <= limit))
            return Reason{reason::InvariantViolated, fmt("rows do not sum to 1: the worst row is off by %g (limit %g)", worst, limit)};
        return std::nullopt;
    }
    return Reason{reason::BadRequest, "unknown invariant '" + invariant + "'"};
}

} // namespace kforge::worker
