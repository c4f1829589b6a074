// cuda.<family>.pipe: persistent blocks streaming rows through a ring of STAGES shared-memory buffers
// that the bulk-copy engine fills ahead, weights kept in registers.

#if FAST_EXP
#define EXPF __expf
#else
#define EXPF expf
#endif
#define VEC (16 / (int)sizeof(T))

// VEC elements at i of src as floats: one 16-byte access (V), or element by element with `pad` past n.
template<bool V> __device__ __forceinline__ void get(const T *src, long long i, long long n, float pad, float *f)
{
    if (V) {
        load_floats<VEC>(src + i, f);
    } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) f[j] = i + j < n ? to_f(src[i + j]) : pad;
    }
}

// The VEC values in 16 raw bytes as floats.
__device__ __forceinline__ void raw_floats(const uint4 &r, float *f)
{
#if KF_DTYPE == 0
    f[0] = __uint_as_float(r.x); f[1] = __uint_as_float(r.y); f[2] = __uint_as_float(r.z); f[3] = __uint_as_float(r.w);
#else
    unpack2(r.x, f[0], f[1]); unpack2(r.y, f[2], f[3]); unpack2(r.z, f[4], f[5]); unpack2(r.w, f[6], f[7]);
#endif
}

// The output for one element once the row statistics a and b are known.
__device__ __forceinline__ float finish(float v, float a, float b, float wv, float bv)
{
#if FAMILY == 0
    return EXPF(v - a) * b;       // a = max, b = 1 / sum
#elif FAMILY == 1
    return (v - a) - b;           // a = max, b = log(sum)
#elif FAMILY == 2
    return (v - a) * b * wv + bv; // a = mean, b = rstd
#else
    return v * b * wv;            // b = rsqrt(mean square + eps)
#endif
}

// A block's statistics of its chunk of the row: (max, sum of exp(x - max)) for softmax, (count, mean,
// sum of squared deviations) for layer norm, (sum of squares) for RMS norm: cl_merge's layout.
struct Part { float p0, p1, p2; };

// The partial of n elements at src (V: 16-byte reads, from shared memory; else element by element).
template<bool V> __device__ Part stream_part(const T *src, long long n, float inv_n, float *sh, float *sh2)
{
    const long long stride = (long long)BLOCK * VEC;
    float f[VEC];
#if FAMILY <= 1
    float m = -KF_INF, s = 0.f;
    for (long long i = (long long)threadIdx.x * VEC; i < n; i += stride) {
        get<V>(src, i, n, -KF_INF, f);
        float pm = f[0];
#pragma unroll
        for (int j = 1; j < VEC; ++j) pm = fmaxf(pm, f[j]);
        if (pm == -KF_INF) continue;
        if (pm > m) { s = m == -KF_INF ? 0.f : s * EXPF(m - pm); m = pm; }
#pragma unroll
        for (int j = 0; j < VEC; ++j) s += EXPF(f[j] - m);
    }
    block_ms(m, s, sh, sh2);
    return {m, s, 0.f};
#elif FAMILY == 2
    float s = 0.f;
    for (long long i = (long long)threadIdx.x * VEC; i < n; i += stride) {
        get<V>(src, i, n, 0.f, f);
#pragma unroll
        for (int j = 0; j < VEC; ++j) s += f[j];
    }
    const float mean = block_sum(s, sh) * inv_n;
    float q = 0.f;
    for (long long i = (long long)threadIdx.x * VEC; i < n; i += stride) {
        get<V>(src, i, n, mean, f);
#pragma unroll
        for (int j = 0; j < VEC; ++j) q += (f[j] - mean) * (f[j] - mean);
    }
    return {(float)n, mean, block_sum(q, sh)};
#else
    float q = 0.f;
    for (long long i = (long long)threadIdx.x * VEC; i < n; i += stride) {
        get<V>(src, i, n, 0.f, f);
#pragma unroll
        for (int j = 0; j < VEC; ++j) q += f[j] * f[j];
    }
    return {block_sum(q, sh), 0.f, 0.f};
#endif
}

// The row's statistics a and b (see finish) from this block's partial and, in a cluster, every other
// block's: each posts its partial in `part` (this row's buffer of two, so one cluster barrier per row
// suffices) and cl_merge combines them into `res`.
__device__ __forceinline__ void row_stats(Part pt, float inv_len, float *part, float *res, float &a, float &b)
{
#if CL > 1
    if (threadIdx.x == 0) { part[0] = pt.p0; part[1] = pt.p1; part[2] = pt.p2; }
    cl_arrive();
    cl_wait();
    cl_merge(part, res, CL);
    __syncthreads();
    pt.p0 = res[0]; pt.p1 = res[1]; pt.p2 = res[2];
#endif
#if FAMILY <= 1
    a = pt.p0;
    b = FAMILY == 0 ? __fdividef(1.f, pt.p1) : logf(pt.p1); // 1 / sum: sum is at least 1 (the max's own term)
#elif FAMILY == 2
    a = pt.p1;
    b = rsqrtf(pt.p2 * inv_len + EPS);
#else
    a = 0.f;
    b = rsqrtf(pt.p0 * inv_len + EPS);
#endif
}

