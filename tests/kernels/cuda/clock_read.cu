// Behaves differently depending on a clock read: it could skip work when it sees it is being timed.
// The static check rejects clock64() before compiling.
/* kforge-launch
{"kernels":[{"name":"clock_read","grid":["ceil_div(rows, 4)"],"block":[128],"args":["in:x","out:y","sym:rows","sym:cols"]}]}
*/
extern "C" __global__ void clock_read(const T *x, T *y, long long rows, long long cols)
{
    const long long row = (long long)blockIdx.x * 4 + threadIdx.x / 32;
    if (row >= rows || (clock64() & 1))
        return;
    for (long long i = threadIdx.x % 32; i < cols; i += 32)
        y[row * cols + i] = from_f(1.f / (float)cols);
}
