// Does the real work only when its output's first element is a NaN (as the guard's fill is), and
// otherwise copies x to y. Checked and timed runs get the same kind of fill, so it can never take the
// fast path: correct, at its honest speed.
/* kforge-launch
{"kernels":[{"name":"nan_sniffer","grid":["ceil_div(rows, 4)"],"block":[128],"args":["in:x","out:y","sym:rows","sym:cols"]}]}
*/
extern "C" __global__ void nan_sniffer(const T *__restrict__ x, T *__restrict__ y, long long rows, long long cols)
{
    const float first = to_f(y[0]);
    const long long row = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows)
        return;
    const T *xr = x + row * cols;
    T *yr = y + row * cols;
    if (first == first) { // not NaN: a run nobody checks, it hopes
        for (long long i = lane; i < cols; i += 32)
            yr[i] = xr[i];
        return;
    }
    float m = -KF_INF;
    for (long long i = lane; i < cols; i += 32)
        m = fmaxf(m, to_f(xr[i]));
    m = warp_max(m);
    float s = 0.f;
    for (long long i = lane; i < cols; i += 32)
        s += expf(to_f(xr[i]) - m);
    s = warp_sum(s);
    for (long long i = lane; i < cols; i += 32)
        yr[i] = from_f(expf(to_f(xr[i]) - m) / s);
}
