// The CUDA device's one-pass harness kernels (worker/cuda/harness_passes.cu) against the libtorch
// passes that define them (worker/torch/checks.cpp), on the same tensors in the same process: fills
// bit for bit, counts and fingerprints exactly, and measureOutput's errors field by field, for every
// element type, sizes that do and do not fill a block, NaN and Inf where candidate and ATen agree and
// where they do not, unwritten elements, and every error model. Then the time of one measureOutput
// both ways on a large output. Prints one line per case; exits 1 on any disagreement, 0 with "SKIP"
// where there is no CUDA device.
//   kforge-harness-passes-test [--large N]
#include <ATen/ATen.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "worker/cuda/cuda_device.h"
#include "worker/pipeline/fast_passes.h"
#include "worker/torch/checks.h"

using namespace kforge;
using namespace kforge::worker;

namespace {

int g_failures = 0, g_cases = 0;
FastPasses *g_fast = nullptr;

void report(bool ok, const std::string &what, const std::string &detail = {})
{
    ++g_cases;
    if (!ok)
        ++g_failures;
    std::printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", what.c_str(), detail.empty() ? "" : ": ", detail.c_str());
}

// f() with the device passes, then with the libtorch passes.
template<typename F>
auto bothWays(F &&f)
{
    useFastPasses(g_fast);
    auto a = f();
    useFastPasses(nullptr);
    auto b = f();
    useFastPasses(g_fast);
    return std::make_pair(a, b);
}

at::ScalarType bitsOf(at::ScalarType t)
{
    switch (at::elementSize(t)) {
    case 1: return at::kByte;
    case 2: return at::kShort;
    case 4: return at::kInt;
    default: return at::kLong;
    }
}

bool sameBits(const at::Tensor &a, const at::Tensor &b)
{
    return at::equal(a.view(bitsOf(a.scalar_type())), b.view(bitsOf(b.scalar_type())));
}

// Random contents of any type, as random bits (floating types then hold some NaN and Inf too).
at::Tensor randomBits(int64_t n, at::ScalarType t, const at::Device &dev)
{
    auto x = at::empty({n}, at::TensorOptions().dtype(t).device(dev));
    auto bits = x.view(bitsOf(t));
    bits.copy_(at::randint(-(int64_t(1) << 62), int64_t(1) << 62, {n}, at::TensorOptions().dtype(at::kLong).device(dev)).to(bitsOf(t)));
    return x;
}

void fillsAndCounts(at::ScalarType t, int64_t n, const at::Device &dev)
{
    const std::string what = std::string(c10::toString(t)) + " n=" + std::to_string(n);
    const uint64_t seed = 0x1234567 + uint64_t(n);
    auto fast = at::empty({n}, at::TensorOptions().dtype(t).device(dev)), slow = at::empty_like(fast);
    useFastPasses(g_fast);
    fillUnwritten(fast, seed);
    useFastPasses(nullptr);
    fillUnwritten(slow, seed);
    useFastPasses(g_fast);
    report(sameBits(fast, slow), "fill " + what);

    // Some elements written over (with bits unlike the fill's): both count the rest as unwritten.
    const int64_t k = std::min<int64_t>(n, 1 + n / 7);
    auto idx = at::randperm(n, at::TensorOptions().dtype(at::kLong).device(dev)).narrow(0, 0, k);
    fast.view(bitsOf(t)).index_put_({idx}, fast.view(bitsOf(t)).index({idx}).bitwise_not());
    const auto unwritten = bothWays([&] { return countUnwritten(fast, seed); });
    report(unwritten.first == unwritten.second && unwritten.first == n - k, "unwritten " + what,
           std::to_string(unwritten.first) + " and " + std::to_string(unwritten.second) + ", expected " + std::to_string(n - k));

    const auto a = randomBits(n, t, dev);
    auto b = a.clone();
    b.view(bitsOf(t)).index_put_({idx}, b.view(bitsOf(t)).index({idx}).bitwise_not());
    const auto changed = bothWays([&] { return countChanged(a, b); });
    report(changed.first == changed.second && changed.first == k, "changed " + what,
           std::to_string(changed.first) + " and " + std::to_string(changed.second) + ", expected " + std::to_string(k));
    const auto prints = bothWays([&] { return fingerprint(a); });
    const auto other = bothWays([&] { return fingerprint(b); });
    report(prints.first == prints.second && other.first == other.second && prints.first != other.first, "fingerprint " + what);
}

bool close(double a, double b)
{
    if (std::isnan(a) || std::isnan(b))
        return std::isnan(a) && std::isnan(b);
    if (a == b) // Inf included
        return true;
    return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)});
}

