// cuda.scaled_softmax.rows and cuda.scaled_masked_softmax.rows: attention's softmax chain in one pass,
// y = softmax(x * SCALE [+ mask], -1) in float32, written in T. One block per row; a row of up to
// BLOCK * VEC * REG elements is held in registers, so x (and the mask row) is read once and y written
// once; a longer row (a held-out shape) takes a slower loop that reads x three times. MASK is 1 when
// a mask [mrows, cols] is added, row r taking mask row kf_mask_row(r, ...) (mask_rows.cuh: the mask
// broadcast over x's leading dimensions, as ATen's add does it).
extern "C" __global__ void __launch_bounds__(BLOCK)
kf_scaled_softmax(const T *__restrict__ x, const T *__restrict__ mask, T *__restrict__ y, long long rows, long long cols, long long mrows,
                 long long minner, long long mstep, long long mblock)
{
    __shared__ float sh[32];
    const long long r = blockIdx.x;
    if (r >= rows)
        return;
    const T *xr = x + r * cols;
    const T *mr = MASK ? mask + kf_mask_row(r, mrows, minner, mstep, mblock) * cols : nullptr;
    T *yr = y + r * cols;
    const float scale = SCALE;
    if (cols <= (long long)BLOCK * VEC * REG) {
        const bool vec_ok = VEC > 1 && cols % VEC == 0 && aligned_to(xr, VEC * sizeof(T)) && aligned_to(yr, VEC * sizeof(T))
                         && (!MASK || aligned_to(mr, VEC * sizeof(T)));
        float v[REG * VEC];
        float m = -KF_INF;
#pragma unroll
        for (int k = 0; k < REG; ++k) {
            const long long c = ((long long)k * BLOCK + threadIdx.x) * VEC;
            if (vec_ok && c + VEC <= cols) {
                load_floats<VEC>(xr + c, v + k * VEC);
                if (MASK) {
                    float mk[VEC];
                    load_floats<VEC>(mr + c, mk);
#pragma unroll
                    for (int j = 0; j < VEC; ++j) v[k * VEC + j] = v[k * VEC + j] * scale + mk[j];
                } else {
#pragma unroll
                    for (int j = 0; j < VEC; ++j) v[k * VEC + j] *= scale;
                }
            } else {
#pragma unroll
                for (int j = 0; j < VEC; ++j)
                    v[k * VEC + j] = c + j < cols ? to_f(xr[c + j]) * scale + (MASK ? to_f(mr[c + j]) : 0.f) : -KF_INF;
            }
#pragma unroll
            for (int j = 0; j < VEC; ++j) m = fmaxf(m, v[k * VEC + j]);
        }
        m = block_max(m, sh);
        float s = 0.f;
#pragma unroll
        for (int i = 0; i < REG * VEC; ++i) {
            v[i] = __expf(v[i] - m);
            s += v[i];
        }
        const float inv = 1.f / block_sum(s, sh);
#pragma unroll
        for (int k = 0; k < REG; ++k) {
            const long long c = ((long long)k * BLOCK + threadIdx.x) * VEC;
#pragma unroll
            for (int j = 0; j < VEC; ++j) v[k * VEC + j] *= inv;
            if (vec_ok && c + VEC <= cols) {
                store_floats<VEC>(yr + c, v + k * VEC);
            } else {
#pragma unroll
                for (int j = 0; j < VEC; ++j)
                    if (c + j < cols) yr[c + j] = from_f(v[k * VEC + j]);
            }
        }
        return;
    }
    // A row longer than the registers hold: max, sum, write, each a pass over x.
    float m = -KF_INF;
    for (long long c = threadIdx.x; c < cols; c += BLOCK)
        m = fmaxf(m, to_f(xr[c]) * scale + (MASK ? to_f(mr[c]) : 0.f));
    m = block_max(m, sh);
    float s = 0.f;
    for (long long c = threadIdx.x; c < cols; c += BLOCK)
        s += __expf(to_f(xr[c]) * scale + (MASK ? to_f(mr[c]) : 0.f) - m);
    const float inv = 1.f / block_sum(s, sh);
    for (long long c = threadIdx.x; c < cols; c += BLOCK)
        yr[c] = from_f(__expf(to_f(xr[c]) * scale + (MASK ? to_f(mr[c]) : 0.f) - m) * inv);
}
