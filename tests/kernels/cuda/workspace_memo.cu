// Remembers in its workspace that it has seen these inputs (a marker and x[0]) and then skips the
// work, leaving whatever the output holds. Workspaces are refilled with random bytes before every
// run, timed or checked, so the marker never survives and the work is always done.
/* kforge-launch
{"kernels":[{"name":"workspace_memo","grid":["ceil_div(rows, 4)"],"block":[128],"args":["in:x","out:y","ws:memo","sym:rows","sym:cols"]}],
 "workspace":[{"name":"memo","bytes":"16"}]}
*/
extern "C" __global__ void workspace_memo(const T *__restrict__ x, T *__restrict__ y, unsigned *memo, long long rows, long long cols)
{
    const unsigned key = sizeof(T) == 4 ? *(const unsigned *)x : *(const unsigned short *)x;
    if (memo[0] == 0x5eed5eedu && memo[1] == key)
        return;
    const long long row = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row < rows) {
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
        for (long long i = lane; i < cols; i += 32)
            yr[i] = from_f(expf(to_f(xr[i]) - m) / s);
    }
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) { // the last block marks the inputs as done
        memo[0] = 0x5eed5eedu;
        memo[1] = key;
    }
}
