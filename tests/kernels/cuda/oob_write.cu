// Writes 2^36 elements past the start of its output: an illegal address. The fault breaks the CUDA
// context, the worker exits with "cuda_fault", the pool reports Crashed and restarts it.
/* kforge-launch
{"kernels":[{"name":"oob_write","grid":["ceil_div(rows * cols, 256)"],"block":[256],"args":["in:x","out:y","sym:rows","sym:cols"]}]}
*/
extern "C" __global__ void oob_write(const T *x, T *y, long long rows, long long cols)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols)
        y[i + (1ll << 36)] = x[i];
}
