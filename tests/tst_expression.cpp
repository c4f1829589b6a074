// The pointwise expression language (core/ops/expression.h): parsing to a canonical text, rendering to
// CUDA C and C++, evaluation, errors with their column; the activation table (core/ops/pointwise_ops.h)
// against known values; ATen calls and a traced chain of them turned into one expression; cards that
// carry an expression.
#include <QtTest>

#include <cmath>

#include "ops/expression.h"
#include "ops/pointwise_ops.h"
#include "util/error.h"
#include "workload/call_cards.h"
#include "workload/pointwise_fusion.h"
#include "workload/problem_cards.h"

using namespace kforge;
using J = nlohmann::json;

namespace {

const std::vector<std::string> kVars = {"x", "residual"};

PointwiseArg tensorArg(const std::string &name)
{
    return {Expression::variable(name), nullptr};
}

PointwiseArg scalarArg(J v)
{
    return {std::nullopt, std::move(v)};
}

TracedValue in(int i)
{
    return {TracedValue::From::Input, i, nullptr};
}
TracedValue node(int i)
{
    return {TracedValue::From::Node, i, nullptr};
}
TracedValue constant(J v)
{
    return {TracedValue::From::Constant, 0, std::move(v)};
}

// MinGPT's NewGELU as torch.jit.trace records it (0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))).
TracedGraph minGptGelu()
{
    TracedGraph g;
    g.nodes = {{"aten::mul.Tensor", {in(0), constant(0.5)}},
               {"aten::pow.Tensor_Scalar", {in(0), constant(3.0)}},
               {"aten::mul.Tensor", {node(1), constant(0.044715)}},
               {"aten::add.Tensor", {in(0), node(2), constant(1)}},
               {"aten::mul.Tensor", {node(3), constant(0.7978845608028654)}},
               {"aten::tanh", {node(4)}},
               {"aten::add.Tensor", {node(5), constant(1.0), constant(1)}},
               {"aten::mul.Tensor", {node(0), node(6)}}};
    g.outputs = {node(7)};
    return g;
}

} // namespace

