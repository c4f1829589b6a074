// The harness's own passes over large tensors, one kernel each (worker/cuda/harness_passes.h): the
// fill that marks unwritten elements and its count, changed elements, fingerprints, and the error
// scans behind the guard's verdict. worker/torch/checks.cpp defines each pass with libtorch ops; these
// compute the same numbers in one read of their operands, and kforge-harness-passes-test checks that
// both agree. Not a candidate: compiled without static checks. Reductions leave one partial per block;
// the host adds them in block order, so a result does not depend on scheduling.
typedef long long i64;
typedef unsigned long long u64;

#define KF_THREADS 256

// Element types, as harness_passes.h numbers them.
#define KF_F32 0
#define KF_F16 1
#define KF_BF16 2
#define KF_F64 3
#define KF_I64 4
#define KF_I32 5
#define KF_I16 6
#define KF_BYTE 7

__device__ __forceinline__ int kf_size(int t)
{
    return t == KF_F64 || t == KF_I64 ? 8 : t == KF_F32 || t == KF_I32 ? 4 : t == KF_BYTE ? 1 : 2;
}

__device__ __forceinline__ u64 kf_load(const void *p, i64 i, int size)
{
    switch (size) {
    case 1: return ((const unsigned char *)p)[i];
    case 2: return ((const unsigned short *)p)[i];
    case 4: return ((const unsigned *)p)[i];
    default: return ((const u64 *)p)[i];
    }
}

__device__ __forceinline__ void kf_store(void *p, i64 i, int size, u64 v)
{
    switch (size) {
    case 1: ((unsigned char *)p)[i] = (unsigned char)v; break;
    case 2: ((unsigned short *)p)[i] = (unsigned short)v; break;
    case 4: ((unsigned *)p)[i] = (unsigned)v; break;
    default: ((u64 *)p)[i] = v; break;
    }
}

// checks.cpp's mixed(): splitmix64's finalizer with arithmetic shifts, over the element index.
__device__ __forceinline__ i64 kf_mixed(i64 index, i64 seedMul)
{
    i64 z = (i64)((u64)index + (u64)seedMul);
    z = z ^ (z >> 30);
    z = (i64)((u64)z * 0xBF58476D1CE4E5B9ull);
    z = z ^ (z >> 27);
    z = (i64)((u64)z * 0x94D049BB133111EBull);
    return z ^ (z >> 31);
}

// checks.cpp's fillBits(), as the element's bits.
__device__ __forceinline__ u64 kf_pattern(int t, i64 z)
{
    const u64 neg = z < 0 ? 1ull : 0ull;
    switch (t) {
    case KF_F32: return (u64)((z & 0x3fffff) | 1 | 0x7f800000) | (neg << 31);
    case KF_F16: return (u64)((z & 0x1ff) | 1 | 0x7c00) | (neg << 15);
    case KF_BF16: return (u64)((z & 0x3f) | 1 | 0x7f80) | (neg << 15);
    case KF_F64: return (u64)((z & 0x3ffffffffffffll) | 1 | 0x7ff0000000000000ll) | ((u64)z & 0x8000000000000000ull);
    case KF_I32: return (u64)((z & 0xffffffffll) - 2147483648ll) & 0xffffffffull;
    case KF_I16: return (u64)((z & 0xffff) - 32768) & 0xffffull;
    case KF_BYTE: return (u64)(z & 0xff);
    default: return (u64)z;
    }
}

__device__ __forceinline__ double kf_float_value(u64 bits, int t)
{
    switch (t) {
    case KF_F32: return (double)__int_as_float((int)(unsigned)bits);
    case KF_F16: {
        float f;
        const unsigned short h = (unsigned short)bits;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
        return (double)f;
    }
    case KF_BF16: return (double)__int_as_float((int)((unsigned)bits << 16));
    default: return __longlong_as_double((i64)bits);
    }
}

__device__ __forceinline__ bool kf_finite(double x)
{
    return ((__double_as_longlong(x) >> 52) & 0x7ff) != 0x7ff;
}

__device__ __forceinline__ bool kf_nan(double x)
{
    return x != x;
}

// --- block reductions: sums, and the largest value with its first index ------------------------

__device__ u64 kf_block_sum_u64(u64 v)
{
    __shared__ u64 s[KF_THREADS / 32];
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0)
        s[threadIdx.x >> 5] = v;
    __syncthreads();
    v = 0;
    if (threadIdx.x == 0)
        for (int w = 0; w < KF_THREADS / 32; ++w)
            v += s[w];
    __syncthreads();
    return v;
}

__device__ double kf_block_sum_f64(double v)
{
    __shared__ double s[KF_THREADS / 32];
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0)
        s[threadIdx.x >> 5] = v;
    __syncthreads();
    v = 0;
    if (threadIdx.x == 0)
        for (int w = 0; w < KF_THREADS / 32; ++w)
            v += s[w];
    __syncthreads();
    return v;
}