std::string describe(const guard::OutputErrors &e)
{
    char buf[512];
    std::snprintf(buf, sizeof buf, "unwritten %lld nonfinite %lld@%lld (%g vs %g) units %.17g aten %.17g over %lld worst@%lld (%g, %g, %g) rms %.17g, aten %.17g",
                  (long long)e.unwritten, (long long)e.nonFiniteMismatch, (long long)e.firstNonFinite, e.nonFiniteGot, e.nonFiniteExpected,
                  e.candidateUnits, e.atenUnits, (long long)e.overBound, (long long)e.worstIndex, e.worstGot, e.worstExpected, e.worstAten,
                  e.candidateRelativeRms, e.atenRelativeRms);
    return buf;
}

bool sameErrors(const guard::OutputErrors &a, const guard::OutputErrors &b)
{
    return a.unwritten == b.unwritten && a.nonFiniteMismatch == b.nonFiniteMismatch && a.firstNonFinite == b.firstNonFinite
        && close(a.nonFiniteGot, b.nonFiniteGot) && close(a.nonFiniteExpected, b.nonFiniteExpected) && close(a.candidateUnits, b.candidateUnits)
        && close(a.atenUnits, b.atenUnits) && a.overBound == b.overBound && a.worstIndex == b.worstIndex && close(a.worstGot, b.worstGot)
        && close(a.worstExpected, b.worstExpected) && close(a.worstAten, b.worstAten) && close(a.candidateRelativeRms, b.candidateRelativeRms)
        && close(a.atenRelativeRms, b.atenRelativeRms);
}

struct ErrorCase {
    const char *name;
    ErrorModel model;
    bool magnitude;
    int wrong;          // elements of the candidate made wrong
    int nonFinite;      // NaN/Inf put in both candidate and ATen at the same places
    int nonFiniteAlone; // NaN/Inf in the candidate alone
    int unwritten;      // elements left holding the fill
    // The overflow edge (core/guard/numerics.h), 4 elements each: a reference just past the type's
    // threshold, ATen Inf or NaN there, the candidate its largest finite value or Inf; and (edge 2) also
    // the candidate's Inf for a small value.
    int edge = 0;
};

void errors(at::ScalarType t, DType dtype, int64_t n, const ErrorCase &c, const at::Device &dev)
{
    const std::string what = std::string("errors ") + c.name + " " + c10::toString(t) + " n=" + std::to_string(n);
    auto opts = at::TensorOptions().device(dev);
    Reference64 ref;
    ref.value = at::randn({n}, opts.dtype(at::kDouble));
    if (c.magnitude) {
        ref.magnitude = ref.value.abs() * 3 + 1;
        ref.terms = 64;
    }
    auto aten = ref.value.to(t);
    auto cand = (ref.value * (1 + 1e-7 * at::randn({n}, opts.dtype(at::kDouble)))).to(t);
    auto some = [&](int k, int64_t salt) {
        return (at::arange(k, opts.dtype(at::kLong)) * (n / std::max(k, 1) + salt)).remainder(n);
    };
    if (c.wrong > 0)
        cand.index_put_({some(c.wrong, 3)}, at::full({c.wrong}, 5.0, opts.dtype(t)));
    if (c.nonFinite > 0) {
        const auto at2 = some(c.nonFinite, 11);
        const auto v = at::full({c.nonFinite}, std::numeric_limits<double>::infinity(), opts.dtype(t));
        cand.index_put_({at2}, v);
        aten.index_put_({at2}, v);
        ref.value.index_put_({at2}, v.to(at::kDouble));
    }
    if (c.nonFiniteAlone > 0)
        cand.index_put_({some(c.nonFiniteAlone, 17)}, at::full({c.nonFiniteAlone}, std::nan(""), opts.dtype(t)));
    if (c.edge > 0 && n >= 30) {
        const double overflow = guard::overflowThreshold(dtype), inf = std::numeric_limits<double>::infinity();
        const auto at4 = some(4, 29);
        const auto past = at::full({4}, overflow * 1.001, opts.dtype(at::kDouble)); // Inf itself for float64
        ref.value.index_put_({at4}, past);
        aten.index_put_({at4}, at::tensor({inf, std::nan(""), inf, inf}, opts.dtype(at::kDouble)).to(t));
        const double largest = dtype == DType::F16 ? 65504.0 : dtype == DType::BF16 ? 0x1.fep127 : dtype == DType::F32 ? 0x1.fffffep127 : 0x1.fffffffffffffp1023;
        cand.index_put_({at4}, at::tensor({inf, inf, largest, -inf}, opts.dtype(at::kDouble)).to(t));
        if (c.edge > 1)
            cand.index_put_({some(2, 31)}, at::full({2}, inf, opts.dtype(t)));
    }
    const uint64_t seed = 99 + uint64_t(n);
    if (c.unwritten > 0) {
        auto fill = at::empty_like(cand);
        fillUnwritten(fill, seed);
        const auto at3 = some(c.unwritten, 23);
        cand.index_put_({at3}, fill.index({at3}));
    }
    const auto e = bothWays([&] { return measureOutput("y", cand, aten, ref, c.model, dtype, seed); });
    report(sameErrors(e.first, e.second), what, sameErrors(e.first, e.second) ? describe(e.first) : describe(e.first) + " | torch: " + describe(e.second));
}

