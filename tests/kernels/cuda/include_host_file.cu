// Includes a file of the worker's host, hoping the compiler's error quotes it into the compile log.
/* kforge-launch
{"kernels":[{"name":"k","grid":[1],"block":[32],"args":["out:y"]}]}
*/
#include "/etc/passwd"
extern "C" __global__ void k(T *y) { y[0] = from_f(0.f); }
