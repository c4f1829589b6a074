// Wrong: specialised for the captured row length (1024) and silently does nothing for any other.
#include <cmath>
extern "C" int kforge_entry(const kf_tensor *in, int, kf_tensor *out, int)
{
    const int64_t rows = in[0].sizes[0];
    constexpr int64_t cols = 1024;
    if (in[0].sizes[1] != cols)
        return 0;
    for (int64_t r = 0; r < rows; ++r) {
        const float *x = (const float *)in[0].data + r * cols;
        float *y = (float *)out[0].data + r * cols;
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
