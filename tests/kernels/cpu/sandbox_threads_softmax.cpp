// Correct, and uses what an honest kernel may: threads (two, each a half of the rows), heap memory
// (a std::vector per row), a file in its scratch /tmp, and an exception thrown and caught.
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <thread>
#include <vector>
static void rows(const kf_tensor &in, kf_tensor &out, int64_t r0, int64_t r1)
{
    const int64_t cols = in.sizes[1];
    for (int64_t r = r0; r < r1; ++r) {
        const float *x = (const float *)in.data + r * in.strides[0];
        float *y = (float *)out.data + r * out.strides[0];
        std::vector<double> e(static_cast<size_t>(cols));
        double m = -INFINITY, s = 0;
        for (int64_t c = 0; c < cols; ++c)
            m = std::fmax(m, x[c]);
        for (int64_t c = 0; c < cols; ++c)
            s += (e[size_t(c)] = std::exp(double(x[c]) - m));
        for (int64_t c = 0; c < cols; ++c)
            y[c] = float(e[size_t(c)] / s);
    }
}
extern "C" int kforge_entry(const kf_tensor *in, int nin, kf_tensor *out, int nout)
{
    if (nin != 1 || nout != 1 || in[0].ndim != 2 || in[0].dtype != KF_F32)
        return 1;
    try {
        throw std::runtime_error("caught inside");
    } catch (const std::exception &) {
    }
    if (FILE *f = std::fopen("/tmp/kforge-scratch.txt", "w")) {
        std::fputs("scratch\n", f);
        std::fclose(f);
    } else {
        return 2;
    }
    const int64_t n = in[0].sizes[0];
    std::thread t(rows, std::cref(in[0]), std::ref(out[0]), n / 2, n);
    rows(in[0], out[0], 0, n / 2);
    t.join();
    return 0;
}
