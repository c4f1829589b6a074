// cuda.<softmax|log_softmax>.split: a row cut into CHUNK-element chunks across blocks; one kernel
// writes each chunk's (max, sum of exp), a second combines a row's chunks and writes it.

#if FAST_EXP
#define EXPF __expf
#else
#define EXPF expf
#endif

// Pass 1: each block reduces one chunk of one row to (max, sum of exp) in the workspace.
extern "C" __global__ void __launch_bounds__(BLOCK) kf_split_stats(const T *__restrict__ x, float2 *__restrict__ ws, long long cols)
{
    const long long row = blockIdx.y, chunk = blockIdx.x, chunks = gridDim.x;
    const long long begin = chunk * CHUNK, end = begin + CHUNK < cols ? begin + CHUNK : cols;
    const T *xr = x + row * cols;
    float m = -KF_INF, s = 0.f;
    for (long long i = begin + threadIdx.x; i < end; i += BLOCK) {
        const float v = to_f(xr[i]);
        ms_merge(m, s, v, 1.f);
    }
    __shared__ float sm[32], ss[32];
    block_ms(m, s, sm, ss);
    if (threadIdx.x == 0) ws[row * chunks + chunk] = make_float2(m, s);
}

// Pass 2: each block combines its row's chunk statistics, then writes its chunk.
extern "C" __global__ void __launch_bounds__(BLOCK) kf_split_write(const T *__restrict__ x, const float2 *__restrict__ ws, T *__restrict__ y, long long cols)
{
    const long long row = blockIdx.y, chunk = blockIdx.x, chunks = gridDim.x;
    float m = -KF_INF, s = 0.f;
    for (long long c = threadIdx.x; c < chunks; c += BLOCK) {
        const float2 p = ws[row * chunks + c];
        ms_merge(m, s, p.x, p.y);
    }
    __shared__ float sm[32], ss[32];
    block_ms(m, s, sm, ss);
    const long long begin = chunk * CHUNK, end = begin + CHUNK < cols ? begin + CHUNK : cols;
    const T *xr = x + row * cols;
    T *yr = y + row * cols;
    const float inv = 1.f / s, logs = logf(s);
    for (long long i = begin + threadIdx.x; i < end; i += BLOCK) {
        const float v = to_f(xr[i]);
        yr[i] = from_f(FAMILY == 0 ? EXPF(v - m) * inv : (v - m) - logs);
    }
}
