// Operator cards for every family kforge has templates for. Each card names its ATen reference, the
// shapes it is verified at (captured, scaled, held out), how its rounding error grows (its error model), invariants, and its
// FLOP count per output element for the roofline.
#include <cmath>
#include <functional>

#include "ops/loss_ops.h"
#include "ops/mask_rows.h"
#include "ops/operator_card.h"
#include "ops/pointwise_ops.h"
#include "ops/scan_ops.h"
#include "util/error.h"

namespace kforge {

int64_t needSymbol(const ShapeBindings &s, const char *sym, const std::string &family)
{
    auto it = s.find(sym);
    if (it == s.end())
        throw Error("a " + family + " card needs the shape symbol '" + sym + "'");
    return it->second;
}

namespace {

using J = nlohmann::json;

// Row-wise families: x[rows, cols] reduced or normalized along cols.
OperatorCard rowCard(const std::string &family, const ShapeBindings &s, DType dt)
{
    OperatorCard c;
    c.family = family;
    c.key = family + ".lastdim." + dtypeName(dt);
    const int64_t rows = needSymbol(s, "rows", family), cols = needSymbol(s, "cols", family);
    c.shape = {{"rows", rows}, {"cols", cols}};
    // Held-out shapes catch kernels that hard-code the row length or assume a multiple of the
    // vector width.
    c.heldOutShapes = {{{"rows", 7}, {"cols", cols + 3}}, {{"rows", rows / 2 + 1}, {"cols", 33}}};
    c.inputs = {{"x", {"rows", "cols"}, dt}};
    c.outputs = {{"y", {"rows", "cols"}, dt}};
    return c;
}

// An RMS norm a model writes out (runtime/fused_ops.h): x [rows, cols] and weight [cols] in, eps (the model's)
// the third reference argument; `residual`: the sublayer's residual add before it, h = x + residual and
// the norm both outputs, eps the fourth.
OperatorCard writtenRmsNormCard(const std::string &family, const ShapeBindings &s, DType dt, bool residual, int flops)
{
    auto c = rowCard(family, s, dt);
    c.atenOp = "kforge::" + family;
    c.atenSchema = c.atenOp + (residual ? "(Tensor x, Tensor residual, Tensor weight, float eps) -> (Tensor, Tensor)"
                                        : "(Tensor x, Tensor weight, float eps) -> Tensor");
    c.errorModel = ErrorModel::Normalization;
    if (residual)
        c.inputs.push_back({"residual", {"rows", "cols"}, dt});
    c.inputs.push_back({"weight", {"cols"}, dt, "randn_unscaled"});
    if (residual)
        c.outputs = {{"h", {"rows", "cols"}, dt}, {"y", {"rows", "cols"}, dt}};
    c.referenceArgs = residual ? J::array({{{"input", 0}}, {{"input", 1}}, {{"input", 2}}, {{"double", 1e-6}}})
                               : J::array({{{"input", 0}}, {{"input", 1}}, {{"double", 1e-6}}});
    c.flopsPerElement = flops;
    return c;
}

// The rotary embedding as Llama writes it (runtime/fused_ops.h): x is a projection viewed as [b, s, h, d],
// contiguous; y = q * cos + rotate_half(q) * sin for q = x.transpose(1, 2), written [b, h, s, d]. The tables
// are the model's: [s, d] shared by the batch (rotary_embedding), or [b, 1, s, d] per sequence as Hugging
// Face passes them after `cos.unsqueeze(1)` (rotary_embedding_batched; t is that broadcast axis, always 1).
// half = d / 2 is a reference argument the pack's guard checks on every call, so the held-out shapes keep
// the card's head size d.
OperatorCard rotaryCard(const std::string &family, const ShapeBindings &s, DType dt)
{
    OperatorCard c;
    c.family = family;
    const bool batched = family == "rotary_embedding_batched";
    c.key = family + ".bshd." + dtypeName(dt);
    const int64_t b = needSymbol(s, "b", family), seq = needSymbol(s, "s", family), h = needSymbol(s, "h", family), d = needSymbol(s, "d", family);
    if (d < 2 || d % 2 != 0)
        throw Error("a " + family + " card needs an even head size d (rotate_half splits it in two), not d " + std::to_string(d));
    if (batched && s.count("t") && s.at("t") != 1)
        throw Error("a rotary_embedding_batched card's tables are [b, 1, s, d]: t is 1, not " + std::to_string(s.at("t")));
    c.shape = {{"b", b}, {"s", seq}, {"h", h}, {"d", d}};
    c.heldOutShapes = {{{"b", 1}, {"s", seq + 3}, {"h", 3}, {"d", d}}, {{"b", b + 1}, {"s", 5}, {"h", h + 1}, {"d", d}}};
    if (batched) {
        c.shape["t"] = 1;
        for (auto &held : c.heldOutShapes)
            held["t"] = 1;
    }
    const std::vector<std::string> table = batched ? std::vector<std::string>{"b", "t", "s", "d"} : std::vector<std::string>{"s", "d"};
    c.inputs = {{"x", {"b", "s", "h", "d"}, dt}, {"cos", table, dt, "randn_unscaled"}, {"sin", table, dt, "randn_unscaled"}};
    c.outputs = {{"y", {"b", "h", "s", "d"}, dt}};
    c.atenSchema = "kforge::rotary_embedding(Tensor x, Tensor cos, Tensor sin, int half) -> Tensor";
    c.atenOp = "kforge::rotary_embedding";
    c.referenceArgs = J::array({{{"input", 0}}, {{"input", 1}}, {{"input", 2}}, {{"int", d / 2}}});
    c.flopsPerElement = 3;
    return c;
}

// Families over a middle dimension: x viewed as [outer, dim, inner] (inner > 1 when dim is not the last
// dimension), reduced or normalized along dim; the reference is the ATen operator over dim 1 of that view.
OperatorCard dimCard(const std::string &family, const ShapeBindings &s, DType dt, bool reduces)
{
    OperatorCard c;
    c.family = family;
    c.key = family + ".outer_dim_inner." + dtypeName(dt);
    const int64_t outer = needSymbol(s, "outer", family), dim = needSymbol(s, "dim", family), inner = needSymbol(s, "inner", family);
    c.shape = {{"outer", outer}, {"dim", dim}, {"inner", inner}};
    // Held out: a contiguous last dimension (inner 1), a longer odd dim, and an odd inner that no vector
    // width divides.
    c.heldOutShapes = {{{"outer", 3}, {"dim", 37}, {"inner", 1}},
                       {{"outer", 2}, {"dim", dim + 3}, {"inner", 5}},
                       {{"outer", 5}, {"dim", 7}, {"inner", inner + 5}}};
    c.inputs = {{"x", {"outer", "dim", "inner"}, dt}};
    if (reduces)
        c.outputs = {{"y", {"outer", "inner"}, dt}};
    else
        c.outputs = {{"y", {"outer", "dim", "inner"}, dt}};
    c.flopsPerElement = reduces ? double(dim) : 4;
    return c;
}

// A reduction over dim through `op` (its overload, and the arguments after the input).
OperatorCard dimReduction(const std::string &family, const ShapeBindings &s, DType dt, const std::string &schema, const std::string &op,
                          const std::string &overload, nlohmann::json tail, ErrorModel model)
{
    auto c = dimCard(family, s, dt, true);
    c.atenSchema = schema;
    c.atenOp = op;
    c.atenOverload = overload;
    c.referenceArgs = J::array({{{"input", 0}}});
    for (auto &a : tail)
        c.referenceArgs.push_back(a);
    c.errorModel = model;
    return c;
}

OperatorCard batchNormCard(const std::string &family, const ShapeBindings &s, DType dt, bool affine, bool training)
{
    OperatorCard c;
    c.family = family;
    c.key = family + ".nchw." + dtypeName(dt);
    c.shape = {{"n", needSymbol(s, "n", family)}, {"c", needSymbol(s, "c", family)}, {"hw", needSymbol(s, "hw", family)}};
    // Held out: one sample (statistics over hw alone), odd channel and spatial extents, hw 1 (BatchNorm1d).
    c.heldOutShapes = {{{"n", 1}, {"c", 3}, {"hw", 49}}, {{"n", 3}, {"c", 5}, {"hw", c.shape["hw"] + 3}}, {{"n", 9}, {"c", 7}, {"hw", 1}}};
    c.inputs = {{"x", {"n", "c", "hw"}, dt}};
    if (affine) {
        c.inputs.push_back({"weight", {"c"}, dt, "randn_unscaled"});
        c.inputs.push_back({"bias", {"c"}, dt, "randn_unscaled"});
    }
    if (!training) {
        c.inputs.push_back({"running_mean", {"c"}, dt, "randn_unscaled"});
        c.inputs.push_back({"running_var", {"c"}, dt, "positive"});
    }
    c.outputs = {{"y", {"n", "c", "hw"}, dt}};
    c.atenSchema = "aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor";
    c.atenOp = "aten::batch_norm";
    const J none = {{"none", true}};
    c.referenceArgs = J::array({{{"input", 0}}, affine ? J{{"input", 1}} : none, affine ? J{{"input", 2}} : none,
                                training ? none : J{{"input", 3}}, training ? none : J{{"input", 4}}, {{"bool", training}},
                                {{"double", 0.1}}, {{"double", 1e-5}}, {{"bool", true}}});
    // With running statistics it is a per-channel scale and shift of x: no statistics to carry, and the
    // affine-magnitude rule (inputs after x taken as |w|, +-|b|) would negate the running variance.
    c.errorModel = training ? ErrorModel::Normalization : ErrorModel::Pointwise;
    c.flopsPerElement = training ? 7 : 2;
    return c;
}

const std::map<std::string, std::function<OperatorCard(const ShapeBindings &, DType)>> &factories()
{
    static const std::map<std::string, std::function<OperatorCard(const ShapeBindings &, DType)>> f = [] {
    std::map<std::string, std::function<OperatorCard(const ShapeBindings &, DType)>> m = {
        {"softmax", [](const ShapeBindings &s, DType dt) {
             auto c = rowCard("softmax", s, dt);
             c.atenSchema = "aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor";
             c.atenOp = "aten::_softmax";
             c.errorModel = ErrorModel::Normalization;
             c.referenceArgs = J::array({{{"input", 0}}, {{"int", -1}}, {{"bool", false}}});
             c.invariants = {"rows_sum_to_one"};
             c.specialInputs = {kMaskedRows};
             c.flopsPerElement = 5;
             return c;
         }},
        {"log_softmax", [](const ShapeBindings &s, DType dt) {
             auto c = rowCard("log_softmax", s, dt);
             c.atenSchema = "aten::_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor";
             c.atenOp = "aten::_log_softmax";
             c.errorModel = ErrorModel::Normalization;
             c.specialInputs = {kMaskedRows};
             c.referenceArgs = J::array({{{"input", 0}}, {{"int", -1}}, {{"bool", false}}});
             c.flopsPerElement = 5;
             return c;
         }},
        {"layer_norm", [](const ShapeBindings &s, DType dt) {
             auto c = rowCard("layer_norm", s, dt);
             c.atenSchema = "aten::layer_norm(Tensor input, int[] normalized_shape, Tensor? weight, Tensor? bias, float eps, bool cudnn_enable) -> Tensor";
             c.atenOp = "aten::layer_norm";
             c.errorModel = ErrorModel::Normalization;
             c.inputs.push_back({"weight", {"cols"}, dt, "randn_unscaled"});
             c.inputs.push_back({"bias", {"cols"}, dt, "randn_unscaled"});
             c.referenceArgs = J::array({{{"input", 0}}, {{"sym_list", {"cols"}}}, {{"input", 1}}, {{"input", 2}},
                                         {{"double", 1e-5}}, {{"bool", true}}});
             c.flopsPerElement = 8;
             return c;
         }},
        {"rms_norm", [](const ShapeBindings &s, DType dt) {
             auto c = rowCard("rms_norm", s, dt);
             c.atenSchema = "rms_norm(Tensor input, Tensor weight, float eps) -> Tensor  (x * rsqrt(mean(x^2) + eps) * weight)";
             c.atenOp = "kforge::rms_norm";
             c.errorModel = ErrorModel::Normalization;
             c.inputs.push_back({"weight", {"cols"}, dt, "randn_unscaled"});
             c.referenceArgs = J::array({{{"input", 0}}, {{"input", 1}}, {{"double", 1e-6}}});
             c.flopsPerElement = 4;
             return c;
         }},
        // RMSNorm as models write it out (runtime/fused_ops.h): the statistics in float32, the normalized
        // row cast back to x's dtype before the weight multiplies it. eps is the model's.
        {"rms_norm_cast", [](const ShapeBindings &s, DType dt) { return writtenRmsNormCard("rms_norm_cast", s, dt, false, 4); }},
        // Gemma's RMSNorm (runtime/fused_ops.h): the statistics in float32, the normalized row times one plus the
        // weight in float32, rounded to x's dtype once. eps is the model's.
        {"rms_norm_offset", [](const ShapeBindings &s, DType dt) { return writtenRmsNormCard("rms_norm_offset", s, dt, false, 5); }},
        {"add_rms_norm_offset", [](const ShapeBindings &s, DType dt) { return writtenRmsNormCard("add_rms_norm_offset", s, dt, true, 6); }},
        // The residual add before an RMSNorm written out, as a decoder's sublayer ends (runtime/fused_ops.h):
        // h = x + residual, y = rms_norm_cast(h); both are outputs (h is the next residual). eps is the model's.
        {"add_rms_norm_cast", [](const ShapeBindings &s, DType dt) { return writtenRmsNormCard("add_rms_norm_cast", s, dt, true, 5); }},
        {"group_norm", [](const ShapeBindings &s, DType dt) {
             OperatorCard c;
             c.family = "group_norm";
             c.key = "group_norm.nchw." + dtypeName(dt);
             c.shape = {{"n", needSymbol(s, "n", "group_norm")}, {"c", needSymbol(s, "c", "group_norm")},
                        {"hw", needSymbol(s, "hw", "group_norm")}, {"groups", needSymbol(s, "groups", "group_norm")}};
             c.heldOutShapes = {{{"n", 1}, {"c", 12}, {"hw", 49}, {"groups", 3}}};
             c.multiples = {{"c", "groups"}};
             if (!keepsMultiples(c, c.shape))
                 throw Error("a group_norm card needs c a multiple of groups (as aten::group_norm does), not c " + std::to_string(c.shape["c"])
                             + " and groups " + std::to_string(c.shape["groups"]));
             c.inputs = {{"x", {"n", "c", "hw"}, dt}, {"weight", {"c"}, dt, "randn_unscaled"}, {"bias", {"c"}, dt, "randn_unscaled"}};
             c.outputs = {{"y", {"n", "c", "hw"}, dt}};
             c.atenSchema = "aten::group_norm(Tensor input, int num_groups, Tensor? weight, Tensor? bias, float eps, bool cudnn_enabled) -> Tensor";
             c.atenOp = "aten::group_norm";
             c.errorModel = ErrorModel::Normalization;
             c.referenceArgs = J::array({{{"input", 0}}, {{"sym", "groups"}}, {{"input", 1}}, {{"input", 2}},
                                         {{"double", 1e-5}}, {{"bool", true}}});
             c.flopsPerElement = 8;
             return c;
         }},
        // Attention's softmax chain, fused (runtime/fused_ops.h): softmax((x * scale [+ mask]).float(), -1)
        // cast back to x's dtype. The scale is the model's (a card from a workload carries its own); the
        // mask [mrows, cols] is broadcast over the rows as ops/mask_rows.h says (minner, mstep, mblock; by
        // default row r takes mask row r % mrows).
        {"scaled_softmax", [](const ShapeBindings &s, DType dt) {
             auto c = rowCard("scaled_softmax", s, dt);
             c.atenSchema = "kforge::scaled_softmax(Tensor x, float scale) -> Tensor";
             c.atenOp = "kforge::scaled_softmax";
             c.referenceArgs = J::array({{{"input", 0}}, {{"double", 0.125}}});
             c.errorModel = ErrorModel::Normalization;
             c.invariants = {"rows_sum_to_one"};
             c.specialInputs = {kMaskedRows};
             c.flopsPerElement = 6;
             return c;
         }},
        {"scaled_masked_softmax", [](const ShapeBindings &s, DType dt) {
             auto c = rowCard("scaled_masked_softmax", s, dt);
             const int64_t mrows = needSymbol(s, "mrows", "scaled_masked_softmax"), rows = c.shape.at("rows"), cols = c.shape.at("cols");
             const auto m = maskRowsOfShape(s, mrows);
             if (mrows < 1 || rows % mrows != 0)
                 throw Error("a scaled_masked_softmax card needs rows a multiple of mrows (the mask's rows), not rows " + std::to_string(rows)
                             + " and mrows " + std::to_string(mrows));
             if (m.minner < 1 || mrows % m.minner != 0 || m.mstep < 1 || m.mblock < 1)
                 throw Error("a scaled_masked_softmax card needs minner dividing mrows and mstep, mblock at least 1, not minner "
                             + std::to_string(m.minner) + ", mstep " + std::to_string(m.mstep) + ", mblock " + std::to_string(m.mblock));
             c.shape["mrows"] = mrows;
             c.shape["minner"] = m.minner;
             c.shape["mstep"] = m.mstep;
             c.shape["mblock"] = m.mblock;
             c.multiples = {{"rows", "mrows"}, {"mrows", "minner"}};
             // Held out: a mask broadcast over the rows in turn (r % mrows), a padding mask [b, 1, 1, k] over
             // scores [2, 3, 4, k], a per-sample mask [b, 1, q, k] over [3, 2, 5, k], a mask of one row.
             c.heldOutShapes = {{{"rows", 21}, {"cols", cols + 3}, {"mrows", 7}, {"minner", 7}, {"mstep", 1}, {"mblock", 1}},
                                {{"rows", 66}, {"cols", 33}, {"mrows", 33}, {"minner", 33}, {"mstep", 1}, {"mblock", 1}},
                                {{"rows", 24}, {"cols", cols}, {"mrows", 2}, {"minner", 2}, {"mstep", 12}, {"mblock", 1}},
                                {{"rows", 30}, {"cols", cols + 1}, {"mrows", 15}, {"minner", 5}, {"mstep", 1}, {"mblock", 10}},
                                {{"rows", 12}, {"cols", cols}, {"mrows", 1}, {"minner", 1}, {"mstep", 1}, {"mblock", 1}}};
             c.inputs.push_back({"mask", {"mrows", "cols"}, dt, "causal_mask"});
             c.atenSchema = "kforge::scaled_masked_softmax(Tensor x, float scale, Tensor mask) -> Tensor";
             c.atenOp = "kforge::scaled_masked_softmax";
             c.referenceArgs = J::array({{{"input", 0}}, {{"double", 0.125}}, {{"input", 1}}});
             c.errorModel = ErrorModel::Normalization;
             c.invariants = {"rows_sum_to_one"};
             c.specialInputs = {kMaskedRows};
             c.flopsPerElement = 7;
             return c;
         }},
        {"rotary_embedding", [](const ShapeBindings &s, DType dt) { return rotaryCard("rotary_embedding", s, dt); }},
        {"rotary_embedding_batched", [](const ShapeBindings &s, DType dt) { return rotaryCard("rotary_embedding_batched", s, dt); }},
        {"sum", [](const ShapeBindings &s, DType dt) {
             auto c = rowCard("sum", s, dt);
             c.outputs = {{"y", {"rows"}, dt}};
             c.atenSchema = "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor";
             c.atenOp = "aten::sum";
             c.atenOverload = "dim_IntList";
             c.referenceArgs = J::array({{{"input", 0}}, {{"int_list", {-1}}}, {{"bool", false}}, {{"none", true}}});
             c.errorModel = ErrorModel::Sum;
             c.flopsPerElement = double(needSymbol(s, "cols", "sum"));
             return c;
         }},
        {"mean", [](const ShapeBindings &s, DType dt) {
             auto c = rowCard("mean", s, dt);
             c.outputs = {{"y", {"rows"}, dt}};
             c.atenSchema = "aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor";
             c.atenOp = "aten::mean";
             c.atenOverload = "dim";
             c.referenceArgs = J::array({{{"input", 0}}, {{"int_list", {-1}}}, {{"bool", false}}, {{"none", true}}});
             c.errorModel = ErrorModel::Sum;
             c.flopsPerElement = double(needSymbol(s, "cols", "mean"));
             return c;
         }},
        {"max", [](const ShapeBindings &s, DType dt) {
             auto c = rowCard("max", s, dt);
             c.outputs = {{"y", {"rows"}, dt}};
             c.atenSchema = "aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor";
             c.atenOp = "aten::amax";
             c.referenceArgs = J::array({{{"input", 0}}, {{"int_list", {-1}}}, {{"bool", false}}});
             c.errorModel = ErrorModel::Exact;
             c.flopsPerElement = double(needSymbol(s, "cols", "max"));
             return c;
         }},
        {"argmax", [](const ShapeBindings &s, DType dt) {
             auto c = rowCard("argmax", s, dt);
             c.outputs = {{"y", {"rows"}, DType::I64}};
             c.atenSchema = "aten::argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor";
             c.atenOp = "aten::argmax";
             c.referenceArgs = J::array({{{"input", 0}}, {{"int", -1}}, {{"bool", false}}});
             c.errorModel = ErrorModel::Exact;
             c.flopsPerElement = double(needSymbol(s, "cols", "argmax"));
             return c;
         }},
        {"cross_entropy", [](const ShapeBindings &s, DType dt) {
             OperatorCard c;
             c.family = "cross_entropy";
             c.key = "cross_entropy.mean." + dtypeName(dt);
             c.shape = {{"rows", needSymbol(s, "rows", "cross_entropy")}, {"vocab", needSymbol(s, "vocab", "cross_entropy")}};
             c.heldOutShapes = {{{"rows", 5}, {"vocab", 1000}}};
             c.inputs = {{"logits", {"rows", "vocab"}, dt}, {"target", {"rows"}, DType::I64, "index:vocab"}};
             c.specialInputs = {kIgnoredTargets};
             c.outputs = {{"loss", {}, dt}};
             c.atenSchema = "aten::cross_entropy_loss(Tensor self, Tensor target, Tensor? weight, int reduction, int ignore_index, float label_smoothing) -> Tensor";
             c.atenOp = "aten::cross_entropy_loss";
             c.errorModel = ErrorModel::Normalization;
             c.referenceArgs = J::array({{{"input", 0}}, {{"input", 1}}, {{"none", true}}, {{"int", 1}}, {{"int", kIgnoreIndex}}, {{"double", 0.0}}});
             c.flopsPerElement = 5.0 * double(c.shape["rows"] * c.shape["vocab"]);
             return c;
         }},
        {"sum_dim", [](const ShapeBindings &s, DType dt) {
             return dimReduction("sum_dim", s, dt, "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
                                 "aten::sum", "dim_IntList", J::array({{{"int_list", {1}}}, {{"bool", false}}, {{"none", true}}}), ErrorModel::Sum);
         }},
        {"mean_dim", [](const ShapeBindings &s, DType dt) {
             return dimReduction("mean_dim", s, dt, "aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
                                 "aten::mean", "dim", J::array({{{"int_list", {1}}}, {{"bool", false}}, {{"none", true}}}), ErrorModel::Sum);
         }},
        {"max_dim", [](const ShapeBindings &s, DType dt) {
             return dimReduction("max_dim", s, dt, "aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", "aten::amax", "",
                                 J::array({{{"int_list", {1}}}, {{"bool", false}}}), ErrorModel::Exact);
         }},
        {"min_dim", [](const ShapeBindings &s, DType dt) {
             return dimReduction("min_dim", s, dt, "aten::amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", "aten::amin", "",
                                 J::array({{{"int_list", {1}}}, {{"bool", false}}}), ErrorModel::Exact);
         }},
        {"argmax_dim", [](const ShapeBindings &s, DType dt) {
             auto c = dimReduction("argmax_dim", s, dt, "aten::argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", "aten::argmax", "",
                                   J::array({{{"int", 1}}, {{"bool", false}}}), ErrorModel::Exact);
             c.outputs.front().dtype = DType::I64;
             return c;
         }},
        {"argmin_dim", [](const ShapeBindings &s, DType dt) {
             auto c = dimReduction("argmin_dim", s, dt, "aten::argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", "aten::argmin", "",
                                   J::array({{{"int", 1}}, {{"bool", false}}}), ErrorModel::Exact);
             c.outputs.front().dtype = DType::I64;
             return c;
         }},
        {"prod_dim", [](const ShapeBindings &s, DType dt) {
             // A product's rounding is relative, as the `sum` model's reduction over |x| (the product of
             // the magnitudes) makes it. Its range is the trouble: a product of randn values over
             // thousands of terms overflows or underflows float32 partway, differently in each order of
             // multiplication, so the inputs are log-normal around +-1 with the spread of log|x| shrunk by
             // sqrt(dim): every product, whole or partial, stays near exp(+-scale).
             auto c = dimReduction("prod_dim", s, dt, "aten::prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
                                   "aten::prod", "dim_int", J::array({{{"int", 1}}, {{"bool", false}}, {{"none", true}}}), ErrorModel::Sum);
             c.inputs.front().init = "lognormal:dim";
             c.inputScales = {1.0, 4.0};
             return c;
         }},
        {"softmax_dim", [](const ShapeBindings &s, DType dt) {
             auto c = dimCard("softmax_dim", s, dt, false);
             c.atenSchema = "aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor";
             c.atenOp = "aten::_softmax";
             c.referenceArgs = J::array({{{"input", 0}}, {{"int", 1}}, {{"bool", false}}});
             c.errorModel = ErrorModel::Normalization;
             c.flopsPerElement = 5;
             return c;
         }},
        {"log_softmax_dim", [](const ShapeBindings &s, DType dt) {
             auto c = dimCard("log_softmax_dim", s, dt, false);
             c.atenSchema = "aten::_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor";
             c.atenOp = "aten::_log_softmax";
             c.referenceArgs = J::array({{{"input", 0}}, {{"int", 1}}, {{"bool", false}}});
             c.errorModel = ErrorModel::Normalization;
             c.flopsPerElement = 5;
             return c;
         }},
        {"rms_norm_dim", [](const ShapeBindings &s, DType dt) {
             // KernelBench's channel-first RMSNorm: no weight, x / sqrt(mean(x^2 over dim) + eps).
             auto c = dimCard("rms_norm_dim", s, dt, false);
             c.atenSchema = "rms_norm_dim(Tensor x, float eps) -> Tensor  (x / sqrt(mean(x^2, dim 1) + eps))";
             c.atenOp = "kforge::rms_norm_dim";
             c.referenceArgs = J::array({{{"input", 0}}, {{"double", 1e-5}}});
             c.errorModel = ErrorModel::Normalization;
             return c;
         }},
        {"l2_norm_dim", [](const ShapeBindings &s, DType dt) {
             auto c = dimCard("l2_norm_dim", s, dt, false);
             c.atenSchema = "l2_norm_dim(Tensor x, float eps) -> Tensor  (F.normalize: x / max(||x||_2 over dim 1, eps))";
             c.atenOp = "kforge::l2_norm_dim";
             c.referenceArgs = J::array({{{"input", 0}}, {{"double", 1e-12}}});
             c.errorModel = ErrorModel::Normalization;
             return c;
         }},
        {"l1_norm_dim", [](const ShapeBindings &s, DType dt) {
             // KernelBench's L1 normalization: x / mean(|x| over dim), no eps.
             auto c = dimCard("l1_norm_dim", s, dt, false);
             c.atenSchema = "l1_norm_dim(Tensor x) -> Tensor  (x / mean(|x|, dim 1))";
             c.atenOp = "kforge::l1_norm_dim";
             c.referenceArgs = J::array({{{"input", 0}}});
             c.errorModel = ErrorModel::Normalization;
             return c;
         }},
        {"instance_norm", [](const ShapeBindings &s, DType dt) {
             // Per (sample, channel) over the spatial extent, no affine and no running statistics
             // (nn.InstanceNorm's defaults): rows n * c of hw elements each.
             OperatorCard c;
             c.family = "instance_norm";
             c.key = "instance_norm.nchw." + dtypeName(dt);
             c.shape = {{"n", needSymbol(s, "n", "instance_norm")}, {"c", needSymbol(s, "c", "instance_norm")}, {"hw", needSymbol(s, "hw", "instance_norm")}};
             c.heldOutShapes = {{{"n", 1}, {"c", 3}, {"hw", 49}}, {{"n", 2}, {"c", 5}, {"hw", c.shape["hw"] + 3}}};
             c.inputs = {{"x", {"n", "c", "hw"}, dt}};
             c.outputs = {{"y", {"n", "c", "hw"}, dt}};
             c.atenSchema = "aten::instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor";
             c.atenOp = "aten::instance_norm";
             c.errorModel = ErrorModel::Normalization;
             c.referenceArgs = J::array({{{"input", 0}}, {{"none", true}}, {{"none", true}}, {{"none", true}}, {{"none", true}},
                                         {{"bool", true}}, {{"double", 0.1}}, {{"double", 1e-5}}, {{"bool", false}}});
             c.flopsPerElement = 7;
             return c;
         }},
        // BatchNorm over [n, c, hw] (a channel's statistics over n and hw, biased variance). Training mode
        // (what KernelBench runs) uses the batch's statistics: `batch_norm` without affine (a module's
        // default weight 1 and bias 0, so a one-input problem fits it), `batch_norm_affine` with them; the
        // running statistics a training call also updates are not the card's output, so its reference
        // passes none. `batch_norm_eval` uses running statistics (inputs in the call's order).
        {"batch_norm", [](const ShapeBindings &s, DType dt) { return batchNormCard("batch_norm", s, dt, false, true); }},
        {"batch_norm_affine", [](const ShapeBindings &s, DType dt) { return batchNormCard("batch_norm_affine", s, dt, true, true); }},
        {"batch_norm_eval", [](const ShapeBindings &s, DType dt) { return batchNormCard("batch_norm_eval", s, dt, true, false); }},
        // x / ||x||_F over the whole tensor (KernelBench's x / torch.norm(x, p='fro')), viewed as rows x cols.
        {"frobenius_norm", [](const ShapeBindings &s, DType dt) {
             auto c = rowCard("frobenius_norm", s, dt);
             c.atenSchema = "frobenius_norm(Tensor x) -> Tensor  (x / torch.norm(x), the norm over every element)";
             c.atenOp = "kforge::frobenius_norm";
             c.referenceArgs = J::array({{{"input", 0}}});
             c.errorModel = ErrorModel::Normalization;
             c.flopsPerElement = 3;
             return c;
         }},
    };
    // The pointwise activations come from one table (core/ops/pointwise_ops.h), each with its expression.
    for (const auto &op : pointwiseOps())
        m[op.family] = [&op](const ShapeBindings &s, DType dt) { return pointwiseFamilyCard(op, s, dt); };
    // So do the scans (core/ops/scan_ops.h).
    for (const auto &op : scanOps())
        m[op.family] = [&op](const ShapeBindings &s, DType dt) { return scanFamilyCard(op, s, dt); };
    // And the losses that reduce to a scalar (core/ops/loss_ops.h).
    for (const auto &op : lossOps())
        m[op.family] = [&op](const ShapeBindings &s, DType dt) { return lossFamilyCard(op, s, dt); };
    m[kTripletFamily] = [](const ShapeBindings &s, DType dt) { return tripletCard(s, dt); };
    return m;
    }();
    return f;
}

} // namespace

OperatorCard rowwiseCard(const std::string &family, const ShapeBindings &shape, DType dtype)
{
    return rowCard(family, shape, dtype);
}

std::vector<std::string> cardFamilies()
{
    std::vector<std::string> out;
    for (const auto &[k, v] : factories())
        out.push_back(k);
    return out;
}

OperatorCard makeCard(const std::string &family, const ShapeBindings &shape, DType dtype)
{
    auto it = factories().find(family);
    if (it == factories().end())
        throw Error("no operator card for the family '" + family + "'");
    auto card = it->second(shape, dtype);
    checkExtents(card);
    return card;
}

bool dimFamily(const std::string &family)
{
    return family.size() > 4 && family.compare(family.size() - 4, 4, "_dim") == 0 && factories().count(family);
}

bool nchwFamily(const std::string &family)
{
    return family == "instance_norm" || family.rfind("batch_norm", 0) == 0;
}

ShapeBindings dimView(const std::vector<int64_t> &shape, size_t d)
{
    if (d >= shape.size())
        throw Error("dimension " + std::to_string(d) + " is outside a tensor of rank " + std::to_string(shape.size()));
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < d; ++i)
        outer *= shape[i];
    for (size_t i = d + 1; i < shape.size(); ++i)
        inner *= shape[i];
    return {{"outer", outer}, {"dim", shape[d]}, {"inner", inner}};
}