__device__ __forceinline__ void kf_better(double &best, i64 &at, double v, i64 i)
{
    if (v > best || (v == best && i < at)) {
        best = v;
        at = i;
    }
}

// The block's largest `best` and the smallest index that has it (to thread 0).
__device__ void kf_block_max(double &best, i64 &at)
{
    __shared__ double sv[KF_THREADS / 32];
    __shared__ i64 si[KF_THREADS / 32];
    for (int o = 16; o > 0; o >>= 1) {
        const double v = __shfl_down_sync(0xffffffffu, best, o);
        const i64 i = __shfl_down_sync(0xffffffffu, at, o);
        kf_better(best, at, v, i);
    }
    if ((threadIdx.x & 31) == 0) {
        sv[threadIdx.x >> 5] = best;
        si[threadIdx.x >> 5] = at;
    }
    __syncthreads();
    if (threadIdx.x == 0)
        for (int w = 1; w < KF_THREADS / 32; ++w)
            kf_better(best, at, sv[w], si[w]);
    __syncthreads();
}

__device__ i64 kf_block_min(i64 v)
{
    __shared__ i64 s[KF_THREADS / 32];
    for (int o = 16; o > 0; o >>= 1) {
        const i64 u = __shfl_down_sync(0xffffffffu, v, o);
        v = u < v ? u : v;
    }
    if ((threadIdx.x & 31) == 0)
        s[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x == 0)
        for (int w = 1; w < KF_THREADS / 32; ++w)
            v = s[w] < v ? s[w] : v;
    __syncthreads();
    return v;
}

#define KF_FOR(i, n) for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < (n); i += (i64)gridDim.x * blockDim.x)
#define KF_NONE 0x7fffffffffffffffll

// --- fills, counts and fingerprints ------------------------------------------------------------

extern "C" __global__ void kf_fill(void *p, i64 n, int t, i64 seedMul)
{
    const int size = kf_size(t);
    KF_FOR(i, n) kf_store(p, i, size, kf_pattern(t, kf_mixed(i, seedMul)));
}

extern "C" __global__ void kf_count_pattern(const void *p, i64 n, int t, i64 seedMul, u64 *partial)
{
    const int size = kf_size(t);
    const u64 mask = size == 8 ? ~0ull : (1ull << (8 * size)) - 1;
    u64 c = 0;
    KF_FOR(i, n) c += kf_load(p, i, size) == (kf_pattern(t, kf_mixed(i, seedMul)) & mask);
    c = kf_block_sum_u64(c);
    if (threadIdx.x == 0)
        partial[blockIdx.x] = c;
}

extern "C" __global__ void kf_count_changed(const void *a, const void *b, i64 n, int size, u64 *partial)
{
    u64 c = 0;
    KF_FOR(i, n) c += kf_load(a, i, size) != kf_load(b, i, size);
    c = kf_block_sum_u64(c);
    if (threadIdx.x == 0)
        partial[blockIdx.x] = c;
}

// checks.cpp's fingerprint(): the bits as a signed integer of their size (bytes unsigned), times
// (index + 1) times the golden ratio's word, summed modulo 2^64.
extern "C" __global__ void kf_fingerprint(const void *p, i64 n, int size, u64 *partial)
{
    u64 sum = 0;
    KF_FOR(i, n)
    {
        const u64 raw = kf_load(p, i, size);
        const i64 v = size == 1 ? (i64)raw : size == 2 ? (i64)(short)raw : size == 4 ? (i64)(int)raw : (i64)raw;
        sum += (u64)v * ((u64)(i + 1) * 0x9E3779B97F4A7C15ull);
    }
    sum = kf_block_sum_u64(sum);
    if (threadIdx.x == 0)
        partial[blockIdx.x] = sum;
}

// --- the error scans of measureOutput ------------------------------------------------------------

// Exact model: elements whose values differ from ATen's, NaN matching NaN. partial: count, first index.
extern "C" __global__ void kf_exact_scan(const void *cand, const void *aten, i64 n, int t, i64 *partial)
{
    const int size = kf_size(t);
    u64 count = 0;
    i64 first = KF_NONE;
    KF_FOR(i, n)
    {
        const double c = kf_float_value(kf_load(cand, i, size), t), a = kf_float_value(kf_load(aten, i, size), t);
        if (c != a && !(kf_nan(c) && kf_nan(a))) {
            ++count;
            first = i < first ? i : first;
        }
    }
    count = kf_block_sum_u64(count);
    first = kf_block_min(first);
    if (threadIdx.x == 0) {
        partial[2 * blockIdx.x] = (i64)count;
        partial[2 * blockIdx.x + 1] = first;
    }
}

