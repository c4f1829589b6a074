// cpu.frobenius_norm.whole: the sum of squares of every element with ACCUMULATORS partial sums in ACC
// precision, then y = x / sqrt(sum), as the program's division does.
extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs)
{
    ROWS_PROLOGUE(1)
    const int64_t numel = rows * cols;
    ACC part[ACCUMULATORS] = {};
    int64_t i = 0;
    for (; i + ACCUMULATORS <= numel; i += ACCUMULATORS)
        for (int a = 0; a < ACCUMULATORS; ++a)
            part[a] += (ACC)x[i + a] * (ACC)x[i + a];
    for (; i < numel; ++i)
        part[0] += (ACC)x[i] * (ACC)x[i];
    ACC total = 0;
    for (int a = 0; a < ACCUMULATORS; ++a)
        total += part[a];
    const float norm = (float)std::sqrt((double)total);
    float *y = (float *)outputs[0].data;
    for (i = 0; i < numel; ++i)
        y[i] = x[i] / norm;
    return 0;
}
