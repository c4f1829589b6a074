// Writes nothing and hopes the output buffer is the reference's freed output, still holding the right
// answer (the published allocator-reuse exploit). Outputs are poisoned before every run and freed
// memory is scrubbed, so it must be rejected with output_not_written.
/* kforge-launch
{"kernels":[{"name":"stale_output","grid":["ceil_div(rows, 4)"],"block":[128],"args":["in:x","out:y","sym:rows","sym:cols"]}]}
*/
extern "C" __global__ void stale_output(const T *x, T *y, long long rows, long long cols)
{
}
