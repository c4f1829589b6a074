// Softmax without subtracting the row maximum: exp overflows to infinity for large inputs and the
// row becomes inf/inf = NaN. Right at scales 1 and 8, NaN at scale 64.
/* kforge-launch
{"kernels":[{"name":"nan_output","grid":["ceil_div(rows, 4)"],"block":[128],"args":["in:x","out:y","sym:rows","sym:cols"]}]}
*/
extern "C" __global__ void nan_output(const T *x, T *y, long long rows, long long cols)
{
    const long long row = (long long)blockIdx.x * 4 + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows)
        return;
    const T *xr = x + row * cols;
    T *yr = y + row * cols;
    float s = 0.f;
    for (long long i = lane; i < cols; i += 32)
        s += expf(to_f(xr[i]));
    s = warp_sum(s);
    for (long long i = lane; i < cols; i += 32)
        yr[i] = from_f(expf(to_f(xr[i])) / s);
}
