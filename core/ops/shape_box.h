#pragma once
// The shapes a verified kernel is trusted with, and shapes drawn to check that trust. A pack's guard
// accepts a call whose every shape symbol lies within the least and greatest extent the kernel was
// verified on (the card's captured shape and its held-out shapes), so a kernel must be right anywhere
// inside that box, not only at its corners. `kforge-cli check-templates --box-shapes` draws shapes
// inside it to check exactly that.
#include <cstdint>
#include <map>
#include <random>
#include <string>

#include "ops/operator_card.h"

namespace kforge {

struct ExtentRange {
    int64_t min = 0;
    int64_t max = 0;
};
using ShapeBox = std::map<std::string, ExtentRange>;

// Per symbol, the least and greatest extent over the card's shape and its held-out shapes.
ShapeBox verifiedBox(const OperatorCard &card);

// One shape inside the box: each extent its range's least or greatest, one past the least, one short of
// the greatest, or drawn between them on a log scale (odd extents as likely as even ones).
ShapeBindings drawInsideBox(const ShapeBox &box, std::mt19937_64 &rng);

// A shape like `like` (the same symbols) at another size: each extent scaled by a factor between 1/8 and
// 4 and moved by a few elements, at least 1; extents of 1 stay 1 (a symbol a card fixes there).
ShapeBindings drawShapeLike(const ShapeBindings &like, std::mt19937_64 &rng);

// The elements of every input and output of the card at the shape.
int64_t cardElements(const OperatorCard &card, const ShapeBindings &shape);

} // namespace kforge
