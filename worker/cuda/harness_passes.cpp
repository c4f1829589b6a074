#include "worker/cuda/harness_passes.h"

#include <algorithm>
#include <vector>

#include "util/error.h"
#include "worker/cuda/nvrtc_compiler.h"

namespace kforge::worker {

namespace {

constexpr unsigned kThreads = 256; // KF_THREADS in harness_passes.cu
constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

// checks.cpp's seed offset: the index mix starts from seed times the golden ratio's word.
int64_t seedMul(uint64_t seed)
{
    return int64_t(seed * kGolden);
}

CUdeviceptr dptr(const void *p)
{
    return reinterpret_cast<CUdeviceptr>(p);
}

} // namespace

CudaHarnessPasses::CudaHarnessPasses(NvrtcCompiler &compiler, const std::string &arch, int sms, std::function<CUstream()> stream)
    : m_maxBlocks(unsigned(std::max(1, sms)) * 8), m_stream(std::move(stream))
{
    const auto build = compiler.compile(kHarnessPassesSource, arch, false);
    if (!build.report.ok)
        throw Error("the worker's harness passes did not compile for " + arch + ": " + build.report.log);
    cudadrv::check(m_module.load(build.cubin), "loading the harness passes");
    auto fn = [&](const char *name) {
        CUfunction f = m_module.function(name);
        if (!f)
            throw Error(std::string("the harness passes have no kernel ") + name);
        return f;
    };
    m_fill = fn("kf_fill");
    m_countPattern = fn("kf_count_pattern");
    m_countChanged = fn("kf_count_changed");
    m_fingerprint = fn("kf_fingerprint");
    m_exact = fn("kf_exact_scan");
    m_nonFinite = fn("kf_nonfinite_scan");
    m_units = fn("kf_unit_scan");
    m_over = fn("kf_over_scan");
    cudadrv::check(cuMemAlloc(&m_partials, size_t(m_maxBlocks) * 5 * 8), "allocating the harness passes' partials");
}

CudaHarnessPasses::~CudaHarnessPasses()
{
    if (m_partials)
        cuMemFree(m_partials);
}

unsigned CudaHarnessPasses::blocksFor(int64_t n) const
{
    return unsigned(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, m_maxBlocks));
}

void CudaHarnessPasses::launch(CUfunction f, unsigned blocks, void **args, const char *what)
{
    cudadrv::check(cuLaunchKernel(f, blocks, 1, 1, kThreads, 1, 1, 0, m_stream(), args, nullptr), what);
}

void CudaHarnessPasses::readBack(void *host, size_t bytes, const char *what)
{
    const CUstream s = m_stream();
    cudadrv::check(cuMemcpyDtoHAsync(host, m_partials, bytes, s), what);
    cudadrv::check(cuStreamSynchronize(s), what);
}

uint64_t CudaHarnessPasses::sumPartials(unsigned blocks, const char *what)
{
    std::vector<uint64_t> part(blocks);
    readBack(part.data(), blocks * sizeof(uint64_t), what);
    uint64_t sum = 0; // modulo 2^64, as the fingerprint wants; counts never come near it
    for (uint64_t p : part)
        sum += p;
    return sum;
}

void CudaHarnessPasses::fill(void *data, int64_t n, PassElem type, uint64_t seed)
{
    if (n <= 0)
        return;
    CUdeviceptr p = dptr(data);
    int t = int(type);
    int64_t mul = seedMul(seed);
    void *args[] = {&p, &n, &t, &mul};
    launch(m_fill, blocksFor(n), args, "the harness's fill");
}

int64_t CudaHarnessPasses::countPattern(const void *data, int64_t n, PassElem type, uint64_t seed)
{
    if (n <= 0)
        return 0;
    std::lock_guard lock(m_mutex);
    CUdeviceptr p = dptr(data), out = m_partials;
    int t = int(type);
    int64_t mul = seedMul(seed);
    const unsigned blocks = blocksFor(n);
    void *args[] = {&p, &n, &t, &mul, &out};
    launch(m_countPattern, blocks, args, "the harness's unwritten count");
    return int64_t(sumPartials(blocks, "the harness's unwritten count"));
}

int64_t CudaHarnessPasses::countChanged(const void *a, const void *b, int64_t n, int elemBytes)
{
    if (n <= 0)
        return 0;
    std::lock_guard lock(m_mutex);
    CUdeviceptr pa = dptr(a), pb = dptr(b), out = m_partials;
    int size = elemBytes;
    const unsigned blocks = blocksFor(n);
    void *args[] = {&pa, &pb, &n, &size, &out};
    launch(m_countChanged, blocks, args, "the harness's changed-element count");
    return int64_t(sumPartials(blocks, "the harness's changed-element count"));
}

int64_t CudaHarnessPasses::fingerprint(const void *data, int64_t n, int elemBytes)
{
    if (n <= 0)
        return 0;
    std::lock_guard lock(m_mutex);
    CUdeviceptr p = dptr(data), out = m_partials;
    int size = elemBytes;
    const unsigned blocks = blocksFor(n);
    void *args[] = {&p, &n, &size, &out};
    launch(m_fingerprint, blocks, args, "the harness's fingerprint");
    return int64_t(sumPartials(blocks, "the harness's fingerprint"));
}

