#pragma once
// How an attention mask reaches the scores' rows. The fused softmax views the scores x as [rows, cols]
// (rows the product of x's leading dimensions) and the mask as [mrows, cols] (its own leading dimensions,
// contiguous). A mask that broadcasts over some of x's leading dimensions keeps the others; the kept ones
// form at most two runs of adjacent dimensions, and row r of x takes mask row
//
//     ((r / mblock) % (mrows / minner)) * minner + (r / mstep) % minner
//
// the inner run minner rows long, advancing every mstep rows of x; the outer run mrows / minner long,
// advancing every mblock rows. It covers, for scores [b, h, q, k]: a causal mask [q, k] or [1, 1, q, k]
// (minner q, mstep 1), a padding mask [b, 1, 1, k] (minner b, mstep h*q), the per-sample mask
// [b, 1, q, k] (minner q, mstep 1; outer b every h*q rows), a bias [1, h, q, k], a full [b, h, q, k] mask.
// A mask with three runs or more (rare) has no MaskRows: the chain runs as written.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace kforge {

struct MaskRows {
    int64_t mrows = 1;  // the mask's rows: the product of its leading dimensions
    int64_t minner = 1; // the inner run's rows (divides mrows)
    int64_t mstep = 1;  // rows of x per step of the inner run
    int64_t mblock = 1; // rows of x per step of the outer run (1 where there is none)
    bool operator==(const MaskRows &) const = default;
};

// The mask row that row r of x takes.
inline int64_t maskRowOf(const MaskRows &m, int64_t r)
{
    return ((r / m.mblock) % (m.mrows / m.minner)) * m.minner + (r / m.mstep) % m.minner;
}

// A card's runs from its shape symbols: a card written before they had symbols broadcasts its mask over the
// rows in turn (minner = mrows, mstep = mblock = 1).
inline MaskRows maskRowsOfShape(const std::map<std::string, int64_t> &shape, int64_t mrows)
{
    const auto given = [&](const char *sym, int64_t otherwise) {
        const auto it = shape.find(sym);
        return it == shape.end() ? otherwise : it->second;
    };
    return {mrows, given("minner", mrows), given("mstep", 1), given("mblock", 1)};
}

// The runs of a mask of `maskRank` dimensions added to x of `xRank` (both at least 1), or nothing where the
// mask does not broadcast to x's shape (a dimension neither x's nor 1, its last not x's, more dimensions
// than x, an empty one) or keeps three runs or more.
std::optional<MaskRows> maskRows(const int64_t *xSizes, size_t xRank, const int64_t *maskSizes, size_t maskRank);

} // namespace kforge
