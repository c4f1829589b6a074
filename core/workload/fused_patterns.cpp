#include "workload/fused_patterns.h"

#include <map>
#include <optional>

#include "util/error.h"

namespace kforge {

namespace {

// ScalarType codes as the recorded calls carry them (c10::ScalarType).
int scalarTypeCode(const std::string &dtype)
{
    if (dtype == "float32")
        return 6;
    if (dtype == "bfloat16")
        return 15;
    if (dtype == "float16")
        return 5;
    return -1;
}

const CallArg *arg(const CapturedCall &c, const char *name)
{
    for (const auto &a : c.args)
        if (a.name == name)
            return &a;
    return nullptr;
}

const TensorMeta *tensorArg(const CapturedCall &c, const char *name)
{
    const auto *a = arg(c, name);
    return a && a->kind == "tensor" && a->tensors.size() == 1 ? &a->tensors[0] : nullptr;
}

bool intArg(const CapturedCall &c, const char *name, int64_t want)
{
    const auto *a = arg(c, name);
    return a && a->kind == "int" && a->value.is_number_integer() && a->value.get<int64_t>() == want;
}

bool plainCast(const CapturedCall &c, const std::vector<int64_t> &shape, const std::string &from, const std::string &to)
{
    const auto *self = tensorArg(c, "self");
    const auto *nb = arg(c, "non_blocking"), *cp = arg(c, "copy"), *mf = arg(c, "memory_format");
    return c.qualifiedName() == "aten::to.dtype" && self && self->shape == shape && self->dtype == from && intArg(c, "dtype", scalarTypeCode(to))
           && nb && nb->kind == "bool" && nb->value == false && cp && cp->kind == "bool" && cp->value == false && mf && mf->kind == "none";
}

struct Chain {
    std::vector<int64_t> shape;
    std::string dtype;
    double scale = 1;
    std::vector<int64_t> mask; // empty: no mask
    double us = 0;
    size_t length = 0;
};

// The chain starting at top-level call `i`, if there is one.
std::optional<Chain> chainAt(const std::vector<const CapturedCall *> &top, size_t i)
{
    const auto &mul = *top[i];
    const auto *x = tensorArg(mul, "self");
    const auto *scale = arg(mul, "other");
    if (mul.qualifiedName() != "aten::mul.Scalar" || !x || !x->contiguous() || x->shape.size() < 2 || !scale || scale->kind != "double"
        || scalarTypeCode(x->dtype) < 0)
        return std::nullopt;
    Chain c;
    c.shape = x->shape;
    c.dtype = x->dtype;
    c.scale = scale->value.get<double>();
    c.us = mul.durUs;
    size_t j = i + 1;
    const int64_t cols = c.shape.back(), qrows = c.shape[c.shape.size() - 2];
    if (j < top.size() && top[j]->qualifiedName() == "aten::add.Tensor") {
        const auto *self = tensorArg(*top[j], "self"), *mask = tensorArg(*top[j], "other");
        if (!self || self->shape != c.shape || self->dtype != c.dtype || !mask || !mask->contiguous() || mask->shape.size() != 2
            || mask->dtype != c.dtype || mask->shape[1] != cols || (mask->shape[0] != qrows && mask->shape[0] != 1) || !intArg(*top[j], "alpha", 1))
            return std::nullopt;
        c.mask = mask->shape;
        c.us += top[j]->durUs;
        ++j;
    }
    if (j + 3 > top.size() || !plainCast(*top[j], c.shape, c.dtype, "float32"))
        return std::nullopt;
    const auto &sm = *top[j + 1];
    const auto *sx = tensorArg(sm, "self");
    const auto *sdt = arg(sm, "dtype");
    if (sm.qualifiedName() != "aten::softmax.int" || !sx || sx->shape != c.shape || sx->dtype != "float32"
        || !(intArg(sm, "dim", -1) || intArg(sm, "dim", int64_t(c.shape.size()) - 1)) || !sdt || sdt->kind != "none")
        return std::nullopt;
    if (!plainCast(*top[j + 2], c.shape, "float32", c.dtype))
        return std::nullopt;
    c.us += top[j]->durUs + sm.durUs + top[j + 2]->durUs;
    c.length = j + 3 - i;
    return c;
}

} // namespace

std::vector<OperatorCard> fusedPatternCards(const std::vector<CapturedCall> &calls, int keyIndex)
{
    std::vector<const CapturedCall *> top;
    for (const auto &c : calls)
        if (c.depth == 0)
            top.push_back(&c);
    std::map<std::string, size_t> byPattern;
    std::vector<OperatorCard> out;
    for (size_t i = 0; i < top.size();) {
        const auto chain = chainAt(top, i);
        if (!chain) {
            ++i;
            continue;
        }
        i += chain->length;
        int64_t rows = 1;
        for (size_t d = 0; d + 1 < chain->shape.size(); ++d)
            rows *= chain->shape[d];
        const std::string family = chain->mask.empty() ? "scaled_softmax" : "scaled_masked_softmax";
        ShapeBindings shape = {{"rows", rows}, {"cols", chain->shape.back()}};
        if (!chain->mask.empty())
            shape["mrows"] = chain->mask[0];
        const std::string pattern = family + nlohmann::json(shape).dump() + chain->dtype + std::to_string(chain->scale);
        auto [it, fresh] = byPattern.try_emplace(pattern, out.size());
        if (fresh) {
            auto card = makeCard(family, shape, dtypeFromName(chain->dtype));
            card.referenceArgs[1] = {{"double", chain->scale}};
            card.key = family + "." + chain->dtype + "." + std::to_string(keyIndex++);
            card.calls = 0;
            card.workloadMs = 0;
            out.push_back(std::move(card));
        }
        auto &card = out[it->second];
        card.calls += 1;
        card.workloadMs += chain->us / 1000.0;
    }
    return out;
}

} // namespace kforge
