// What a lesson is filed under: an operator's signature, and how far apart two shapes of one operator
// are. Kept apart from lessons.h so that the knowledge base's nearest-shape lookup needs no more.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "ops/operator_card.h"

namespace kforge::knowledge {

// The operator, its arguments' dtypes, the captured shape and a hash of the reference arguments
// (softmax over another dim is another operator): "aten::_softmax(float32[rows,cols]) cols=1024,rows=256 #1a2b3c4d".
std::string operatorSignature(const OperatorCard &card);
// A signature cut in two: the operator with its arguments' dtypes and reference-argument hash
// ("aten::_softmax(float32[rows,cols]) #1a2b3c4d"), and the shape symbols' values. nullopt when the
// text is not a signature operatorSignature wrote.
struct SignatureParts {
    std::string op;
    std::map<std::string, int64_t> shape;
};
std::optional<SignatureParts> splitSignature(const std::string &signature);
// How far apart two shapes of one operator are: the sum over their symbols of |ln(a / b)| (twice the
// rows is as far as half of them); infinity when they name different symbols or a size is not positive.
double shapeDistance(const std::map<std::string, int64_t> &a, const std::map<std::string, int64_t> &b);

} // namespace kforge::knowledge
