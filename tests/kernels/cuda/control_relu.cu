// Control for the harness: a straightforward ReLU, one 16-byte pack per thread. ATen's elementwise
// kernel does the same, so the harness must report it about as fast as eager, never a big win.
/* kforge-launch
{"kernels":[{"name":"control_relu","grid":["ceil_div(rows * cols, 256 * 4)"],"block":[256],"args":["in:x","out:y","sym:rows","sym:cols"]}]}
*/
#define VEC 4
extern "C" __global__ void __launch_bounds__(256) control_relu(const T *__restrict__ x, T *__restrict__ y, long long rows, long long cols)
{
    const long long n = rows * cols;
    const long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * VEC;
    if (i + VEC <= n && aligned_to(x, VEC * sizeof(T)) && aligned_to(y, VEC * sizeof(T))) {
        Pack<VEC> p = *reinterpret_cast<const Pack<VEC> *>(x + i);
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
            const float v = to_f(p.v[j]);
            p.v[j] = from_f(v < 0.f ? 0.f : v); // NaN stays NaN, as in ATen
        }
        *reinterpret_cast<Pack<VEC> *>(y + i) = p;
    } else {
        for (long long j = i; j < i + VEC && j < n; ++j) {
            const float v = to_f(x[j]);
            y[j] = from_f(v < 0.f ? 0.f : v);
        }
    }
}
