#include "ops/operator_card.h"

#include "ops/expression.h"
#include "util/error.h"

namespace kforge {

std::string dtypeName(DType t)
{
    switch (t) {
    case DType::F32: return "float32";
    case DType::F16: return "float16";
    case DType::BF16: return "bfloat16";
    case DType::F64: return "float64";
    case DType::I64: return "int64";
    case DType::I32: return "int32";
    case DType::Bool: return "bool";
    }
    return "unknown";
}

DType dtypeFromName(const std::string &name)
{
    for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I64, DType::I32, DType::Bool})
        if (dtypeName(t) == name)
            return t;
    throw Error("unknown dtype '" + name + "'");
}

std::string errorModelName(ErrorModel m)
{
    switch (m) {
    case ErrorModel::Exact: return "exact";
    case ErrorModel::Sum: return "sum";
    case ErrorModel::Normalization: return "norm";
    case ErrorModel::Pointwise: break;
    }
    return "pointwise";
}

ErrorModel errorModelFromName(const std::string &name)
{
    for (ErrorModel m : {ErrorModel::Exact, ErrorModel::Pointwise, ErrorModel::Normalization, ErrorModel::Sum})
        if (errorModelName(m) == name)
            return m;
    throw Error("unknown error model '" + name + "' (exact, pointwise, norm or sum)");
}

int dtypeSize(DType t)
{
    switch (t) {
    case DType::Bool: return 1;
    case DType::F16:
    case DType::BF16: return 2;
    case DType::F32:
    case DType::I32: return 4;
    case DType::F64:
    case DType::I64: return 8;
    }
    return 0;
}

std::vector<int64_t> OperatorCard::sizes(const TensorSpec &t, const ShapeBindings &s) const
{
    std::vector<int64_t> out;
    for (const auto &d : t.dims) {
        auto it = s.find(d);
        if (it == s.end())
            throw Error("operator card '" + key + "': tensor '" + t.name + "' uses shape symbol '" + d
                        + "' that the shape does not bind");
        out.push_back(it->second);
    }
    return out;
}

bool keepsMultiples(const OperatorCard &card, const ShapeBindings &shape)
{
    for (const auto &[a, b] : card.multiples) {
        const auto ia = shape.find(a), ib = shape.find(b);
        if (ia == shape.end() || ib == shape.end() || ib->second < 1 || ia->second % ib->second != 0)
            return false;
    }
    return true;
}

int64_t OperatorCard::numel(const TensorSpec &t, const ShapeBindings &s) const
{
    int64_t n = 1;
    for (int64_t d : sizes(t, s))
        n *= d;
    return n;
}

double OperatorCard::minBytes(const ShapeBindings &s) const
{
    double bytes = 0;
    for (const auto &t : inputs)
        bytes += double(numel(t, s)) * dtypeSize(t.dtype);
    for (const auto &t : outputs)
        bytes += double(numel(t, s)) * dtypeSize(t.dtype);
    return bytes;
}

double OperatorCard::flops(const ShapeBindings &s) const
{
    return outputs.empty() ? 0.0 : flopsPerElement * double(numel(outputs.front(), s));
}

static void to_json(nlohmann::json &j, const TensorSpec &t)
{
    j = {{"name", t.name}, {"dims", t.dims}, {"dtype", dtypeName(t.dtype)}, {"init", t.init}};
}

static void from_json(const nlohmann::json &j, TensorSpec &t)
{
    t.name = j.at("name").get<std::string>();
    t.dims = j.at("dims").get<std::vector<std::string>>();
    t.dtype = dtypeFromName(j.at("dtype").get<std::string>());
    t.init = j.value("init", "randn");
}

void to_json(nlohmann::json &j, const OperatorCard &c)
{
    nlohmann::json ins = nlohmann::json::array(), outs = nlohmann::json::array();
    for (const auto &t : c.inputs)
        ins.push_back(t);
    for (const auto &t : c.outputs)
        outs.push_back(t);
    j = {{"key", c.key},
         {"family", c.family},
         {"aten_schema", c.atenSchema},
         {"aten_op", c.atenOp},
         {"aten_overload", c.atenOverload},
         {"reference_args", c.referenceArgs},
         {"inputs", ins},
         {"outputs", outs},
         {"shape", c.shape},
         {"held_out_shapes", c.heldOutShapes},
         {"input_scales", c.inputScales},
         {"error_model", errorModelName(c.errorModel)},
         {"invariants", c.invariants},
         {"special_inputs", c.specialInputs},
         {"flops_per_element", c.flopsPerElement},
         {"calls", c.calls},
         {"workload_ms", c.workloadMs}};
    if (!c.capturedFile.empty())
        j["captured_inputs"] = {{"file", c.capturedFile}, {"prefix", c.capturedPrefix}};
    if (!c.expression.empty())
        j["expression"] = c.expression;
    if (!c.definition.empty())
        j["definition"] = c.definition;
    if (!c.multiples.empty())
        j["multiples"] = c.multiples;
}

