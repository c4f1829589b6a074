#pragma once
// Scans along the last dimension, in one table: each family is the one scan kernel (CPU and CUDA) with
// its combine (sum or product), its direction, inclusive or exclusive, and an optional mask multiplied
// in first. Each has its reference: the ATen operator where it is one (aten::cumsum, aten::cumprod), else
// a kforge:: composite that the worker computes as the chain a model writes (flip, cumsum, flip; narrow,
// cumsum, cat with zeros; cumsum of x * mask).
#include <string>
#include <vector>

#include "ops/operator_card.h"

namespace kforge {

struct ScanOp {
    std::string family;   // "cumsum", "cumprod", "cumsum_reverse", "cumsum_exclusive", "masked_cumsum", ...
    bool product = false; // combine by multiplication (else addition)
    bool reverse = false; // from the last element to the first
    bool exclusive = false; // element i gets the combine of the elements before it (the identity first)
    bool masked = false;  // a second input [rows, cols] multiplied into x before the scan: a bool mask,
    bool weighted = false; // or with `weighted` a tensor of x's dtype
    std::string atenOp;   // "aten::cumsum" or "kforge::<family>"
    std::string schema;
    std::string description; // for the templates
};

const std::vector<ScanOp> &scanOps();
const ScanOp *findScanOp(const std::string &family);

// The family's card at rows x cols: x (and the mask) in, y out, `sum` error model (for a product the
// reference over |x| is the product of the magnitudes: a relative bound), and for a product inputs whose
// partial products stay within float range at any row length.
OperatorCard scanFamilyCard(const ScanOp &op, const ShapeBindings &shape, DType dtype);

} // namespace kforge
