// Wrong: computes the softmax only when its output holds the one fixed poison value the guard once
// wrote before checked runs, and copies x to y otherwise. Every run now starts from a fresh random
// fill, so the copy is what the checks see.
#include <cmath>
#include <cstring>
extern "C" int kforge_entry(const kf_tensor *in, int, kf_tensor *out, int)
{
    unsigned first;
    std::memcpy(&first, out[0].data, 4);
    const int64_t rows = in[0].sizes[0], cols = in[0].sizes[1];
    for (int64_t r = 0; r < rows; ++r) {
        const float *x = (const float *)in[0].data + r * in[0].strides[0];
        float *y = (float *)out[0].data + r * out[0].strides[0];
        if (first != 0x7fbadbadu) {
            std::memcpy(y, x, size_t(cols) * 4);
            continue;
        }
        float m = -INFINITY;
        for (int64_t c = 0; c < cols; ++c)
            m = std::fmax(m, x[c]);
        double s = 0;
        for (int64_t c = 0; c < cols; ++c)
            s += std::exp(x[c] - m);
        for (int64_t c = 0; c < cols; ++c)
            y[c] = float(std::exp(x[c] - m) / s);
    }
    return 0;
}