// Pass 1: non-finite values that do not match ATen's exactly, but where the reference is finite and the
// candidate's value is not NaN (passes 2 and 3 measure those; core/guard/numerics.h) (count, first
// index), and the sum of the reference's finite squares (its rms is the unit's floor).
extern "C" __global__ void kf_nonfinite_scan(const void *cand, const void *aten, const double *ref, i64 n, int t, i64 *counts,
                                             double *sums)
{
    const int size = kf_size(t);
    u64 count = 0;
    i64 first = KF_NONE;
    double sq = 0;
    KF_FOR(i, n)
    {
        const double c = kf_float_value(kf_load(cand, i, size), t), a = kf_float_value(kf_load(aten, i, size), t);
        const double r = ref[i];
        if ((!kf_finite(c) || !kf_finite(a)) && !((kf_nan(c) && kf_nan(a)) || c == a) && !(kf_finite(r) && !kf_nan(c))) {
            ++count;
            first = i < first ? i : first;
        }
        if (kf_finite(r))
            sq += r * r;
    }
    count = kf_block_sum_u64(count);
    first = kf_block_min(first);
    sq = kf_block_sum_f64(sq);
    if (threadIdx.x == 0) {
        counts[2 * blockIdx.x] = (i64)count;
        counts[2 * blockIdx.x + 1] = first;
        sums[blockIdx.x] = sq;
    }
}

// The unit of one element: (|r| + rms) * eps, plus the accumulated terms' share, never zero.
__device__ __forceinline__ double kf_unit(double r, const double *mag, i64 i, double rms, double eps, double accEps, int refScaled)
{
    double u = (fabs(r) + rms) * eps;
    if (mag)
        u = u + fabs(mag[i]) * accEps;
    else if (refScaled)
        u = u + fabs(r) * accEps;
    return u > 2.2250738585072014e-308 ? u : 2.2250738585072014e-308;
}

__device__ __forceinline__ double kf_units(double x, double r, double u)
{
    return kf_finite(x) && kf_finite(r) ? fabs(x - r) / u : 0.0;
}

// The candidate's error: where both are finite, the distance; where its Inf is not ATen's and the
// reference is finite, the distance from the overflow threshold to the reference held within it.
__device__ __forceinline__ double kf_candidate_error(double c, double a, double r, double overflow)
{
    if (!kf_finite(r) || kf_nan(c))
        return 0.0;
    if (kf_finite(c))
        return fabs(c - r);
    if (c == a)
        return 0.0;
    const double held = r > overflow ? overflow : r < -overflow ? -overflow : r;
    return fabs((c > 0 ? overflow : -overflow) - held);
}

// Pass 2: the candidate's worst error in units and its first index, ATen's worst, and the candidate's
// sum of squared errors. values: candidate max, ATen max, squared errors; index: the candidate's worst.
extern "C" __global__ void kf_unit_scan(const void *cand, const void *aten, const double *ref, const double *mag, i64 n, int t, double rms,
                                        double eps, double accEps, int refScaled, double overflow, double *values, i64 *index)
{
    const int size = kf_size(t);
    double cmax = -1, amax = 0, errSq = 0;
    i64 at = KF_NONE;
    KF_FOR(i, n)
    {
        const double c = kf_float_value(kf_load(cand, i, size), t), a = kf_float_value(kf_load(aten, i, size), t), r = ref[i];
        const double u = kf_unit(r, mag, i, rms, eps, accEps, refScaled);
        const double ce = kf_candidate_error(c, a, r, overflow);
        kf_better(cmax, at, ce / u, i);
        const double au = kf_units(a, r, u);
        amax = au > amax ? au : amax;
        errSq += ce * ce;
    }
    kf_block_max(cmax, at);
    double aBest = amax;
    i64 unused = 0;
    kf_block_max(aBest, unused);
    errSq = kf_block_sum_f64(errSq);
    if (threadIdx.x == 0) {
        values[3 * blockIdx.x] = cmax;
        values[3 * blockIdx.x + 1] = aBest;
        values[3 * blockIdx.x + 2] = errSq;
        index[blockIdx.x] = at;
    }
}

// Pass 3: the candidate's elements over the allowed error.
extern "C" __global__ void kf_over_scan(const void *cand, const void *aten, const double *ref, const double *mag, i64 n, int t, double rms,
                                        double eps, double accEps, int refScaled, double overflow, double allowed, u64 *partial)
{
    const int size = kf_size(t);
    u64 count = 0;
    KF_FOR(i, n)
    {
        const double c = kf_float_value(kf_load(cand, i, size), t), a = kf_float_value(kf_load(aten, i, size), t), r = ref[i];
        count += kf_candidate_error(c, a, r, overflow) / kf_unit(r, mag, i, rms, eps, accEps, refScaled) > allowed;
    }
    count = kf_block_sum_u64(count);
    if (threadIdx.x == 0)
        partial[blockIdx.x] = count;
}
