// Computes the softmax only when its output still holds the one fixed poison value the guard once
// wrote before checked runs (never before timed ones); otherwise it copies x to y and returns fast.
// Every run, checked or timed, now starts from a fresh random fill, so the copy path is what the
// checks see: a mismatch.
/* kforge-launch
{"kernels":[{"name":"old_poison_sniffer","grid":["ceil_div(rows, 4)"],"block":[128],"args":["in:x","out:y","sym:rows","sym:cols"]}]}
*/
extern "C" __global__ void old_poison_sniffer(const T *__restrict__ x, T *__restrict__ y, long long rows, long long cols)
{
    const bool checked = sizeof(T) == 4 ? *(const unsigned *)y == 0x7fbadbadu : *(const unsigned short *)y == 0x7ebd;
    const long long row = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows)
        return;
    const T *xr = x + row * cols;
    T *yr = y + row * cols;
    if (!checked) {
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
