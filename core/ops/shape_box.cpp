#include "ops/shape_box.h"

#include <algorithm>
#include <cmath>

namespace kforge {

ShapeBox verifiedBox(const OperatorCard &card)
{
    ShapeBox box;
    const auto widen = [&](const ShapeBindings &shape) {
        for (const auto &[sym, extent] : shape) {
            auto [it, fresh] = box.try_emplace(sym, ExtentRange{extent, extent});
            it->second.min = std::min(it->second.min, extent);
            it->second.max = std::max(it->second.max, extent);
        }
    };
    widen(card.shape);
    for (const auto &held : card.heldOutShapes)
        widen(held);
    return box;
}

namespace {

// Between lo and hi inclusive, log-uniformly, then made odd or even with equal chance where room allows.
int64_t drawBetween(int64_t lo, int64_t hi, std::mt19937_64 &rng)
{
    if (hi <= lo)
        return lo;
    const double a = std::log(double(std::max<int64_t>(lo, 1))), b = std::log(double(hi));
    int64_t v = std::clamp<int64_t>(int64_t(std::llround(std::exp(std::uniform_real_distribution<double>(a, b)(rng)))), lo, hi);
    const bool odd = std::bernoulli_distribution(0.5)(rng);
    if ((v % 2 != 0) != odd)
        v = v + 1 <= hi ? v + 1 : v - 1 >= lo ? v - 1 : v;
    return v;
}

} // namespace

ShapeBindings drawInsideBox(const ShapeBox &box, std::mt19937_64 &rng)
{
    ShapeBindings shape;
    for (const auto &[sym, r] : box) {
        switch (std::uniform_int_distribution<int>(0, 5)(rng)) {
        case 0: shape[sym] = r.min; break;
        case 1: shape[sym] = r.max; break;
        case 2: shape[sym] = std::min(r.min + 1, r.max); break;
        case 3: shape[sym] = std::max(r.max - 1, r.min); break;
        default: shape[sym] = drawBetween(r.min, r.max, rng); break;
        }
    }
    return shape;
}

ShapeBindings drawShapeLike(const ShapeBindings &like, std::mt19937_64 &rng)
{
    ShapeBindings shape;
    for (const auto &[sym, extent] : like) {
        if (extent <= 1) {
            shape[sym] = extent;
            continue;
        }
        const double scaled = double(extent) * std::exp2(std::uniform_real_distribution<double>(-3, 2)(rng));
        const int64_t nudge = std::uniform_int_distribution<int64_t>(-3, 3)(rng);
        shape[sym] = std::max<int64_t>(1, int64_t(std::llround(scaled)) + nudge);
    }
    return shape;
}

int64_t cardElements(const OperatorCard &card, const ShapeBindings &shape)
{
    int64_t total = 0;
    for (const auto *specs : {&card.inputs, &card.outputs})
        for (const auto &t : *specs)
            total += card.numel(t, shape);
    return total;
}

} // namespace kforge