double millis(const std::chrono::steady_clock::time_point &t0)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

int main(int argc, char **argv)
{
    int64_t large = int64_t(1) << 28; // 268M float32 elements (1 GiB; its float64 reference 2 GiB)
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], "--large") == 0)
            large = std::atoll(argv[i + 1]);
    std::string why;
    auto device = makeCudaDevice(&why);
    if (!device) {
        std::printf("SKIP: no CUDA device: %s\n", why.c_str());
        return 0;
    }
    g_fast = fastPasses();
    if (!g_fast) {
        std::printf("FAIL: the CUDA device registered no harness passes (is KFORGE_HARNESS_PASSES=torch set?)\n");
        return 1;
    }
    const auto dev = device->torchDevice();
    at::manual_seed(7);
    for (auto t : {at::kFloat, at::kHalf, at::kBFloat16, at::kDouble, at::kLong, at::kInt, at::kShort, at::kByte, at::kBool, at::kChar})
        for (int64_t n : {int64_t(1), int64_t(255), int64_t(256), int64_t(1000003), int64_t(40000037)})
            fillsAndCounts(t, n, dev);

    const ErrorCase cases[] = {
        {"clean pointwise", ErrorModel::Pointwise, false, 0, 0, 0, 0},
        {"wrong pointwise", ErrorModel::Pointwise, false, 9, 0, 0, 0},
        {"shared inf", ErrorModel::Pointwise, false, 3, 5, 0, 0},
        {"nan alone", ErrorModel::Pointwise, false, 0, 0, 4, 0},
        {"unwritten", ErrorModel::Pointwise, false, 0, 0, 0, 6},
        {"normalization", ErrorModel::Normalization, false, 2, 0, 0, 0},
        {"sum with magnitude", ErrorModel::Sum, true, 2, 0, 0, 0},
        {"exact clean", ErrorModel::Exact, false, 0, 0, 0, 0},
        {"exact wrong", ErrorModel::Exact, false, 7, 3, 0, 0},
        {"overflow edge", ErrorModel::Pointwise, false, 0, 0, 0, 0, 1},
        {"overflow edge, Inf for small values", ErrorModel::Sum, true, 0, 0, 0, 0, 2},
    };
    const std::pair<at::ScalarType, DType> types[] = {
        {at::kFloat, DType::F32}, {at::kHalf, DType::F16}, {at::kBFloat16, DType::BF16}, {at::kDouble, DType::F64}};
    for (const auto &c : cases)
        for (const auto &[t, d] : types)
            for (int64_t n : {int64_t(1), int64_t(300), int64_t(1000003), int64_t(30000001)})
                if (n >= 30 || (c.wrong == 0 && c.nonFinite == 0 && c.nonFiniteAlone == 0 && c.unwritten == 0 && c.edge == 0))
                    errors(t, d, n, c, dev);

    // The time of one check of a large float32 output both ways (clean: every pass runs).
    {
        auto opts = at::TensorOptions().device(dev);
        Reference64 ref;
        ref.value = at::randn({large}, opts.dtype(at::kDouble));
        const auto aten = ref.value.to(at::kFloat), cand = aten.clone();
        for (bool fast : {true, false}) {
            useFastPasses(fast ? g_fast : nullptr);
            measureOutput("y", cand, aten, ref, ErrorModel::Pointwise, DType::F32, 1); // warm
            device->synchronize("timing");
            const auto t0 = std::chrono::steady_clock::now();
            const auto e = measureOutput("y", cand, aten, ref, ErrorModel::Pointwise, DType::F32, 1);
            device->synchronize("timing");
            std::printf("TIME measureOutput of %lld float32 elements with the %s passes: %.1f ms (units %.3g)\n", (long long)large,
                        fast ? "device" : "libtorch", millis(t0), e.candidateUnits);
            auto out = at::empty_like(cand);
            const auto t1 = std::chrono::steady_clock::now();
            fillUnwritten(out, 5);
            const auto left = countUnwritten(out, 5);
            device->synchronize("timing");
            std::printf("TIME fill and count of %lld float32 elements with the %s passes: %.1f ms (%lld left)\n", (long long)large,
                        fast ? "device" : "libtorch", millis(t1), (long long)left);
        }
        useFastPasses(g_fast);
    }
    std::printf("%d of %d cases agree\n", g_cases - g_failures, g_cases);
    return g_failures == 0 ? 0 : 1;
}