class TestExpression : public QObject {
    Q_OBJECT
private slots:
    void parsesToCanonicalText_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("canonical");
        QTest::addColumn<double>("x");
        QTest::addColumn<double>("value");
        auto row = [](const char *name, const char *text, const char *canonical, double x, double value) {
            QTest::newRow(name) << QString::fromLatin1(text) << QString::fromLatin1(canonical) << x << value;
        };
        row("precedence", "1 + 2 * x", "1 + 2 * x", 3, 7);
        row("parentheses kept where needed", "(1 + 2) * x", "(1 + 2) * x", 3, 9);
        row("redundant parentheses dropped", "((x)) + (2 * x)", "x + 2 * x", 3, 9);
        row("left associative", "x - 1 - 2", "x - 1 - 2", 10, 7);
        row("right operand grouped", "x - (1 - 2)", "x - (1 - 2)", 10, 11);
        row("division", "x / 2 / 4", "x / 2 / 4", 16, 2);
        row("unary minus", "-x * 2", "-x * 2", 3, -6);
        row("minus of a sum", "-(x + 1)", "-(x + 1)", 3, -4);
        row("double minus", "x - -2", "x - -2", 3, 5);
        row("exponent notation", "1.5e-3 * x", "0.0015 * x", 2, 0.003);
        row("pi", "2 * pi", "2 * 3.141592653589793", 0, 2 * M_PI);
        row("pow folds its exponent", "pow(x, 1 + 2)", "pow(x, 3)", 2, 8);
        row("comparison as a value", "(x > 0) + 1", "(x > 0) + 1", 2, 2);
        row("where", "where(x <= 0, -x, x * 2)", "where(x <= 0, -x, x * 2)", -3, 3);
        row("max propagates NaN", "max(x, 0)", "max(x, 0)", std::nan(""), std::nan(""));
        row("min", "min(x, 6)", "min(x, 6)", 7, 6);
        row("functions", "exp(log(x)) + sqrt(x) + rsqrt(x) + abs(-x)", "exp(log(x)) + sqrt(x) + rsqrt(x) + abs(-x)", 4, 4 + 2 + 0.5 + 4);
        row("sigmoid", "sigmoid(x)", "sigmoid(x)", 0, 0.5);
        row("log1p and expm1", "log1p(expm1(x))", "log1p(expm1(x))", 0.25, 0.25);
        row("two variables", "x + residual * 2", "x + residual * 2", 1, 1 + 2 * 10);
    }

    void parsesToCanonicalText()
    {
        QFETCH(QString, text);
        QFETCH(QString, canonical);
        QFETCH(double, x);
        QFETCH(double, value);
        const auto e = Expression::parse(text.toStdString(), kVars);
        QCOMPARE(QString::fromStdString(e.text()), canonical);
        // The canonical text reads back as the same expression.
        QCOMPARE(QString::fromStdString(Expression::parse(e.text(), kVars).text()), canonical);
        const double got = e.evaluate({{"x", x}, {"residual", 10}});
        if (std::isnan(value))
            QVERIFY(std::isnan(got));
        else
            QVERIFY2(std::fabs(got - value) <= 1e-12 * std::max(1.0, std::fabs(value)), std::to_string(got).c_str());
    }

    void rendersForBothTargets_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("cuda");
        QTest::addColumn<QString>("cpp");
        auto row = [](const char *name, const char *text, const char *cuda, const char *cpp) {
            QTest::newRow(name) << QString::fromLatin1(text) << QString::fromLatin1(cuda) << QString::fromLatin1(cpp);
        };
        row("float constants", "0.5 * x + 3", "((0.5f * v0) + 3.0f)", "((0.5f * v0) + 3.0f)");
        row("functions", "exp(x) + tanh(x)", "(expf(v0) + tanhf(v0))", "(std::exp(v0) + std::tanh(v0))");
        row("erf", "erf(x * 0.7071067811865476)", "erff((v0 * 0.707106781f))", "std::erf((v0 * 0.707106781f))");
        row("rsqrt", "rsqrt(x)", "rsqrtf(v0)", "(1.0f / std::sqrt(v0))");
        row("sigmoid", "sigmoid(x)", "(1.0f / (1.0f + expf(-v0)))", "(1.0f / (1.0f + std::exp(-v0)))");
        row("max and min call the templates' helpers", "min(max(x, 0), 6)", "kf_min(kf_max(v0, 0.0f), 6.0f)", "kf_min(kf_max(v0, 0.0f), 6.0f)");
        row("pow 3 multiplies", "pow(x, 3)", "(v0 * v0 * v0)", "(v0 * v0 * v0)");
        row("pow 0.5 is sqrt", "pow(x, 0.5)", "sqrtf(v0)", "std::sqrt(v0)");
        row("other powers", "pow(x, 1.5)", "powf(v0, 1.5f)", "std::pow(v0, 1.5f)");
        row("where with a comparison", "where(x > 0, x, x * 0.2)", "((v0 > 0.0f) ? v0 : (v0 * 0.2f))", "((v0 > 0.0f) ? v0 : (v0 * 0.2f))");
        row("where with a value", "where(x, 1, 2)", "((v0 != 0.0f) ? 1.0f : 2.0f)", "((v0 != 0.0f) ? 1.0f : 2.0f)");
        row("comparison as a value", "x * (x >= 1)", "(v0 * ((v0 >= 1.0f) ? 1.0f : 0.0f))", "(v0 * ((v0 >= 1.0f) ? 1.0f : 0.0f))");
        row("negation and negative constants", "-x * -2", "((-v0) * (-2.0f))", "((-v0) * (-2.0f))");
        row("second input", "x + residual", "(v0 + v1)", "(v0 + v1)");
    }

    void rendersForBothTargets()
    {
        QFETCH(QString, text);
        QFETCH(QString, cuda);
        QFETCH(QString, cpp);
        const auto e = Expression::parse(text.toStdString(), kVars);
        const std::map<std::string, std::string> values = {{"x", "v0"}, {"residual", "v1"}};
        QCOMPARE(QString::fromStdString(e.render(Expression::Target::Cuda, values)), cuda);
        QCOMPARE(QString::fromStdString(e.render(Expression::Target::Cpp, values)), cpp);
    }

    // Rounded as ATen's operators each round to the storage type: every arithmetic result and function
    // value, not negation (exact) nor what where, max and min pick.
    void rendersEachOperationRounded_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("cuda");
        auto row = [](const char *text, const char *cuda) { QTest::newRow(text) << QString::fromLatin1(text) << QString::fromLatin1(cuda); };
        row("pow(x - residual, 2)", "r((r((v0 - v1)) * r((v0 - v1))))");
        row("log1p(exp(-x * residual))", "r(log1pf(r(expf(r(((-v0) * v1))))))");
        row("where(abs(x) < 1, 0.5 * x, max(x, 0))", "((r(fabsf(v0)) < 1.0f) ? r((0.5f * v0)) : kf_max(v0, 0.0f))");
        row("x", "v0");
    }

    void rendersEachOperationRounded()
    {
        QFETCH(QString, text);
        QFETCH(QString, cuda);
        const auto e = Expression::parse(text.toStdString(), kVars);
        QCOMPARE(QString::fromStdString(e.render(Expression::Target::Cuda, {{"x", "v0"}, {"residual", "v1"}}, "r")), cuda);
    }

    void badTextIsRefusedWithItsColumn_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("message");
        auto row = [](const char *text, const char *message) { QTest::newRow(text) << QString::fromLatin1(text) << QString::fromLatin1(message); };
        row("", "at column 1 of '': expected a number, a name or '(', found the end");
        row("x * (1 + ", "at column 10 of 'x * (1 + ': expected a number, a name or '(', found the end");
        row("(x + 1", "at column 7 of '(x + 1': expected ')', found the end");
        row("x $ 2", "at column 3 of 'x $ 2': expected an operator or the end, found '$'");
        row("x 2", "at column 3 of 'x 2': expected an operator or the end, found '2'");
        row("y + 1", "at column 1 of 'y + 1': unknown name 'y' (the names are residual, x and pi)");
        row("foo(x)", "at column 1 of 'foo(x)': unknown function 'foo'");
        row("exp(x, 1)", "at column 1 of 'exp(x, 1)': exp takes 1 argument, not 2");
        row("max(x)", "max takes 2 arguments, not 1");
        row("max(x 1)", "at column 7 of 'max(x 1)': expected ',' or ')' after an argument of max, found '1'");
        row("pow(x, x)", "pow's exponent must be a constant");
        row("exp + 1", "at column 5 of 'exp + 1': expected '(' after the function exp, found '+'");
        row("1e999 * x", "the number 1e999 is outside float's range");
        row("x < 1 < 2", "at column 7 of 'x < 1 < 2': expected an operator or the end, found '<'");
    }

    void badTextIsRefusedWithItsColumn()
    {
        QFETCH(QString, text);
        QFETCH(QString, message);
        try {
            Expression::parse(text.toStdString(), kVars);
            QFAIL("accepted");
        } catch (const Error &e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(message), e.what());
        }
    }

    void constantsAndSubstitution()
    {
        const auto e = Expression::parse("where(x > 0, x, x * negative_slope)", {"x"}, {{"negative_slope", 0.2}});
        QCOMPARE(e.text(), std::string("where(x > 0, x, x * 0.2)"));
        QCOMPARE(e.variables(), std::vector<std::string>{"x"});
        const auto s = e.substitute({{"x", Expression::parse("x0 + x1", {"x0", "x1"})}});
        QCOMPARE(s.text(), std::string("where(x0 + x1 > 0, x0 + x1, (x0 + x1) * 0.2)"));
        QCOMPARE(s.variables(), (std::vector<std::string>{"x0", "x1"}));
        QCOMPARE(s.evaluate({{"x0", -3}, {"x1", 1}}), -0.4);
        QVERIFY_THROWS_EXCEPTION(Error, Expression::number(INFINITY));
        QVERIFY_THROWS_EXCEPTION(Error, e.render(Expression::Target::Cuda, {}));
    }

    // Each activation's expression at its ATen defaults against known values of the function.
    void activationTable_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<double>("x");
        QTest::addColumn<double>("value");
        auto row = [](const char *family, double x, double value) {
            QTest::newRow((std::string(family) + " " + std::to_string(x)).c_str()) << QString::fromLatin1(family) << x << value;
        };
        row("relu", -1, 0);
        row("relu", 2, 2);
        row("gelu", 1, 0.8413447460685429);
        row("gelu_tanh", 1, 0.8411919906082768);
        row("silu", 1, 0.7310585786300049);
        row("sigmoid", 0, 0.5);
        row("tanh", 1, 0.7615941559557649);
        row("leaky_relu", -2, -0.02);
        row("elu", -1, -0.6321205588285577);
        row("selu", -1, -1.1113307378125625);
        row("selu", 2, 2.101401974710961);
        row("celu", -1, -0.6321205588285577);
        row("hardtanh", 2, 1);
        row("hardtanh", -0.5, -0.5);
        row("relu6", 7, 6);
        row("hardsigmoid", 1, 4.0 / 6);
        row("hardswish", 1, 4.0 / 6);
        row("softplus", 1, 1.3132616875182228);
        row("softplus", 30, 30); // above the threshold: x
        row("mish", 1, 0.8650983882673103);
    }

    void activationTable()
    {
        QFETCH(QString, family);
        QFETCH(double, x);
        QFETCH(double, value);
        const auto *op = findPointwiseOp(family.toStdString());
        QVERIFY(op);
        const double got = pointwiseExpression(*op).evaluate({{"x", x}});
        QVERIFY2(std::fabs(got - value) <= 1e-12, std::to_string(got).c_str());
    }

    void everyTableEntryMakesACard()
    {
        for (const auto &op : pointwiseOps()) {
            const auto card = makeCard(op.family, {{"rows", 8}, {"cols", 64}}, DType::BF16);
            QCOMPARE(card.family, op.family);
            QCOMPARE(card.atenOp, op.atenOp);
            QCOMPARE(card.inputs.size(), op.inputs.size());
            QVERIFY2(!card.expression.empty(), op.family.c_str());
            QCOMPARE(card.referenceArgs.size(), op.inputs.size() + op.scalars.size() + (op.strArg.empty() ? 0 : 1));
            const auto back = J(card).get<OperatorCard>();
            QCOMPARE(back.expression, card.expression);
        }
        // The scalar arguments reach both the reference and the expression.
        const auto elu = pointwiseFamilyCard(*findPointwiseOp("elu"), {{"rows", 2}, {"cols", 3}}, DType::F32, {0.5, 2.0});
        QCOMPARE(elu.referenceArgs, J::parse(R"([{"input":0},{"double":0.5},{"double":2.0},{"double":1.0}])"));
        QCOMPARE(elu.expression, std::string("where(x <= 0, expm1(x * 1) * 0.5 * 2, x * 2)"));
    }

    void cardWithABadExpressionIsRefused()
    {
        auto j = J(makeCard("silu", {{"rows", 2}, {"cols", 3}}));
        j["expression"] = "x * sigmoid(y)";
        try {
            j.get<OperatorCard>();
            QFAIL("accepted");
        } catch (const Error &e) {
            QVERIFY2(std::string(e.what()).find("silu.lastdim.float32': expression at column 13") != std::string::npos, e.what());
            QVERIFY2(std::string(e.what()).find("unknown name 'y'") != std::string::npos, e.what());
        }
    }

    void atenCallsAsExpressions_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("args"); // JSON: a string is a tensor named so, else a scalar
        QTest::addColumn<QString>("expected");
        auto row = [](const char *op, const char *args, const char *expected) {
            QTest::newRow((std::string(op) + " " + args).c_str()) << QString::fromLatin1(op) << QString::fromLatin1(args) << QString::fromLatin1(expected);
        };
        row("aten::add.Tensor", R"(["x", "y", 1])", "x + y");
        row("aten::add.Tensor", R"(["x", "y", 2])", "x + y * 2");
        row("aten::add.Scalar", R"(["x", 3, 1])", "x + 3");
        row("aten::sub.Tensor", R"(["x", "y", 1])", "x - y");
        row("aten::rsub.Scalar", R"(["x", 1, 1])", "1 - x");
        row("aten::mul.Tensor", R"(["x", 0.5])", "x * 0.5");
        row("aten::div.Tensor", R"(["x", "y"])", "x / y");
        row("aten::div.Tensor_mode", R"(["x", "y", null])", "x / y");
        row("aten::neg", R"(["x"])", "-x");
        row("aten::reciprocal", R"(["x"])", "1 / x");
        row("aten::square", R"(["x"])", "pow(x, 2)");
        row("aten::pow.Tensor_Scalar", R"(["x", 3.0])", "pow(x, 3)");
        row("aten::clamp", R"(["x", -1.0, null])", "max(x, -1)");
        row("aten::clamp", R"(["x", null, 6])", "min(x, 6)");
        row("aten::clamp_min", R"(["x", 0])", "max(x, 0)");
        row("aten::maximum", R"(["x", "y"])", "max(x, y)");
        row("aten::sigmoid", R"(["x"])", "sigmoid(x)");
        row("aten::exp", R"(["x"])", "exp(x)");
        row("aten::leaky_relu", R"(["x", 0.2])", "where(x > 0, x, x * 0.2)");
        row("aten::gelu", R"(["x", "@tanh"])", "0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * pow(x, 3))))");
        row("aten::softplus", R"(["x", 2, 10])", "where(x * 2 > 10, x, log1p(exp(x * 2)) / 2)");
        row("aten::hardtanh", R"(["x", 0.0, 6.0])", "min(max(x, 0), 6)");
    }

    void atenCallsAsExpressions()
    {
        QFETCH(QString, op);
        QFETCH(QString, args);
        QFETCH(QString, expected);
        std::vector<PointwiseArg> a;
        for (const auto &v : J::parse(args.toStdString())) {
            // "@text" is a string argument; other strings name tensors.
            if (v.is_string() && v.get<std::string>().rfind('@', 0) == 0)
                a.push_back(scalarArg(v.get<std::string>().substr(1)));
            else if (v.is_string())
                a.push_back(tensorArg(v.get<std::string>()));
            else
                a.push_back(scalarArg(v));
        }
        std::string why;
        const auto e = pointwiseOfCall(op.toStdString(), a, &why);
        QVERIFY2(e, why.c_str());
        QCOMPARE(QString::fromStdString(e->text()), expected);
    }

    void notPointwiseCallsSayWhy()
    {
        std::string why;
        QVERIFY(!pointwiseOfCall("aten::sum.dim_IntList", {tensorArg("x"), scalarArg({-1}), scalarArg(false), scalarArg(nullptr)}, &why));
        QVERIFY2(why.find("aten::sum.dim_IntList is not a pointwise operator") != std::string::npos, why.c_str());
        QVERIFY(!pointwiseOfCall("aten::add.Tensor", {tensorArg("x"), tensorArg("y"), tensorArg("z")}, &why));
        QVERIFY2(why.find("alpha that is not a number") != std::string::npos, why.c_str());
    }

    // MinGPT's tanh GELU chain, traced as eight ATen calls, is one expression equal to GELU's tanh form.
    void tracedChainFusesToOneExpression()
    {
        std::string why;
        const auto e = fusePointwiseGraph(minGptGelu(), {"x0"}, &why);
        QVERIFY2(e, why.c_str());
        QCOMPARE(e->text(), std::string("x0 * 0.5 * (tanh((x0 + pow(x0, 3) * 0.044715) * 0.7978845608028654) + 1)"));
        const auto gelu = pointwiseExpression(*findPointwiseOp("gelu_tanh"));
        for (double x : {-3.0, -0.5, 0.0, 0.7, 2.5})
            QVERIFY(std::fabs(e->evaluate({{"x0", x}}) - gelu.evaluate({{"x", x}})) < 1e-15);
    }

    void unfusableGraphsSayWhy()
    {
        auto g = minGptGelu();
        g.nodes[5].op = "aten::cumsum";
        g.nodes[5].inputs = {node(4), constant(-1), constant(nullptr)};
        std::string why;
        QVERIFY(!fusePointwiseGraph(g, {"x0"}, &why));
        QVERIFY2(why.find("node 5: aten::cumsum is not a pointwise operator") != std::string::npos, why.c_str());
        // A node the output does not depend on need not be pointwise.
        g = minGptGelu();
        g.nodes.push_back({"prim::ListConstruct", {}});
        QVERIFY2(fusePointwiseGraph(g, {"x0"}, &why), why.c_str());
        g.outputs = {in(0)};
        QVERIFY(!fusePointwiseGraph(g, {"x0"}, &why));
        QVERIFY2(why.find("returns an input") != std::string::npos, why.c_str());
        g.unreadable = "a submodule call";
        QVERIFY(!fusePointwiseGraph(g, {"x0"}, &why));
        QCOMPARE(why, std::string("a submodule call"));
    }

    // A problem whose forward fuses gets a pointwise card over x0, x1, ... with the whole forward as its
    // reference; one with a broadcast input does not.
    void problemGetsAFusedCard()
    {
        ProblemSignature sig;
        sig.name = "swish";
        sig.modulePath = "/abs/swish.pt";
        TensorMeta t;
        t.shape = {8, 256};
        t.dtype = "float32";
        sig.inputs = {t};
        sig.outputs = {t};
        sig.graph.nodes = {{"aten::sigmoid", {in(0)}}, {"aten::mul.Tensor", {in(0), node(0)}}};
        sig.graph.outputs = {node(1)};
        std::string why;
        const auto card = pointwiseProblemCard(sig, &why);
        QVERIFY2(card, why.c_str());
        QCOMPARE(card->family, std::string(kPointwiseFamily));
        QCOMPARE(card->key, std::string("problem.swish.pointwise"));
        QCOMPARE(card->expression, std::string("x0 * sigmoid(x0)"));
        QCOMPARE(card->atenOp, std::string(kModuleReference));
        QCOMPARE(card->shape.at("rows"), int64_t(8));
        QCOMPARE(card->inputs.at(0).name, std::string("x0"));
        bool listed = false;
        for (const auto &c : familyCardsForProblem(sig))
            listed |= c.key == card->key;
        QVERIFY(listed);
        TensorMeta row;
        row.shape = {256};
        row.dtype = "float32";
        sig.inputs.push_back(row);
        QVERIFY(!pointwiseProblemCard(sig, &why));
        QVERIFY2(why.find("no broadcast") != std::string::npos, why.c_str());
    }

    // A captured aten::leaky_relu(x, 0.2) is the leaky_relu family's card with 0.2 in its expression and reference.
    void capturedActivationCarriesItsScalars()
    {
        CapturedCall c;
        c.op = "aten::leaky_relu";
        c.schema = "aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor";
        CallArg x;
        x.kind = "tensor";
        x.name = "self";
        TensorMeta m;
        m.shape = {4, 16, 32};
        m.strides = {512, 32, 1};
        m.dtype = "float16";
        x.tensors = {m};
        CallArg slope;
        slope.kind = "double";
        slope.name = "negative_slope";
        slope.value = 0.2;
        c.args = {x, slope};
        const auto made = cardForCall(c, 1, 3);
        QVERIFY2(made.card, made.why.c_str());
        QCOMPARE(made.card->family, std::string("leaky_relu"));
        QCOMPARE(made.card->expression, std::string("where(x > 0, x, x * 0.2)"));
        QCOMPARE(made.card->referenceArgs, J::parse(R"([{"input":0},{"double":0.2}])"));
        QCOMPARE(made.card->shape.at("rows"), int64_t(64));
        QCOMPARE(made.card->inputs.at(0).dtype, DType::F16);

        // Integer scalars stay integers in the reference, as the model passes them (the pack's guard
        // compares kinds), and are numbers in the expression.
        c.op = "aten::softplus";
        c.schema = "aten::softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor";
        CallArg beta, threshold;
        beta.kind = threshold.kind = "int";
        beta.value = 1;
        threshold.value = 20;
        c.args = {x, beta, threshold};
        const auto softplus = cardForCall(c, 1, 4);
        QVERIFY2(softplus.card, softplus.why.c_str());
        QCOMPARE(softplus.card->family, std::string("softplus"));
        QCOMPARE(softplus.card->referenceArgs, J::parse(R"([{"input":0},{"int":1},{"int":20}])"));
        QCOMPARE(softplus.card->expression, std::string("where(x * 1 > 20, x, log1p(exp(x * 1)) / 1)"));
    }
};

QTEST_GUILESS_MAIN(TestExpression)
#include "tst_expression.moc"