OperatorCard makeSoftmaxCard(int64_t rows, int64_t cols, DType dtype)
{
    return makeCard("softmax", {{"rows", rows}, {"cols", cols}}, dtype);
}

namespace {

bool attentionSoftmax(const std::string &family) { return family == "scaled_softmax" || family == "scaled_masked_softmax"; }

// What a form adds to kforge::<family>: the one place its operator names are spelled.
std::string formSuffix(SoftmaxForm form)
{
    return std::string(form.native ? "_native" : "") + (form.divide ? "_div" : "") + (form.traced ? "_traced" : "");
}

} // namespace

void useNativeOperator(OperatorCard &card, SoftmaxForm form)
{
    if (!attentionSoftmax(card.family))
        throw Error("only the attention softmax chains have a native operator, not " + card.family);
    if (!form.native)
        throw Error("useNativeOperator takes a native form of " + card.family);
    const std::string op = "kforge::" + card.family + formSuffix(form);
    const std::string scale = form.divide ? "float divisor" : "float scale";
    card.atenOp = op;
    card.atenSchema = op + (card.family == "scaled_softmax" ? "(Tensor x, " + scale + ") -> Tensor" : "(Tensor x, " + scale + ", Tensor mask) -> Tensor");
}

std::optional<SoftmaxForm> softmaxForm(const OperatorCard &card)
{
    const std::string prefix = "kforge::" + card.family;
    if (!attentionSoftmax(card.family) || card.atenOp.compare(0, prefix.size(), prefix) != 0)
        return std::nullopt;
    const std::string suffix = card.atenOp.substr(prefix.size());
    for (const SoftmaxForm form : {SoftmaxForm{}, SoftmaxForm{true, false, false}, SoftmaxForm{true, false, true}, SoftmaxForm{true, true, false},
                                   SoftmaxForm{true, true, true}})
        if (suffix == formSuffix(form))
            return form;
    return std::nullopt;
}

double softmaxMultiplier(const OperatorCard &card)
{
    double scale = 1.0;
    if (card.referenceArgs.size() > 1 && card.referenceArgs[1].contains("double"))
        scale = card.referenceArgs[1]["double"].get<double>();
    const auto form = softmaxForm(card);
    return form && form->divide ? 1.0 / scale : scale;
}

} // namespace kforge
