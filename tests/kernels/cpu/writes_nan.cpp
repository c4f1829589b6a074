// Wrong: writes NaN into every element of every output. Only a reference that is NaN everywhere on every
// trial (a forward through log on normal draws) would agree with it, and the guard calls such trials vacuous.
#include <cmath>
extern "C" int kforge_entry(const kf_tensor *, int, kf_tensor *out, int nout)
{
    for (int o = 0; o < nout; ++o) {
        if (out[o].dtype != KF_F32)
            return 1;
        int64_t n = 1;
        for (int d = 0; d < out[o].ndim; ++d)
            n *= out[o].sizes[d];
        float *y = (float *)out[o].data;
        for (int64_t i = 0; i < n; ++i)
            y[i] = NAN;
    }
    return 0;
}
