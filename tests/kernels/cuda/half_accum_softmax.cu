// A softmax whose sum of exponentials accumulates in float16: fast on paper, wrong by percent on
// rows of a thousand elements. Rejected against the float64 reference at any scale.
/* kforge-launch
{"kernels":[{"name":"half_accum_softmax","grid":["ceil_div(rows, 4)"],"block":[128],"args":["in:x","out:y","sym:rows","sym:cols"]}]}
*/
#include <cuda_fp16.h>
extern "C" __global__ void half_accum_softmax(const T *__restrict__ x, T *__restrict__ y, long long rows, long long cols)
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
    // One lane adds the row's exponentials in order, in float16.
    float total = 0.f;
    if (lane == 0) {
        __half s = __float2half(0.f);
        for (long long i = 0; i < cols; ++i)
            s = __hadd(s, __float2half(expf(to_f(xr[i]) - m)));
        total = __half2float(s);
    }
    total = __shfl_sync(0xffffffffu, total, 0);
    for (long long i = lane; i < cols; i += 32)
        yr[i] = from_f(expf(to_f(xr[i]) - m) / total);
}
