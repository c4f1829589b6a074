#include "ops/mask_rows.h"

namespace kforge {

std::optional<MaskRows> maskRows(const int64_t *x, size_t xRank, const int64_t *mask, size_t maskRank)
{
    if (xRank < 1 || maskRank < 1 || maskRank > xRank || mask[maskRank - 1] != x[xRank - 1])
        return std::nullopt;
    struct Run {
        int64_t size = 1, step = 1;
    } runs[2];
    int found = 0;
    bool open = false;   // the dimension after this one (inward) was kept
    int64_t stride = 1;  // rows of x per step of this dimension
    const size_t lead = xRank - 1, pad = xRank - maskRank;
    for (size_t i = lead; i-- > 0;) { // inward to outward, so the first run found is the inner one
        const int64_t xd = x[i], md = i < pad ? 1 : mask[i - pad];
        if (xd < 1 || md < 1 || (md != xd && md != 1))
            return std::nullopt;
        if (xd > 1) { // a dimension of 1 neither breaks a run nor adds to it
            if (md == xd) {
                if (!open) {
                    if (found == 2)
                        return std::nullopt;
                    runs[found++] = {1, stride};
                    open = true;
                }
                runs[found - 1].size *= xd;
            } else {
                open = false;
            }
        }
        stride *= xd;
    }
    MaskRows m;
    if (found >= 1)
        m.minner = runs[0].size, m.mstep = runs[0].step;
    if (found == 2)
        m.mblock = runs[1].step;
    m.mrows = m.minner * (found == 2 ? runs[1].size : 1);
    return m;
}

} // namespace kforge
