#pragma once
// Checks on a candidate's outputs that every backend applies: poisoned outputs fully written, inputs
// unchanged, values within a dtype-aware tolerance, NaN/Inf only where the reference has them, and the
// card's invariants.
#include <ATen/ATen.h>
#include <optional>
#include <string>

#include "ops/operator_card.h"

namespace kforge::worker {

// Fills with a NaN whose payload no arithmetic produces, so an element still holding it was never written.
void poison(at::Tensor &t);
int64_t countPoisoned(const at::Tensor &t);
// Elements whose bits differ.
int64_t countChanged(const at::Tensor &a, const at::Tensor &b);

struct CheckFailure {
    std::string code;
    std::string message;
};

struct Comparison {
    double maxAbsError = 0;
    double maxRelError = 0;
    std::optional<CheckFailure> failure;
};

Comparison compareOutput(const at::Tensor &out, const at::Tensor &ref, const Tolerance &tol, const std::string &name);
std::optional<CheckFailure> checkInvariant(const std::string &invariant, const at::Tensor &out);
// Everything above for one trial, in order; the first failure wins.
Comparison checkTrial(const OperatorCard &card, const std::vector<at::Tensor> &inputs, const std::vector<at::Tensor> &inputsBefore,
                      const std::vector<at::Tensor> &outputs, const std::vector<at::Tensor> &reference, double scale = 1.0);

} // namespace kforge::worker