void from_json(const nlohmann::json &j, OperatorCard &c)
{
    try {
        c.key = j.at("key").get<std::string>();
        c.family = j.at("family").get<std::string>();
        c.atenSchema = j.value("aten_schema", "");
        c.atenOp = j.at("aten_op").get<std::string>();
        c.atenOverload = j.value("aten_overload", "");
        c.referenceArgs = j.at("reference_args");
        c.inputs.clear();
        for (const auto &t : j.at("inputs"))
            c.inputs.push_back(t.get<TensorSpec>());
        c.outputs.clear();
        for (const auto &t : j.at("outputs"))
            c.outputs.push_back(t.get<TensorSpec>());
        c.shape = j.at("shape").get<ShapeBindings>();
        c.heldOutShapes = j.value("held_out_shapes", std::vector<ShapeBindings>{});
        c.multiples = j.value("multiples", std::vector<std::pair<std::string, std::string>>{});
        c.inputScales = j.value("input_scales", std::vector<double>{1.0});
        // Cards written before the float64 guard carry a "tolerance"; it no longer decides anything.
        c.errorModel = errorModelFromName(j.value("error_model", std::string("pointwise")));
        c.invariants = j.value("invariants", std::vector<std::string>{});
        c.specialInputs = j.value("special_inputs", std::vector<std::string>{});
        c.flopsPerElement = j.value("flops_per_element", 0.0);
        c.calls = j.value("calls", int64_t(1));
        c.workloadMs = j.value("workload_ms", 0.0);
        c.capturedFile.clear();
        c.capturedPrefix.clear();
        if (j.contains("captured_inputs")) {
            c.capturedFile = j["captured_inputs"].at("file").get<std::string>();
            c.capturedPrefix = j["captured_inputs"].value("prefix", std::string());
        }
    } catch (const nlohmann::json::exception &e) {
        throw Error(std::string("malformed operator card: ") + e.what());
    }
    if (c.inputs.empty() || c.outputs.empty())
        throw Error("malformed operator card '" + c.key + "': it needs at least one input and one output");
    if (c.inputScales.empty())
        throw Error("malformed operator card '" + c.key + "': input_scales is empty");
    try {
        checkExtents(c);
    } catch (const Error &e) {
        throw Error(std::string("malformed ") + e.what());
    }
    c.expression = j.value("expression", std::string());
    c.definition = j.value("definition", std::string());
    if (!c.expression.empty()) {
        std::vector<std::string> names;
        for (const auto &t : c.inputs)
            names.push_back(t.name);
        try {
            Expression::parse(c.expression, names);
        } catch (const Error &e) {
            throw Error("malformed operator card '" + c.key + "': expression " + e.what());
        }
    }
}

void checkExtents(const OperatorCard &card)
{
    const auto check = [&](const TensorSpec &t, const ShapeBindings &shape, const std::string &which) {
        // Bytes up to 2^62: far past any device's memory, and no count on the way overflows.
        constexpr int64_t kMostBytes = int64_t(1) << 62;
        const std::string where = "operator card '" + card.key + "'" + which + ": the tensor " + t.name;
        int64_t bytes = dtypeSize(t.dtype);
        for (const auto &sym : t.dims) {
            const auto it = shape.find(sym);
            if (it == shape.end())
                throw Error(where + " uses the shape symbol '" + sym + "', which the shape does not bind");
            if (it->second < 1)
                throw Error(where + " needs " + sym + " at least 1, not " + std::to_string(it->second) + " (an empty tensor leaves nothing to compute)");
            if (bytes > kMostBytes / it->second)
                throw Error(where + " at " + shapeText(shape, ", ") + " is larger than 2^62 bytes");
            bytes *= it->second;
        }
    };
    for (size_t i = 0; i <= card.heldOutShapes.size(); ++i) {
        const auto &shape = i == 0 ? card.shape : card.heldOutShapes[i - 1];
        const std::string which = i == 0 ? "" : " (held-out shape " + std::to_string(i) + ")";
        for (const auto &t : card.inputs)
            check(t, shape, which);
        for (const auto &t : card.outputs)
            check(t, shape, which);
    }
}

std::string shapeText(const ShapeBindings &shape, const std::string &separator)
{
    std::string out;
    for (const auto &[k, v] : shape)
        out += (out.empty() ? "" : separator) + k + "=" + std::to_string(v);
    return out;
}

// "rows=4096,cols=1024" -> bindings
ShapeBindings parseShape(const std::string &text)
{
    ShapeBindings b;
    size_t pos = 0;
    while (pos < text.size()) {
        const auto comma = text.find(',', pos);
        const auto item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        const auto eq = item.find('=');
        if (eq == std::string::npos || eq == 0)
            throw Error("a shape is written name=extent,name=extent (e.g. rows=4096,cols=1024), not '" + text + "'");
        const auto value = item.substr(eq + 1);
        size_t used = 0;
        try {
            b[item.substr(0, eq)] = std::stoll(value, &used);
        } catch (...) {
            used = 0;
        }
        if (used == 0 || used != value.size())
            throw Error("shape symbol '" + item.substr(0, eq) + "' needs a whole number, not '" + value + "'");
        if (comma == std::string::npos)
            break;
        pos = comma + 1;
    }
    return b;
}

} // namespace kforge