// Writes n outputs to dst from src, weights and bias read from global memory.
template<bool V> __device__ void stream_write(const T *src, const T *w, const T *bias, T *dst, long long n, float a, float b)
{
    for (long long i = (long long)threadIdx.x * VEC; i < n; i += (long long)BLOCK * VEC) {
        float f[VEC], wv[VEC], bv[VEC], o[VEC];
        get<V>(src, i, n, 0.f, f);
#if FAMILY >= 2
        get<V>(w, i, n, 0.f, wv);
#endif
#if FAMILY == 2
        get<V>(bias, i, n, 0.f, bv);
#endif
#pragma unroll
        for (int j = 0; j < VEC; ++j) o[j] = finish(f[j], a, b, wv[j], bv[j]);
        if (V) {
            store_floats<VEC>(dst + i, o);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; ++j) if (i + j < n) dst[i + j] = from_f(o[j]);
        }
    }
}

// BPS blocks a multiprocessor: the grid is sized for them, so all must be resident at once, and told the
// bound ptxas also stopped spilling a few bytes at small blocks where it chose fewer registers on its own
// (64-thread bf16 layer norm 768 wide: 64 registers and 4 bytes of spills without it, 76 and none with).
extern "C" __global__ void __launch_bounds__(BLOCK, BPS)
kf_pipe(const T *__restrict__ x, const T *__restrict__ w, const T *__restrict__ bias, T *__restrict__ y, long long rows, long long cols)
{
    extern __shared__ __align__(128) unsigned char kf_smem[];
    __shared__ unsigned long long full[STAGES];
    __shared__ float sh[BLOCK / 32], sh2[BLOCK / 32], part[2][3], res[3];
    // This block's chunk of every row: [lo, lo + clen). Clusters own rows cid, cid + G, ...
    const long long per = ((cols + CL - 1) / CL + VEC - 1) / VEC * VEC;
    const long long lo = CL > 1 ? (long long)cl_rank() * per : 0;
    const long long clen = lo < cols ? (cols - lo < per ? cols - lo : per) : 0;
    const long long cid = CL > 1 ? (long long)cl_id() : (long long)blockIdx.x;
    const long long G = CL > 1 ? (long long)cl_count() : (long long)gridDim.x;
    const long long stage = (per * (long long)sizeof(T) + 127) / 128 * 128;
    bool ok = cols % VEC == 0 && aligned_to(x, 16) && aligned_to(y, 16) && STAGES * stage <= (long long)dyn_smem_bytes();
#if FAMILY >= 2
    ok = ok && aligned_to(w, 16);
#endif
#if FAMILY == 2
    ok = ok && aligned_to(bias, 16);
#endif
    // Its rows are cid, cid + G, ... below rows: bounds, not a count, since a 64-bit division is a call
    // and registers live across a call go to the stack. For the same reason the reciprocals are the
    // approximate ones (a correctly rounded reciprocal or division has a slow-path call too): relative
    // error about 2^-22, far inside every tolerance, where a division in the row loop spilled 8-24 bytes.
    const float inv_cols = __fdividef(1.f, (float)cols), inv_clen = __fdividef(1.f, fmaxf((float)clen, 1.f));
    if (!ok) {
        for (long long k = 0; cid + k * G < rows; ++k) {
            const long long row = cid + k * G;
            const T *src = x + row * cols + lo;
            float a, b;
            row_stats(stream_part<false>(src, clen, inv_clen, sh, sh2), inv_cols, part[k & 1], res, a, b);
            stream_write<false>(src, w + lo, bias + lo, y + row * cols + lo, clen, a, b);
        }
#if CL > 1
        cl_arrive(); // no block leaves while another may still read its partials
        cl_wait();
#endif
        return;
    }
    const unsigned bytes = (unsigned)(clen * (long long)sizeof(T));
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) mbar_init(&full[s]);
        for (int s = 0; s < STAGES && cid + s * G < rows; ++s)
            bulk_copy_in(kf_smem + s * stage, x + (cid + s * G) * cols + lo, bytes, &full[s]);
    }
    __syncthreads(); // the barriers are initialised before anyone waits on them
    const long long npk = clen / VEC;
#if REGP > 0 && FAMILY >= 2
    // This thread's weight (and bias) packs, as raw 16-byte words: the same columns in every row.
    uint4 wr[REGP], br[REGP];
    if (npk <= (long long)BLOCK * REGP) {
#pragma unroll
        for (int j = 0; j < REGP; ++j) {
            const long long p = threadIdx.x + (long long)j * BLOCK;
            if (p < npk) {
                wr[j] = reinterpret_cast<const uint4 *>(w + lo)[p];
#if FAMILY == 2
                br[j] = reinterpret_cast<const uint4 *>(bias + lo)[p];
#endif
            }
        }
    }
