// Right output, but it overwrites its input row with zeros afterwards.
/* kforge-launch
{"kernels":[{"name":"modifies_input","grid":["ceil_div(rows, 4)"],"block":[128],"args":["in:x","out:y","sym:rows","sym:cols"]}]}
*/
extern "C" __global__ void modifies_input(const T *x, T *y, long long rows, long long cols)
{
    const long long row = (long long)blockIdx.x * 4 + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows)
        return;
    T *xr = const_cast<T *>(x) + row * cols;
    T *yr = y + row * cols;
    float m = -KF_INF;
    for (long long i = lane; i < cols; i += 32)
        m = fmaxf(m, to_f(xr[i]));
    m = warp_max(m);
    float s = 0.f;
    for (long long i = lane; i < cols; i += 32)
        s += expf(to_f(xr[i]) - m);
    s = warp_sum(s);
    for (long long i = lane; i < cols; i += 32) {
        yr[i] = from_f(expf(to_f(xr[i]) - m) / s);
        xr[i] = from_f(0.f);
    }
}
