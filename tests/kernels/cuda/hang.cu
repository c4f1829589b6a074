// Never finishes: spins until an input element equals a value random inputs never hold. The pool's
// deadline stops the worker (Timeout) and a fresh one takes over.
/* kforge-launch
{"kernels":[{"name":"hang","grid":[1],"block":[32],"args":["in:x","out:y","sym:rows","sym:cols"]}]}
*/
extern "C" __global__ void hang(const T *x, T *y, long long rows, long long cols)
{
    volatile const T *vx = x;
    while (to_f(vx[0]) != 12345.f) {
    }
    y[0] = vx[0];
}
