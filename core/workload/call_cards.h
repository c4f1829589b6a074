#pragma once
// Operator cards for any captured ATen call. The reference is the captured operator itself through the
// dispatcher; the inputs are the call's tensors with their captured shapes and dtypes (one shape symbol
// per dimension, "<argument>_<dim>"); scalars and int lists become literal reference arguments; the
// error model follows the operator's kind. A call that matches a template family (a last-dimension
// softmax, a layer norm with weight and bias, a GELU, ...) gets that family's card at the flattened
// rows x cols shape, with the captured operator and arguments, so the family's templates and held-out
// shapes apply.
//
// What this leaves to the worker: the outputs. cardForCall() fills in as many output placeholders as
// the schema returns tensors (`tensorReturns`); the worker runs the reference once and writes their
// real shapes and dtypes.
#include <string>
#include <variant>
#include <vector>

#include "ops/operator_card.h"
#include "workload/workload_file.h"

namespace kforge {

// "exact" for integer results and order-picking operators, "sum" for reductions and scans, "norm" for
// normalizations, "pointwise" otherwise. `outputDtype` is the first output's dtype when known.
ErrorModel errorModelForOp(const std::string &op, const std::string &outputDtype = {});

// Integer inputs are often indices (class targets, gather positions): one the workload gave values in
// [0, max] is drawn in that range on the card's trials, over a symbol "<name>_range" bound to max + 1,
// where random integers would fail the operator (on a GPU as a device-side assert). Others keep their draw.
void drawIndicesAsRecorded(TensorSpec &spec, ShapeBindings &shape, const TensorMeta &recorded);

// The template family a call matches, or "" (none).
std::string familyForCall(const CapturedCall &call);

// A card for the call, or the reason there is none (in-place or view operators, a tensor list, a
// dtype kforge has no cards for, no tensor input). `keyIndex` makes the key unique in its workload.
struct CardOrReason {
    std::optional<OperatorCard> card;
    std::string why;
};
CardOrReason cardForCall(const CapturedCall &call, int tensorReturns, int keyIndex);

} // namespace kforge
