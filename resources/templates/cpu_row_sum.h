// A row's sum with ACCUMULATORS independent partial sums in ACC precision.
static inline ACC row_sum(const float *v, int64_t n)
{
    ACC part[ACCUMULATORS] = {};
    int64_t c = 0;
    for (; c + ACCUMULATORS <= n; c += ACCUMULATORS)
        for (int a = 0; a < ACCUMULATORS; ++a)
            part[a] += v[c + a];
    for (; c < n; ++c)
        part[0] += v[c];
    ACC s = 0;
    for (int a = 0; a < ACCUMULATORS; ++a)
        s += part[a];
    return s;
}

