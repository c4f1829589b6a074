// Correct for row 0 and writes nothing else: a launch plan with a single warp.
/* kforge-launch
{"kernels":[{"name":"first_row_only","grid":[1],"block":[32],"args":["in:x","out:y","sym:rows","sym:cols"]}]}
*/
extern "C" __global__ void first_row_only(const T *x, T *y, long long rows, long long cols)
{
    const int lane = threadIdx.x % 32;
    float m = -KF_INF;
    for (long long i = lane; i < cols; i += 32)
        m = fmaxf(m, to_f(x[i]));
    m = warp_max(m);
    float s = 0.f;
    for (long long i = lane; i < cols; i += 32)
        s += expf(to_f(x[i]) - m);
    s = warp_sum(s);
    for (long long i = lane; i < cols; i += 32)
        y[i] = from_f(expf(to_f(x[i]) - m) / s);
}
