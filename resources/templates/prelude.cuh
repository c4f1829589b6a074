// Prepended to every CUDA template after KF_DTYPE: the storage type T with float conversions (inline
// PTX, so no CUDA headers under NVRTC), cache-hinted vector loads and stores, warp reductions and the
// online-softmax merge.

#if KF_DTYPE == 0
typedef float T;
__device__ __forceinline__ float to_f(T v) { return v; }
__device__ __forceinline__ T from_f(float v) { return v; }
#else
typedef unsigned short T;
#if KF_DTYPE == 1
__device__ __forceinline__ float to_f(T h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ T from_f(float f) { T h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
#else
__device__ __forceinline__ float to_f(T h) { return __uint_as_float(((unsigned)h) << 16); }
__device__ __forceinline__ T from_f(float f) { T h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
#endif
#endif

#define KF_INF __int_as_float(0x7f800000)
#define KF_NAN __int_as_float(0x7fffffff)

#if KF_DTYPE != 0
// Two 16-bit values in one 32-bit word, converted with one packed instruction each way.
__device__ __forceinline__ unsigned pack2(float lo, float hi)
{
    unsigned r;
#if KF_DTYPE == 1
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#else
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#endif
    return r;
}
__device__ __forceinline__ void unpack2(unsigned w, float &lo, float &hi)
{
#if KF_DTYPE == 1
    lo = to_f((T)(w & 0xffffu));
    hi = to_f((T)(w >> 16));
#else
    lo = __uint_as_float(w << 16);
    hi = __uint_as_float(w & 0xffff0000u);
#endif
}
#endif

// A load's cache hint: KEEP for data read again soon (evict-last in L1 and, by a createpolicy cache
// hint, in L2), LAST_USE for its final read (evict-first in both), else none.
enum { HINT_NONE = 0, HINT_KEEP = 1, HINT_LAST_USE = 2 };

template<int H> __device__ __forceinline__ void ld_hint_v4(const void *p, unsigned &a, unsigned &b, unsigned &c, unsigned &d)
{
    unsigned long long pol;
    if constexpr (H == HINT_KEEP) {
        asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
        asm("ld.global.L1::evict_last.L2::cache_hint.v4.b32 {%0, %1, %2, %3}, [%4], %5;"
            : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(p), "l"(pol));
    } else {
        asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
        asm("ld.global.L1::evict_first.L2::cache_hint.v4.b32 {%0, %1, %2, %3}, [%4], %5;"
            : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(p), "l"(pol));
    }
}

// N elements at p (aligned to N elements, at most 16 bytes) as floats, in one vector load; H is the
// cache hint (16-byte loads only).
template<int N, int H = HINT_NONE> __device__ __forceinline__ void load_floats(const T *p, float *o)
{
    if constexpr (H != HINT_NONE && N * sizeof(T) == 16) {
        unsigned a, b, c, d;
        ld_hint_v4<H>(p, a, b, c, d);
#if KF_DTYPE == 0
        o[0] = __uint_as_float(a); o[1] = __uint_as_float(b); o[2] = __uint_as_float(c); o[3] = __uint_as_float(d);
#else
        unpack2(a, o[0], o[1]); unpack2(b, o[2], o[3]); unpack2(c, o[4], o[5]); unpack2(d, o[6], o[7]);
#endif
        return;
    }
#if KF_DTYPE == 0
    if constexpr (N == 4) { const float4 v = *reinterpret_cast<const float4 *>(p); o[0] = v.x; o[1] = v.y; o[2] = v.z; o[3] = v.w; }
    else if constexpr (N == 2) { const float2 v = *reinterpret_cast<const float2 *>(p); o[0] = v.x; o[1] = v.y; }
    else { for (int j = 0; j < N; ++j) o[j] = p[j]; }
#else
    if constexpr (N == 8) {
        const uint4 v = *reinterpret_cast<const uint4 *>(p);
        unpack2(v.x, o[0], o[1]); unpack2(v.y, o[2], o[3]); unpack2(v.z, o[4], o[5]); unpack2(v.w, o[6], o[7]);
    } else if constexpr (N == 4) {
        const uint2 v = *reinterpret_cast<const uint2 *>(p);
        unpack2(v.x, o[0], o[1]); unpack2(v.y, o[2], o[3]);
    } else if constexpr (N == 2) {
        unpack2(*reinterpret_cast<const unsigned *>(p), o[0], o[1]);
    } else {
        o[0] = to_f(p[0]);
    }
#endif
}

// N floats stored to global memory at p (aligned as above) in one vector store. Inline PTX, because
// the compiler may split a vector store it cannot prove aligned into narrower ones.
__device__ __forceinline__ void st_v4(void *p, unsigned a, unsigned b, unsigned c, unsigned d)
{
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" :: "l"(p), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
}
__device__ __forceinline__ void st_v2(void *p, unsigned a, unsigned b)
{
    asm volatile("st.global.v2.b32 [%0], {%1, %2};" :: "l"(p), "r"(a), "r"(b) : "memory");
}
template<int N> __device__ __forceinline__ void store_floats(T *p, const float *o)
{
#if KF_DTYPE == 0
    if constexpr (N == 4) st_v4(p, __float_as_uint(o[0]), __float_as_uint(o[1]), __float_as_uint(o[2]), __float_as_uint(o[3]));
    else if constexpr (N == 2) st_v2(p, __float_as_uint(o[0]), __float_as_uint(o[1]));
    else { for (int j = 0; j < N; ++j) p[j] = o[j]; }
#else
    if constexpr (N == 8) st_v4(p, pack2(o[0], o[1]), pack2(o[2], o[3]), pack2(o[4], o[5]), pack2(o[6], o[7]));
    else if constexpr (N == 4) st_v2(p, pack2(o[0], o[1]), pack2(o[2], o[3]));
    else if constexpr (N == 2) *reinterpret_cast<unsigned *>(p) = pack2(o[0], o[1]);
    else p[0] = from_f(o[0]);
#endif
}

// N elements of T moved as one aligned load or store (16 bytes at most).
template<int N> struct __align__(sizeof(T) * N) Pack { T v[N]; };

__device__ __forceinline__ bool aligned_to(const void *p, int bytes) { return (((unsigned long long)p) % bytes) == 0; }

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Merges online-softmax states (max m, sum s of exp(x - m)).
__device__ __forceinline__ void ms_merge(float &m, float &s, float m2, float s2)
{
    const float mm = fmaxf(m, m2);
    s = (m == -KF_INF ? 0.f : s * __expf(m - mm)) + (m2 == -KF_INF ? 0.f : s2 * __expf(m2 - mm));
    m = mm;
}

__device__ __forceinline__ void warp_ms(float &m, float &s)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, o), s2 = __shfl_xor_sync(0xffffffffu, s, o);
        ms_merge(m, s, m2, s2);
    }
}