namespace {

// Block partials (count, first) into one: counts added, the smallest first index kept.
FirstCount combineFirstCount(const std::vector<int64_t> &part, unsigned blocks)
{
    FirstCount r;
    for (unsigned b = 0; b < blocks; ++b) {
        r.count += part[2 * b];
        if (part[2 * b] > 0 && (r.first < 0 || part[2 * b + 1] < r.first))
            r.first = part[2 * b + 1];
    }
    return r;
}

} // namespace

FirstCount CudaHarnessPasses::exactMismatches(const PassOperands &ops)
{
    if (ops.numel <= 0)
        return {};
    std::lock_guard lock(m_mutex);
    CUdeviceptr c = dptr(ops.candidate), a = dptr(ops.aten), out = m_partials;
    int64_t n = ops.numel;
    int t = int(ops.type);
    const unsigned blocks = blocksFor(n);
    void *args[] = {&c, &a, &n, &t, &out};
    launch(m_exact, blocks, args, "the harness's exact comparison");
    std::vector<int64_t> part(2 * size_t(blocks));
    readBack(part.data(), part.size() * 8, "the harness's exact comparison");
    return combineFirstCount(part, blocks);
}

NonFiniteScan CudaHarnessPasses::nonFinite(const PassOperands &ops)
{
    if (ops.numel <= 0)
        return {};
    std::lock_guard lock(m_mutex);
    CUdeviceptr c = dptr(ops.candidate), a = dptr(ops.aten), r = dptr(ops.reference);
    CUdeviceptr counts = m_partials, sums = m_partials + size_t(m_maxBlocks) * 2 * 8;
    int64_t n = ops.numel;
    int t = int(ops.type);
    const unsigned blocks = blocksFor(n);
    void *args[] = {&c, &a, &r, &n, &t, &counts, &sums};
    launch(m_nonFinite, blocks, args, "the harness's non-finite scan");
    std::vector<int64_t> part(size_t(m_maxBlocks) * 3); // counts, then (from 2 * maxBlocks) the sums' bits
    readBack(part.data(), part.size() * 8, "the harness's non-finite scan");
    NonFiniteScan s;
    s.mismatches = combineFirstCount(part, blocks);
    const auto *sq = reinterpret_cast<const double *>(part.data() + 2 * size_t(m_maxBlocks));
    for (unsigned b = 0; b < blocks; ++b)
        s.referenceSumSq += sq[b];
    return s;
}

UnitScan CudaHarnessPasses::units(const PassOperands &ops, const UnitRule &rule)
{
    if (ops.numel <= 0)
        return {};
    std::lock_guard lock(m_mutex);
    CUdeviceptr c = dptr(ops.candidate), a = dptr(ops.aten), r = dptr(ops.reference), m = dptr(ops.magnitude);
    CUdeviceptr values = m_partials, index = m_partials + size_t(m_maxBlocks) * 3 * 8;
    int64_t n = ops.numel;
    int t = int(ops.type), scaled = rule.referenceScaled ? 1 : 0;
    double rms = rule.rms, eps = rule.eps, accEps = rule.accEps, overflow = rule.overflow;
    const unsigned blocks = blocksFor(n);
    void *args[] = {&c, &a, &r, &m, &n, &t, &rms, &eps, &accEps, &scaled, &overflow, &values, &index};
    launch(m_units, blocks, args, "the harness's error scan");
    std::vector<double> part(size_t(m_maxBlocks) * 4); // 3 values per block, then the indices' bits
    readBack(part.data(), part.size() * 8, "the harness's error scan");
    const auto *at = reinterpret_cast<const int64_t *>(part.data() + 3 * size_t(m_maxBlocks));
    UnitScan s;
    for (unsigned b = 0; b < blocks; ++b) {
        const double cmax = part[3 * b];
        // Strictly larger, or as large at an earlier index: the first element of the worst error.
        if (at[b] >= 0 && cmax >= 0 && (s.candidateAt < 0 || cmax > s.candidateMax || (cmax == s.candidateMax && at[b] < s.candidateAt))) {
            s.candidateMax = cmax;
            s.candidateAt = at[b];
        }
        s.atenMax = std::max(s.atenMax, part[3 * b + 1]);
        s.errorSumSq += part[3 * b + 2];
    }
    return s;
}

int64_t CudaHarnessPasses::countOver(const PassOperands &ops, const UnitRule &rule, double allowedUnits)
{
    if (ops.numel <= 0)
        return 0;
    std::lock_guard lock(m_mutex);
    CUdeviceptr c = dptr(ops.candidate), a = dptr(ops.aten), r = dptr(ops.reference), m = dptr(ops.magnitude), out = m_partials;
    int64_t n = ops.numel;
    int t = int(ops.type), scaled = rule.referenceScaled ? 1 : 0;
    double rms = rule.rms, eps = rule.eps, accEps = rule.accEps, overflow = rule.overflow, allowed = allowedUnits;
    const unsigned blocks = blocksFor(n);
    void *args[] = {&c, &a, &r, &m, &n, &t, &rms, &eps, &accEps, &scaled, &overflow, &allowed, &out};
    launch(m_over, blocks, args, "the harness's over-bound count");
    return int64_t(sumPartials(blocks, "the harness's over-bound count"));
}

} // namespace kforge::worker
