// Correct, but refuses to run (returns 3) when its process may run on more than one core: the worker
// holds the jail's runner on the core it is on, so that the candidate and the baseline are timed on the
// same one.
#include <cmath>
#include <sched.h>
extern "C" int kforge_entry(const kf_tensor *in, int nin, kf_tensor *out, int nout)
{
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) != 1)
        return 3;
    if (nin != 1 || nout != 1 || in[0].ndim != 2 || in[0].dtype != KF_F32)
        return 1;
    const int64_t rows = in[0].sizes[0], cols = in[0].sizes[1];
    for (int64_t r = 0; r < rows; ++r) {
        const float *x = (const float *)in[0].data + r * in[0].strides[0];
        float *y = (float *)out[0].data + r * out[0].strides[0];
        float m = -INFINITY;
        for (int64_t c = 0; c < cols; ++c)
            m = std::fmax(m, x[c]);
        double s = 0;
        for (int64_t c = 0; c < cols; ++c)
            s += (y[c] = std::exp(x[c] - m));
        for (int64_t c = 0; c < cols; ++c)
            y[c] = float(y[c] / s);
    }
    return 0;
}
