// Launches a child kernel from device code, work the plan does not show and the timer need not wait
// for. Rejected by the static check before compiling.
/* kforge-launch
{"kernels":[{"name":"device_launch","grid":[1],"block":[1],"args":["in:x","out:y","sym:rows","sym:cols"]}]}
*/
__global__ void child(const T *x, T *y, long long n)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i];
}

extern "C" __global__ void device_launch(const T *x, T *y, long long rows, long long cols)
{
    child<<<(rows * cols + 255) / 256, 256>>>(x, y, rows * cols);
}
