// cuda.add_rms_norm_cast.rows: the residual add and the RMSNorm after it, as a decoder writes them,
//   h = x + residual;  y = weight * (hf * rsqrt(mean(hf^2) + EPS)).to(h.dtype),  hf = h.float()
// in one pass: a block per row, each thread keeping REG packs of VEC elements of h in registers (the rest
// of a longer row is streamed and read back from what this thread wrote). h is rounded to the storage type
// before its statistics, and the normalized value before the weight multiplies it, as the chain rounds; with
// WEIGHT_OFFSET (Gemma's norm) y = hf * rstd * (1 + weight) in float32, rounded once.

// h = x + r for VEC elements at i, rounded to T, stored; returns the sum of squares of the rounded values.
__device__ __forceinline__ float ar_add(const T *xr, const T *rr, T *hr, long long i, long long n, bool vec_ok, float *hv)
{
    float a[VEC], b[VEC];
    load_vec(xr, i, n, vec_ok, 0.f, a);
    load_vec(rr, i, n, vec_ok, 0.f, b);
    float ss = 0.f;
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
        hv[j] = to_f(from_f(a[j] + b[j]));
        ss += hv[j] * hv[j];
    }
    store_vec(hr, i, n, vec_ok, hv);
    return ss;
}

__device__ __forceinline__ void ar_norm(const T *w, T *yr, long long i, long long n, bool vec_ok, const float *hv, float rstd)
{
    float wv[VEC], o[VEC];
    load_vec(w, i, n, vec_ok, 0.f, wv);
#pragma unroll
    for (int j = 0; j < VEC; ++j)
#ifdef WEIGHT_OFFSET
        o[j] = hv[j] * rstd * (1.f + wv[j]);
#else
        o[j] = to_f(from_f(hv[j] * rstd)) * wv[j];
#endif
    store_vec(yr, i, n, vec_ok, o);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
kf_add_rms(const T *__restrict__ x, const T *__restrict__ r, const T *__restrict__ w, T *__restrict__ h, T *__restrict__ y, long long rows,
           long long cols)
{
    __shared__ float sh[32];
    const long long row = blockIdx.x;
    if (row >= rows)
        return;
    const long long off = row * cols;
    const T *xr = x + off, *rr = r + off;
    T *hr = h + off, *yr = y + off;
    const int bytes = VEC * sizeof(T);
    const bool vec_ok = cols % VEC == 0 && aligned_to(x, bytes) && aligned_to(r, bytes) && aligned_to(w, bytes) && aligned_to(h, bytes)
                        && aligned_to(y, bytes);
    constexpr long long KEPT = (long long)BLOCK * VEC * REG; // elements of a row held in registers
    float kept[REG][VEC];
    float ss = 0.f;
#pragma unroll
    for (int k = 0; k < REG; ++k) {
        const long long i = ((long long)k * BLOCK + threadIdx.x) * VEC;
        if (i < cols)
            ss += ar_add(xr, rr, hr, i, cols, vec_ok, kept[k]);
    }
    for (long long i = KEPT + (long long)threadIdx.x * VEC; i < cols; i += (long long)BLOCK * VEC) {
        float hv[VEC];
        ss += ar_add(xr, rr, hr, i, cols, vec_ok, hv);
    }
    const float rstd = rsqrtf(block_sum(ss, sh) / (float)cols + EPS);
#pragma unroll
    for (int k = 0; k < REG; ++k) {
        const long long i = ((long long)k * BLOCK + threadIdx.x) * VEC;
        if (i < cols)
            ar_norm(w, yr, i, cols, vec_ok, kept[k], rstd);
    }
    for (long long i = KEPT + (long long)threadIdx.x * VEC; i < cols; i += (long long)BLOCK * VEC) {
        float hv[VEC];
        load_vec(hr, i, cols, vec_ok, 0.f, hv); // this thread's own store above
        ar_norm(w, yr, i, cols, vec_ok, hv, rstd);
    }
}
