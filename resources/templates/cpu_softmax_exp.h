// The CPU softmax kernels' exp: libm's (EXP_POLY_DEGREE 0) or a range-reduced Taylor polynomial.
#include <cmath>
#include <cstring>

static inline float kf_exp(float x)
{
#if EXP_POLY_DEGREE == 0
    return expf(x);
#else
    // exp(x) = 2^n * exp(r), |r| <= ln2/2, exp(r) by a Taylor polynomial in Horner form.
    x = x < -87.0f ? -87.0f : x;
    const float n = __builtin_floorf(x * 1.44269504088896341f + 0.5f);
    const float r = x - n * 0.693359375f + n * 2.12194440e-4f;
#if EXP_POLY_DEGREE >= 6
    float p = 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
#elif EXP_POLY_DEGREE == 4
    float p = 1.0f / 24;
#else
    float p = 0.0f;
#endif
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    const int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    std::memcpy(&scale, &bits, sizeof scale);
    return p * scale;
#endif
}

