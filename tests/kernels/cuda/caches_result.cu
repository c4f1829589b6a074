// Keeps its last output in device memory that outlives the launch and replays it when the input's
// first element repeats: fast in a benchmark that reuses inputs. The static check rejects the mutable
// __device__ variables before anything compiles.
/* kforge-launch
{"kernels":[{"name":"caches_result","grid":["ceil_div(rows * cols, 256)"],"block":[256],"args":["in:x","out:y","sym:rows","sym:cols"]}]}
*/
__device__ float g_last[1 << 22];
__device__ float g_key;

extern "C" __global__ void caches_result(const T *x, T *y, long long rows, long long cols)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows * cols || i >= (1 << 22))
        return;
    if (g_key == to_f(x[0])) {
        y[i] = from_f(g_last[i]);
        return;
    }
    y[i] = from_f(1.f / (float)cols); // wrong, but cached for next time
    g_last[i] = 1.f / (float)cols;
    if (i == 0)
        g_key = to_f(x[0]);
}
