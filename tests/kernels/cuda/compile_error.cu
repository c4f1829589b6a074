// Does not compile: the compiler's log must reach the verdict.
/* kforge-launch
{"kernels":[{"name":"compile_error","grid":[1],"block":[32],"args":["in:x","out:y","sym:rows","sym:cols"]}]}
*/
extern "C" __global__ void compile_error(const T *x, T *y, long long rows, long long cols)
{
    y[0] = x[undeclared_index];
}
