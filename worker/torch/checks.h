#pragma once
// The measurements behind the guard's checks, on libtorch tensors of any device: fills that mark
// unwritten elements, guard bands, and a candidate's and ATen's errors against a float64 reference.
// What the numbers mean is decided in core/guard/; nothing here accepts or rejects.
#include <ATen/ATen.h>
#include <cstdint>
#include <optional>
#include <string>

#include "guard/numerics.h"
#include "ops/operator_card.h"

namespace kforge::worker {

// Overwrites `t` with a pattern drawn from `seed`: for floating types a signalling NaN with a random
// sign and payload at every element (arithmetic never produces one, so an element still holding its
// fill was not written), for integers random bits. A checked run and a timed run get the same kind
// of fill, each from a fresh seed, so a candidate cannot tell them apart by what its output holds.
void fillUnwritten(at::Tensor &t, uint64_t seed);
// Elements of `t` (contiguous) whose bits still equal fillUnwritten's pattern for `seed`.
int64_t countUnwritten(const at::Tensor &t, uint64_t seed);
// Random bytes, for workspaces and guard bands.
void fillBytes(at::Tensor &bytes, uint64_t seed);
// Bytes of `bytes` that differ from fillBytes's pattern for `seed`.
int64_t countChangedBytes(const at::Tensor &bytes, uint64_t seed);
// Elements whose bits differ.
int64_t countChanged(const at::Tensor &a, const at::Tensor &b);
// A weighted sum of every element's bits, by chunks: a timed run's inputs are compared with it, not
// with a copy, so a large tensor needs no second copy per input set.
int64_t fingerprint(const at::Tensor &t);

// The float64 reference and what the error model needs, for one output.
struct Reference64 {
    at::Tensor value;     // float64 (or the output's integer type)
    at::Tensor magnitude; // `sum` model: the same operation over |inputs|, float64; else undefined
    int64_t terms = 1;    // elements reduced into each result (`sum` model)
};

// Errors of `candidate` and of ATen's `aten` output against `ref`, computed in float64 by chunks so
// a tensor of billions of elements needs no float64 copy of itself. `seed` is the candidate's fill.
guard::OutputErrors measureOutput(const std::string &name, const at::Tensor &candidate, const at::Tensor &aten, const Reference64 &ref,
                                  ErrorModel model, DType dtype, uint64_t seed);

std::optional<Reason> checkInvariant(const std::string &invariant, const at::Tensor &out);

} // namespace kforge::worker
