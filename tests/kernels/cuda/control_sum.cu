// Control for the harness: a straightforward sum over the last dimension, one 256-thread block per row
// with 16-byte loads, a warp shuffle and a shared-memory combine. About as fast as ATen's reduction.
/* kforge-launch
{"kernels":[{"name":"control_sum","grid":["rows"],"block":[256],"args":["in:x","out:y","sym:rows","sym:cols"]}]}
*/
extern "C" __global__ void __launch_bounds__(256) control_sum(const T *__restrict__ x, T *__restrict__ y, long long rows, long long cols)
{
    __shared__ float part[8];
    const T *xr = x + (long long)blockIdx.x * cols;
    float acc = 0.f;
    if (sizeof(T) == 4 && cols % 4 == 0 && aligned_to(xr, 16)) {
        const Pack<4> *x4 = reinterpret_cast<const Pack<4> *>(xr);
        const long long n4 = cols / 4;
        for (long long i = threadIdx.x; i < n4; i += 256) {
            const Pack<4> p = x4[i];
            acc += (to_f(p.v[0]) + to_f(p.v[1])) + (to_f(p.v[2]) + to_f(p.v[3]));
        }
    } else {
        for (long long i = threadIdx.x; i < cols; i += 256)
            acc += to_f(xr[i]);
    }
    acc = warp_sum(acc);
    if (threadIdx.x % 32 == 0)
        part[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.f;
        for (int k = 0; k < 8; ++k)
            t += part[k];
        y[blockIdx.x] = from_f(t);
    }
}
