// The mask row that row r of the scores takes (core/ops/mask_rows.h): the inner run of the mask's kept
// dimensions minner rows long, a step every mstep rows of x; the outer run mrows / minner long, a step
// every mblock rows. A causal [q, k] mask is minner = mrows, mstep = mblock = 1: r % mrows.
__device__ __forceinline__ long long kf_mask_row(long long r, long long mrows, long long minner, long long mstep, long long mblock)
{
    return ((r / mblock) % (mrows / minner)) * minner + (r / mstep) % minner;
}