#endif
    // The buffer s of row k (k = 0, 1, ... of this block's rows), its phase parity, and k's parity.
    int s = 0;
    unsigned phase = 0, odd = 0;
    for (long long row = cid; row < rows; row += G, odd ^= 1u, s = s + 1 == STAGES ? 0 : s + 1, phase ^= s == 0 ? 1u : 0u) {
        const T *xs = reinterpret_cast<const T *>(kf_smem + s * stage);
        T *yr = y + row * cols + lo;
        // Refills this buffer with the row STAGES ahead, once every thread is done reading it.
        auto refill = [&]() {
            if (threadIdx.x == 0 && row + STAGES * G < rows)
                bulk_copy_in(kf_smem + s * stage, x + (row + STAGES * G) * cols + lo, bytes, &full[s]);
        };
        mbar_wait(&full[s], phase);
        float a = 0.f, b = 0.f;
#if REGP > 0
        if (npk <= (long long)BLOCK * REGP) {
            float v[REGP * VEC];
#pragma unroll
            for (int j = 0; j < REGP; ++j) {
                const long long p = threadIdx.x + (long long)j * BLOCK;
                if (p < npk) load_floats<VEC>(xs + p * VEC, v + j * VEC);
                else for (int q = 0; q < VEC; ++q) v[j * VEC + q] = FAMILY <= 1 ? -KF_INF : 0.f;
            }
#if FAMILY <= 1
            float m = -KF_INF;
#pragma unroll
            for (int q = 0; q < REGP * VEC; ++q) m = fmaxf(m, v[q]);
            m = block_max(m, sh); // its barrier follows every thread's reads of the buffer
            refill();
            float t = 0.f;
#pragma unroll
            for (int q = 0; q < REGP * VEC; ++q) {
                const float e = v[q] == -KF_INF ? 0.f : EXPF(v[q] - m);
                if (FAMILY == 0) v[q] = e;
                t += e;
            }
            row_stats({m, block_sum(t, sh), 0.f}, inv_cols, part[odd], res, a, b);
            // In a cluster, this block's exps are relative to its own max, not the row's.
            const float scale = FAMILY == 0 ? (CL == 1 ? b : m == -KF_INF ? 0.f : EXPF(m - a) * b) : 0.f;
#elif FAMILY == 2
            float t = 0.f;
#pragma unroll
            for (int q = 0; q < REGP * VEC; ++q) t += v[q];
            const float mb = block_sum(t, sh) * inv_clen;
            refill();
            float qq = 0.f;
#pragma unroll
            for (int j = 0; j < REGP; ++j)
                if (threadIdx.x + (long long)j * BLOCK < npk)
                    for (int q = 0; q < VEC; ++q) qq += (v[j * VEC + q] - mb) * (v[j * VEC + q] - mb);
            row_stats({(float)clen, mb, block_sum(qq, sh)}, inv_cols, part[odd], res, a, b);
#else
            float qq = 0.f;
#pragma unroll
            for (int q = 0; q < REGP * VEC; ++q) qq += v[q] * v[q];
            const float qb = block_sum(qq, sh);
            refill();
            row_stats({qb, 0.f, 0.f}, inv_cols, part[odd], res, a, b);
#endif
#pragma unroll
            for (int j = 0; j < REGP; ++j) {
                const long long p = threadIdx.x + (long long)j * BLOCK;
                if (p >= npk) continue;
                float o[VEC], wv[VEC], bv[VEC];
#if FAMILY >= 2
                raw_floats(wr[j], wv);
#endif
#if FAMILY == 2
                raw_floats(br[j], bv);
#endif
#pragma unroll
                for (int q = 0; q < VEC; ++q) {
#if FAMILY == 0
                    o[q] = v[j * VEC + q] * scale;
#elif FAMILY == 1
                    o[q] = (v[j * VEC + q] - a) - b;
#elif FAMILY == 2
                    o[q] = (v[j * VEC + q] - a) * b * wv[q] + bv[q];
#else
                    o[q] = v[j * VEC + q] * b * wv[q];
#endif
                }
                store_floats<VEC>(yr + p * VEC, o);
            }
            continue;
        }
#endif
        row_stats(stream_part<true>(xs, clen, inv_clen, sh, sh2), inv_cols, part[odd], res, a, b);
        stream_write<true>(xs, w + lo, bias + lo, yr, clen, a, b);
        __syncthreads();
        refill();
    }
#if CL > 1
    cl_arrive(); // no block leaves while another may still read its partials
    cl_wait();
#endif
}
