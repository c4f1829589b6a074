// Wrong: writes zeros to every element of its first output, whatever the operator (as a kernel that
// does nothing fast would). For a mean of many random values zero is close; against float64 it is not.
#include <cstring>
extern "C" int kforge_entry(const kf_tensor *, int, kf_tensor *out, int nout)
{
    int64_t n = 1;
    for (int d = 0; d < out[0].ndim; ++d)
        n *= out[0].sizes[d];
    const int64_t size = out[0].dtype == KF_F16 || out[0].dtype == KF_BF16 ? 2 : out[0].dtype == KF_F32 || out[0].dtype == KF_I32 ? 4 : 8;
    std::memset(out[0].data, 0, size_t(n * size));
    return 0;
}
