#include "ops/pointwise_ops.h"

#include "util/error.h"

namespace kforge {

namespace {

using J = nlohmann::json;

const std::string kSelf = "(Tensor self) -> Tensor";

} // namespace

const std::vector<PointwiseOp> &pointwiseOps()
{
    // Expressions follow ATen's own formulas (aten/src/ATen/native/cpu/Activation.cpp), so the guard's
    // comparison with ATen's error on the same inputs holds them to what ATen does.
    static const std::vector<PointwiseOp> ops = {
        {"relu", "aten::relu", "", "aten::relu" + kSelf, {"x"}, {}, "", "max(x, 0)", ErrorModel::Exact},
        {"gelu", "aten::gelu", "", "aten::gelu(Tensor self, *, str approximate='none') -> Tensor", {"x"}, {}, "none",
         "0.5 * x * (1 + erf(x * 0.7071067811865476))"},
        {"gelu_tanh", "aten::gelu", "", "aten::gelu(Tensor self, *, str approximate='tanh') -> Tensor", {"x"}, {}, "tanh",
         "0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * pow(x, 3))))"},
        {"silu", "aten::silu", "", "aten::silu" + kSelf, {"x"}, {}, "", "x * sigmoid(x)"},
        {"sigmoid", "aten::sigmoid", "", "aten::sigmoid" + kSelf, {"x"}, {}, "", "sigmoid(x)"},
        {"tanh", "aten::tanh", "", "aten::tanh" + kSelf, {"x"}, {}, "", "tanh(x)"},
        {"leaky_relu", "aten::leaky_relu", "", "aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor", {"x"},
         {{"negative_slope", 0.01}}, "", "where(x > 0, x, x * negative_slope)"},
        {"elu", "aten::elu", "", "aten::elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor", {"x"},
         {{"alpha", 1.0}, {"scale", 1.0}, {"input_scale", 1.0}}, "", "where(x <= 0, expm1(x * input_scale) * alpha * scale, x * scale)"},
        {"selu", "aten::selu", "", "aten::selu" + kSelf, {"x"}, {}, "",
         "where(x <= 0, expm1(x) * 1.6732632423543772 * 1.0507009873554805, x * 1.0507009873554805)"},
        {"celu", "aten::celu", "", "aten::celu(Tensor self, Scalar alpha=1.0) -> Tensor", {"x"}, {{"alpha", 1.0}}, "",
         "where(x <= 0, expm1(x / alpha) * alpha, x)"},
        {"hardtanh", "aten::hardtanh", "", "aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor", {"x"},
         {{"min_val", -1.0}, {"max_val", 1.0}}, "", "min(max(x, min_val), max_val)", ErrorModel::Exact},
        {"relu6", "aten::relu6", "", "aten::relu6" + kSelf, {"x"}, {}, "", "min(max(x, 0), 6)", ErrorModel::Exact},
        {"hardsigmoid", "aten::hardsigmoid", "", "aten::hardsigmoid" + kSelf, {"x"}, {}, "", "min(max(x + 3, 0), 6) / 6"},
        {"hardswish", "aten::hardswish", "", "aten::hardswish" + kSelf, {"x"}, {}, "", "x * min(max(x + 3, 0), 6) / 6"},
        {"softplus", "aten::softplus", "", "aten::softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor", {"x"},
         {{"beta", 1.0}, {"threshold", 20.0}}, "", "where(x * beta > threshold, x, log1p(exp(x * beta)) / beta)"},
        {"mish", "aten::mish", "", "aten::mish" + kSelf, {"x"}, {}, "", "x * tanh(log1p(exp(x)))"},
        {"add_gelu", "kforge::add_gelu", "", "add_gelu(Tensor x, Tensor residual) -> Tensor  (gelu(x + residual), erf form)",
         {"x", "residual"}, {}, "", "0.5 * (x + residual) * (1 + erf((x + residual) * 0.7071067811865476))"},
        // The gated MLP's SiLU gate as a model writes it, silu(gate) * up (runtime/fused_ops.h): a fused chain.
        {"silu_mul", "kforge::silu_mul", "", "kforge::silu_mul(Tensor gate, Tensor up) -> Tensor", {"gate", "up"}, {}, "",
         "gate * sigmoid(gate) * up"},
        // The same gate with GELU (Gemma's gelu_pytorch_tanh, GeGLU's exact GELU): gelu(gate, approximate) * up.
        {"gelu_tanh_mul", "kforge::gelu_tanh_mul", "", "kforge::gelu_tanh_mul(Tensor gate, Tensor up) -> Tensor", {"gate", "up"}, {}, "",
         "0.5 * gate * (1 + tanh(0.7978845608028654 * (gate + 0.044715 * pow(gate, 3)))) * up"},
        {"gelu_mul", "kforge::gelu_mul", "", "kforge::gelu_mul(Tensor gate, Tensor up) -> Tensor", {"gate", "up"}, {}, "",
         "0.5 * gate * (1 + erf(gate * 0.7071067811865476)) * up"},
        // GELU's tanh form written out in Python, as Hugging Face's NewGELUActivation ("gelu_new": GPT-2, GPT-Neo,
        // GPT-J, CodeGen; T5 v1.1 and Flan-T5 gate with it) writes it, eight ATen calls each rounding to x's
        // dtype: `0.5 * x * (1.0 + tanh(sqrt(2 / pi) * (x + 0.044715 * pow(x, 3.0))))`; and its gate times up.
        {"gelu_new", "kforge::gelu_new", "", "kforge::gelu_new(Tensor x) -> Tensor", {"x"}, {}, "",
         "0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * pow(x, 3))))"},
        {"gelu_new_mul", "kforge::gelu_new_mul", "", "kforge::gelu_new_mul(Tensor gate, Tensor up) -> Tensor", {"gate", "up"}, {}, "",
         "0.5 * gate * (1 + tanh(0.7978845608028654 * (gate + 0.044715 * pow(gate, 3)))) * up"},
        // Hugging Face's QuickGELUActivation (`ACT2FN["quick_gelu"]`: CLIP, the text encoder of Stable Diffusion
        // 1.x and 2.x), `x * torch.sigmoid(1.702 * x)`, three calls each rounding to x's dtype.
        {"quick_gelu", "kforge::quick_gelu", "", "kforge::quick_gelu(Tensor x) -> Tensor", {"x"}, {}, "", "x * sigmoid(1.702 * x)"},
    };
    return ops;
}

const PointwiseOp *findPointwiseOp(const std::string &family)
{
    for (const auto &op : pointwiseOps())
        if (op.family == family)
            return &op;
    return nullptr;
}

Expression pointwiseExpression(const PointwiseOp &op, const std::vector<double> &scalars)
{
    std::map<std::string, double> constants;
    for (size_t i = 0; i < op.scalars.size(); ++i)
        constants[op.scalars[i].first] = i < scalars.size() ? scalars[i] : op.scalars[i].second;
    return Expression::parse(op.expression, op.inputs, constants);
}

OperatorCard pointwiseFamilyCard(const PointwiseOp &op, const ShapeBindings &shape, DType dtype, const std::vector<double> &scalars)
{
    OperatorCard c = rowwiseCard(op.family, shape, dtype);
    for (size_t i = 1; i < op.inputs.size(); ++i)
        c.inputs.push_back({op.inputs[i], {"rows", "cols"}, dtype});
    c.inputs.front().name = op.inputs.front();
    c.atenSchema = op.schema;
    c.atenOp = op.atenOp;
    c.atenOverload = op.overload;
    c.referenceArgs = J::array();
    for (size_t i = 0; i < op.inputs.size(); ++i)
        c.referenceArgs.push_back({{"input", i}});
    const auto e = pointwiseExpression(op, scalars);
    for (size_t i = 0; i < op.scalars.size(); ++i)
        c.referenceArgs.push_back({{"double", i < scalars.size() ? scalars[i] : op.scalars[i].second}});
    if (!op.strArg.empty())
        c.referenceArgs.push_back({{"str", op.strArg}});
    c.errorModel = op.errorModel;
    c.expression = e.text();
    c.flopsPerElement = e.flops();
    return c;
}

namespace {

std::optional<double> number(const J &v)
{
    if (v.is_number())
        return v.get<double>();
    if (v.is_boolean())
        return v.get<bool>() ? 1.0 : 0.0;
    return std::nullopt;
}

} // namespace

std::optional<PointwiseMatch> matchPointwiseOp(const std::string &op, const std::vector<PointwiseArg> &args)
{
    for (const auto &p : pointwiseOps()) {
        if (op != p.atenOp + (p.overload.empty() ? "" : "." + p.overload))
            continue;
        const size_t n = p.inputs.size(), want = n + p.scalars.size() + (p.strArg.empty() ? 0 : 1);
        if (args.size() != want)
            continue;
        bool ok = true;
        for (size_t i = 0; i < n; ++i)
            ok &= args[i].tensor.has_value();
        PointwiseMatch m{&p, {}};
        for (size_t i = 0; ok && i < p.scalars.size(); ++i) {
            const auto v = args[n + i].tensor ? std::nullopt : number(args[n + i].scalar);
            ok &= v.has_value();
            if (v)
                m.scalars.push_back(*v);
        }
        if (ok && !p.strArg.empty())
            ok = args.back().scalar.is_string() && args.back().scalar.get<std::string>() == p.strArg;
        if (ok)
            return m;
    }
    return std::nullopt;
}

std::optional<Expression> pointwiseOfCall(const std::string &op, const std::vector<PointwiseArg> &args, std::string *why)
{
    auto fail = [&](const std::string &reason) -> std::optional<Expression> {
        if (why)
            *why = op + " " + reason;
        return std::nullopt;
    };
    if (const auto m = matchPointwiseOp(op, args)) {
        std::map<std::string, Expression> in;
        for (size_t i = 0; i < m->op->inputs.size(); ++i)
            in.emplace(m->op->inputs[i], *args[i].tensor);
        return pointwiseExpression(*m->op, m->scalars).substitute(in);
    }
    // An operand as an expression: a tensor's, or a number's.
    auto operand = [&](size_t i) -> std::optional<Expression> {
        if (i >= args.size())
            return std::nullopt;
        if (args[i].tensor)
            return args[i].tensor;
        if (const auto v = number(args[i].scalar))
            return Expression::number(*v);
        return std::nullopt;
    };
    auto scalar = [&](size_t i) { return i < args.size() && !args[i].tensor ? number(args[i].scalar) : std::nullopt; };
    const auto dot = op.find('.');
    const std::string base = op.substr(0, dot), overload = dot == std::string::npos ? "" : op.substr(dot + 1);
    if (base.rfind("aten::", 0) != 0)
        return fail("is not an ATen operator");
    const std::string name = base.substr(6);
    const auto a = operand(0);
    if (!a || !args[0].tensor)
        return fail("takes no tensor first");
    static const std::map<std::string, std::string> unary = {{"exp", "exp"},   {"log", "log"},         {"log1p", "log1p"}, {"expm1", "expm1"},
                                                             {"tanh", "tanh"}, {"sigmoid", "sigmoid"}, {"erf", "erf"},     {"sqrt", "sqrt"},
                                                             {"rsqrt", "rsqrt"}, {"abs", "abs"}};
    if (const auto it = unary.find(name); it != unary.end() && args.size() == 1)
        return Expression::call(it->second, {*a});
    if (name == "neg" && args.size() == 1)
        return Expression::negate(*a);
    if (name == "reciprocal" && args.size() == 1)
        return Expression::binary("/", Expression::number(1), *a);
    if (name == "square" && args.size() == 1)
        return Expression::call("pow", {*a, Expression::number(2)});
    const auto b = operand(1);
    if ((name == "add" || name == "sub" || name == "rsub") && (overload == "Tensor" || overload == "Scalar") && args.size() == 3 && b) {
        const auto alpha = scalar(2);
        if (!alpha)
            return fail("has an alpha that is not a number");
        const auto scaled = [&](const Expression &e) { return *alpha == 1 ? e : Expression::binary("*", e, Expression::number(*alpha)); };
        if (name == "add")
            return Expression::binary("+", *a, scaled(*b));
        if (name == "sub")
            return Expression::binary("-", *a, scaled(*b));
        return Expression::binary("-", *b, scaled(*a));
    }
    if ((name == "mul" || name == "div") && (overload == "Tensor" || overload == "Scalar") && args.size() == 2 && b)
        return Expression::binary(name == "mul" ? "*" : "/", *a, *b);
    if (name == "div" && overload == "Tensor_mode" && args.size() == 3 && b && args[2].scalar.is_null())
        return Expression::binary("/", *a, *b);
    if ((name == "maximum" || name == "minimum") && args.size() == 2 && b)
        return Expression::call(name == "maximum" ? "max" : "min", {*a, *b});
    if (name == "pow" && overload == "Tensor_Scalar" && args.size() == 2 && scalar(1))
        return Expression::call("pow", {*a, Expression::number(*scalar(1))});
    if ((name == "clamp_min" || name == "clamp_max") && args.size() == 2 && scalar(1))
        return Expression::call(name == "clamp_min" ? "max" : "min", {*a, Expression::number(*scalar(1))});
    if (name == "clamp" && overload.empty() && args.size() == 3) {
        Expression e = *a;
        for (size_t i : {size_t(1), size_t(2)}) {
            if (args[i].scalar.is_null() && !args[i].tensor)
                continue;
            const auto bound = scalar(i);
            if (!bound)
                return fail("has a bound that is not a number");
            e = Expression::call(i == 1 ? "max" : "min", {e, Expression::number(*bound)});
        }
        return e;
    }
    return fail("is not a pointwise operator kforge fuses");
}

} // namespace kforge
