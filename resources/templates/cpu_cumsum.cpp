// cpu.<scan family>.rows: a scan of each row in ACC precision (core/ops/scan_ops.h): SCAN_PROD combines
// by multiplication (else addition), SCAN_REVERSE runs from the row's end, SCAN_EXCLUSIVE gives element
// i the combine of the elements before it, SCAN_MASK multiplies a second input in first (a bool or
// float32 mask of x's shape).
#ifndef SCAN_PROD
#define SCAN_PROD 0
#endif
#ifndef SCAN_REVERSE
#define SCAN_REVERSE 0
#endif
#ifndef SCAN_EXCLUSIVE
#define SCAN_EXCLUSIVE 0
#endif
#ifndef SCAN_MASK
#define SCAN_MASK 0
#endif

extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    ROWS_PROLOGUE((SCAN_MASK ? 2 : 1))
    float *y = (float *)outputs[0].data;
#if SCAN_MASK
    const kf_tensor &m = inputs[1];
    if ((m.dtype != KF_BOOL && m.dtype != KF_F32) || m.ndim != inputs[0].ndim)
        return 1;
    for (int d = 0; d < m.ndim; ++d)
        if (m.sizes[d] != inputs[0].sizes[d])
            return 1;
    const bool byteMask = m.dtype == KF_BOOL;
    const unsigned char *mb = (const unsigned char *)m.data;
    const float *mf = (const float *)m.data;
#endif
    for (int64_t r = 0; r < rows; ++r) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        ACC run = SCAN_PROD ? 1 : 0;
        for (int64_t i = 0; i < cols; ++i) {
            const int64_t c = SCAN_REVERSE ? cols - 1 - i : i;
            ACC v = xr[c];
#if SCAN_MASK
            v *= byteMask ? ACC(mb[r * cols + c] != 0) : ACC(mf[r * cols + c]);
#endif
#if SCAN_EXCLUSIVE
            yr[c] = (float)run;
#endif
#if SCAN_PROD
            run *= v;
#else
            run += v;
#endif
#if !SCAN_EXCLUSIVE
            yr[c] = (float)run;
#endif
        }
    }
    return 0;
}
