// cpu.softmax.vector's helpers: VW-float vectors (GCC/Clang vector extensions) and a vectorized exp.
#include <cmath>
#include <cstring>

// GCC/Clang vector extensions: VW floats per vector, lowered to whatever SIMD the host has.
typedef float vf __attribute__((vector_size(VW * 4)));
typedef int32_t vi __attribute__((vector_size(VW * 4)));

static inline vf load(const float *p) { vf v; std::memcpy(&v, p, sizeof v); return v; }
static inline void store(float *p, vf v) { std::memcpy(p, &v, sizeof v); }
static inline vf splat(float x) { vf v; for (int i = 0; i < VW; ++i) v[i] = x; return v; }

// exp(x) = 2^n * p(r), |r| <= ln2/2; n rounded with the 1.5*2^23 trick so it stays in vector registers.
static inline vf poly_exp(vf x)
{
    typedef vf F;
    // Constants by splat, not x * 0: x may be -inf (masked attention), and -inf * 0 is NaN.
    const F lo = splat(-87.0f);
    x = x < lo ? lo : x;
    const F magic = splat(12582912.0f);
    const F n = (x * 1.44269504088896341f + magic) - magic;
    const F r = x - n * 0.693359375f + n * 2.12194440e-4f;
#if EXP_POLY_DEGREE >= 6
    F q = r * (1.0f / 720) + 1.0f / 120;
    q = q * r + 1.0f / 24;
#else
    F q = splat(1.0f / 24);
#endif
    q = q * r + 1.0f / 6;
    q = q * r + 0.5f;
    q = q * r + 1.0f;
    q = q * r + 1.0f;
    // Convert n to integers, then reinterpret the shifted bits as floats (a vector cast is a bit cast).
    return q * (vf)(__builtin_convertvector(n + 127.0f, vi) << 23);
}

static inline float poly_exp(float x)
{
    return poly_exp(splat(x))[0];
}

