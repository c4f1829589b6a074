// One block per (sample, group) at a time; with GRID_BLOCKS > 0 a persistent grid walks the groups, so
// the groups in flight fit in L2 and the second read of each group hits it.
extern "C" __global__ void __launch_bounds__(BLOCK)
kf_group_norm(const T *__restrict__ x, const T *__restrict__ w, const T *__restrict__ bias, T *__restrict__ y,
              long long n, long long c, long long hw, long long groups)
{
    const long long total = n * groups, cpg = c / groups, per = cpg * hw;
    const bool vec_ok = VEC > 1 && hw % VEC == 0 && aligned_to(x, VEC * sizeof(T)) && aligned_to(y, VEC * sizeof(T));
    for (long long gi = blockIdx.x; gi < total; gi += gridDim.x) {
        const long long s = gi / groups, g = gi % groups;
        const T *xg = x + (s * c + g * cpg) * hw;
        T *yg = y + (s * c + g * cpg) * hw;
        // Moments about the group's first element: no cancellation when the mean is far from zero.
        const float k = to_f(xg[0]);
        float s1 = 0.f, s2 = 0.f;
        if (vec_ok) {
            for (long long i = (long long)threadIdx.x * VEC; i < per; i += (long long)BLOCK * VEC) {
                const Pack<VEC> pk = *reinterpret_cast<const Pack<VEC> *>(xg + i);
#pragma unroll
                for (int j = 0; j < VEC; ++j) { const float d = to_f(pk.v[j]) - k; s1 += d; s2 += d * d; }
            }
        } else {
            for (long long i = threadIdx.x; i < per; i += BLOCK) { const float d = to_f(xg[i]) - k; s1 += d; s2 += d * d; }
        }
        block_sum2(s1, s2);
        const float m1 = s1 / (float)per;
        const float mean = k + m1, rstd = rsqrtf(fmaxf(s2 / (float)per - m1 * m1, 0.f) + EPS);
        for (long long cc = 0; cc < cpg; ++cc) {
            const long long ch = g * cpg + cc;
            const float a = rstd * to_f(w[ch]), sh = to_f(bias[ch]) - mean * a;
            const T *xc = xg + cc * hw;
            T *yc = yg + cc * hw;
            if (vec_ok) {
                for (long long i = (long long)threadIdx.x * VEC; i < hw; i += (long long)BLOCK * VEC) {
                    const Pack<VEC> in = *reinterpret_cast<const Pack<VEC> *>(xc + i);
                    Pack<VEC> out;
#pragma unroll
                    for (int j = 0; j < VEC; ++j) out.v[j] = from_f(to_f(in.v[j]) * a + sh);
                    *reinterpret_cast<Pack<VEC> *>(yc + i) = out;
                }
            } else {
                for (long long i = threadIdx.x; i < hw; i += BLOCK) yc[i] = from_f(to_f(xc[i]) * a + sh);
            }
        }
    }
}
