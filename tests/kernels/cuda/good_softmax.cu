// Correct warp-per-row softmax over the last dimension: each warp owns one row and makes three passes
// (max, sum of exponentials, write). Uses the template prelude's T, to_f, from_f, warp_max, warp_sum,
// so it runs in float32, float16 and bfloat16.
/* kforge-launch
{"kernels":[{"name":"good_softmax","grid":["ceil_div(rows, 4)",1,1],"block":[128,1,1],"shared_bytes":"0",
             "args":["in:x","out:y","sym:rows","sym:cols"]}],
 "workspace":[]}
*/
extern "C" __global__ void good_softmax(const T *__restrict__ x, T *__restrict__ y, long long rows, long long cols)
{
    const long long row = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows)
        return; // whole warps only: the row is the same for all 32 lanes
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
    const float inv = 1.f / s;
    for (long long i = lane; i < cols; i += 32)
        yr[i] = from_f(expf(to_f(xr[i]) - m) * inv);
}
