// A row's max and log(sum(exp(x - max))), the sum in ACCUMULATORS partials of ACC precision.
static inline void row_max_logsum(const float *xr, int64_t cols, float &m, float &logs)
{
    m = -INFINITY;
    for (int64_t c = 0; c < cols; ++c)
        m = m > xr[c] ? m : xr[c];
    ACC part[ACCUMULATORS] = {};
    int64_t c = 0;
    for (; c + ACCUMULATORS <= cols; c += ACCUMULATORS)
        for (int a = 0; a < ACCUMULATORS; ++a)
            part[a] += expf(xr[c + a] - m);
    for (; c < cols; ++c)
        part[0] += expf(xr[c] - m);
    ACC s = 0;
    for (int a = 0; a < ACCUMULATORS; ++a)
        s += part[a];
    logs = (float)std::log((double)s);
}

