// Caches its result in a device global declared through a macro, and names a const global after it so
// a name match would let it through. The scan of the macro-expanded source and the PTX scan, which
// rejects every module-scope global, catch it.
/* kforge-launch
{"kernels":[{"name":"macro_global","grid":["ceil_div(rows * cols, 256)"],"block":[256],"args":["in:x","out:y","sym:rows","sym:cols"]}]}
*/
#define DEV __device__
__constant__ float memo_scale = 1.f;
namespace keep { DEV float memo_scale[1 << 20]; }
extern "C" __global__ void macro_global(const T *x, T *y, long long rows, long long cols)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols && i < (1 << 20)) {
        y[i] = from_f(keep::memo_scale[i] * ::memo_scale);
        keep::memo_scale[i] = to_f(x[i]);
    }
}
