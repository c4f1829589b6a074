// A block per row with a shared-memory reduction across 32 warps and no __syncthreads(): thread 0
// combines partials other warps may not have written yet, and the other warps read the combined
// value before thread 0 has written it. Wrong on some rows, differently on every run.
/* kforge-launch
{"kernels":[{"name":"race_softmax","grid":["rows"],"block":[1024],"args":["in:x","out:y","sym:rows","sym:cols"]}]}
*/
extern "C" __global__ void race_softmax(const T *x, T *y, long long rows, long long cols)
{
    __shared__ float part[32];
    __shared__ float stat[2];
    const T *xr = x + (long long)blockIdx.x * cols;
    T *yr = y + (long long)blockIdx.x * cols;
    const int w = threadIdx.x / 32, lane = threadIdx.x % 32, nw = blockDim.x / 32;
    float m = -KF_INF;
    for (long long i = threadIdx.x; i < cols; i += blockDim.x)
        m = fmaxf(m, to_f(xr[i]));
    m = warp_max(m);
    if (lane == 0)
        part[w] = m;
    if (threadIdx.x == 0) { // missing barrier before: partials may be stale
        float t = part[0];
        for (int k = 1; k < nw; ++k)
            t = fmaxf(t, part[k]);
        stat[0] = t;
    }
    m = stat[0]; // missing barrier before: may be another row's maximum
    float s = 0.f;
    for (long long i = threadIdx.x; i < cols; i += blockDim.x)
        s += expf(to_f(xr[i]) - m);
    s = warp_sum(s);
    if (lane == 0)
        part[w] = s;
    if (threadIdx.x == 0) {
        float t = 0.f;
        for (int k = 0; k < nw; ++k)
            t += part[k];
        stat[1] = t;
    }
    s = stat[1];
    for (long long i = threadIdx.x; i < cols; i += blockDim.x)
        yr[i] = from_f(expf(to_f(xr[i]) - m) / s);
}
