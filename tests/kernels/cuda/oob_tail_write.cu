// A correct softmax that also writes one element past the end of its output, and one before it: no
// fault (the memory is mapped), caught by the guard bands around the output.
/* kforge-launch
{"kernels":[{"name":"oob_tail_write","grid":["ceil_div(rows, 4)"],"block":[128],"args":["in:x","out:y","sym:rows","sym:cols"]}]}
*/
extern "C" __global__ void oob_tail_write(const T *__restrict__ x, T *__restrict__ y, long long rows, long long cols)
{
    const long long row = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows)
        return;
    const T *xr = x + row * cols;
    T *yr = y + row * cols;
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
    if (row == rows - 1 && lane == 0) {
        y[rows * cols] = from_f(0.5f);
        y[-1] = from_f(0.5f);
    }
}
