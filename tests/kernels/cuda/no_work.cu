// The closest a CUDA candidate gets to "work on a side stream the timer never waits for": with no host
// code there is no other stream to launch on, so the plan simply asks for nothing. Its kernel never
// sees the output; it must be rejected with output_not_written, never timed.
/* kforge-launch
{"kernels":[{"name":"no_work","grid":[1],"block":[32],"args":[]}]}
*/
extern "C" __global__ void no_work()
{
}
