#include "ops/expression.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numbers>
#include <set>

#include "util/error.h"

namespace kforge {

namespace {

using Node = Expression::Node;
using Kind = Expression::Kind;
using NodePtr = std::shared_ptr<const Node>;

const std::map<std::string, Kind> &binaryKinds()
{
    static const std::map<std::string, Kind> k = {{"+", Kind::Add},     {"-", Kind::Sub},        {"*", Kind::Mul},
                                                  {"/", Kind::Div},     {"<", Kind::Less},       {"<=", Kind::LessEq},
                                                  {">", Kind::Greater}, {">=", Kind::GreaterEq}, {"==", Kind::Equal},
                                                  {"!=", Kind::NotEqual}};
    return k;
}

const char *opText(Kind k)
{
    for (const auto &[text, kind] : binaryKinds())
        if (kind == k)
            return text.c_str();
    return "?";
}

bool isComparison(Kind k)
{
    return k == Kind::Less || k == Kind::LessEq || k == Kind::Greater || k == Kind::GreaterEq || k == Kind::Equal || k == Kind::NotEqual;
}

// Binding strength, for printing with the fewest parentheses.
int precedence(const Node &n)
{
    switch (n.kind) {
    case Kind::Add:
    case Kind::Sub: return 2;
    case Kind::Mul:
    case Kind::Div: return 3;
    case Kind::Negate: return 4;
    case Kind::Number: return n.number < 0 ? 4 : 5; // a negative number prints as a negation
    case Kind::Variable:
    case Kind::Call: return 5;
    default: return 1; // comparisons
    }
}

// The shortest decimal that reads back as the same double.
std::string shortest(double v)
{
    char buf[40];
    if (v == std::floor(v) && std::fabs(v) < 1e15) { // whole numbers in full: 10, not 1e+01
        std::snprintf(buf, sizeof buf, "%.0f", v);
        return buf;
    }
    for (int digits = 1; digits <= 17; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (std::strtod(buf, nullptr) == v)
            break;
    }
    return buf;
}

std::string floatLiteral(double v)
{
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.9g", std::fabs(v));
    std::string s = buf;
    if (s.find_first_of(".e") == std::string::npos)
        s += ".0";
    s += "f";
    return v < 0 ? "(-" + s + ")" : s;
}

NodePtr make(Kind k, std::vector<NodePtr> args = {}, double number = 0, std::string name = {})
{
    auto n = std::make_shared<Node>();
    n->kind = k;
    n->args = std::move(args);
    n->number = number;
    n->name = std::move(name);
    return n;
}

double eval(const Node &n, const std::map<std::string, double> &values)
{
    auto a = [&](size_t i) { return eval(*n.args.at(i), values); };
    switch (n.kind) {
    case Kind::Number: return n.number;
    case Kind::Variable: {
        const auto it = values.find(n.name);
        if (it == values.end())
            throw Error("the expression's variable '" + n.name + "' has no value");
        return it->second;
    }
    case Kind::Negate: return -a(0);
    case Kind::Add: return a(0) + a(1);
    case Kind::Sub: return a(0) - a(1);
    case Kind::Mul: return a(0) * a(1);
    case Kind::Div: return a(0) / a(1);
    case Kind::Less: return a(0) < a(1) ? 1 : 0;
    case Kind::LessEq: return a(0) <= a(1) ? 1 : 0;
    case Kind::Greater: return a(0) > a(1) ? 1 : 0;
    case Kind::GreaterEq: return a(0) >= a(1) ? 1 : 0;
    case Kind::Equal: return a(0) == a(1) ? 1 : 0;
    case Kind::NotEqual: return a(0) != a(1) ? 1 : 0;
    case Kind::Call: break;
    }
    const auto &f = n.name;
    if (f == "where")
        return a(0) != 0 ? a(1) : a(2);
    if (f == "max" || f == "min") {
        const double p = a(0), q = a(1);
        if (std::isnan(p) || std::isnan(q))
            return std::nan("");
        return f == "max" ? std::max(p, q) : std::min(p, q);
    }
    if (f == "pow")
        return std::pow(a(0), a(1));
    const double v = a(0);
    if (f == "exp") return std::exp(v);
    if (f == "log") return std::log(v);
    if (f == "log1p") return std::log1p(v);
    if (f == "expm1") return std::expm1(v);
    if (f == "tanh") return std::tanh(v);
    if (f == "sigmoid") return 1 / (1 + std::exp(-v));
    if (f == "erf") return std::erf(v);
    if (f == "sqrt") return std::sqrt(v);
    if (f == "rsqrt") return 1 / std::sqrt(v);
    if (f == "abs") return std::fabs(v);
    throw Error("the expression calls an unknown function '" + f + "'");
}

bool usesVariables(const Node &n)
{
    if (n.kind == Kind::Variable)
        return true;
    return std::any_of(n.args.begin(), n.args.end(), [](const NodePtr &a) { return usesVariables(*a); });
}

// Checks a call's function and arguments; pow's exponent is folded to a number.
NodePtr checkedCall(const std::string &fn, std::vector<NodePtr> args, const std::string &where)
{
    const auto it = expressionFunctions().find(fn);
    if (it == expressionFunctions().end()) {
        std::string known;
        for (const auto &[name, n] : expressionFunctions())
            known += (known.empty() ? "" : ", ") + name;
        throw Error(where + "unknown function '" + fn + "' (the functions are " + known + ")");
    }
    if (int(args.size()) != it->second)
        throw Error(where + fn + " takes " + std::to_string(it->second) + " argument" + (it->second == 1 ? "" : "s") + ", not "
                    + std::to_string(args.size()));
    if (fn == "pow") {
        if (usesVariables(*args[1]))
            throw Error(where + "pow's exponent must be a constant");
        args[1] = make(Kind::Number, {}, eval(*args[1], {}));
    }
    return make(Kind::Call, std::move(args), 0, fn);
}

class Parser {
public:
    Parser(const std::string &text, const std::vector<std::string> &variables, const std::map<std::string, double> &constants)
        : m_text(text), m_variables(variables.begin(), variables.end()), m_constants(constants)
    {
    }

    NodePtr parse()
    {
        auto n = comparison();
        skipSpace();
        if (m_pos < m_text.size())
            fail("an operator or the end");
        return n;
    }

private:
    const std::string &m_text;
    std::set<std::string> m_variables;
    std::map<std::string, double> m_constants;
    size_t m_pos = 0;

    [[noreturn]] void fail(const std::string &expected, size_t at = std::string::npos)
    {
        if (at == std::string::npos)
            at = m_pos;
        std::string found = "the end";
        if (at < m_text.size()) {
            size_t end = at + 1;
            if (std::isalnum(static_cast<unsigned char>(m_text[at])) || m_text[at] == '_' || m_text[at] == '.')
                while (end < m_text.size() && (std::isalnum(static_cast<unsigned char>(m_text[end])) || m_text[end] == '_' || m_text[end] == '.'))
                    ++end;
            found = "'" + m_text.substr(at, end - at) + "'";
        }
        throw Error(prefix(at) + "expected " + expected + ", found " + found);
    }

    std::string prefix(size_t at) const { return "at column " + std::to_string(at + 1) + " of '" + m_text + "': "; }

    void skipSpace()
    {
        while (m_pos < m_text.size() && std::isspace(static_cast<unsigned char>(m_text[m_pos])))
            ++m_pos;
    }

    bool accept(const std::string &tok)
    {
        skipSpace();
        if (m_text.compare(m_pos, tok.size(), tok) != 0)
            return false;
        m_pos += tok.size();
        return true;
    }

    NodePtr comparison()
    {
        auto left = sum();
        for (const char *op : {"<=", ">=", "==", "!=", "<", ">"})
            if (accept(op))
                return make(binaryKinds().at(op), {left, sum()});
        return left;
    }

    NodePtr sum()
    {
        auto left = product();
        while (true) {
            if (accept("+"))
                left = make(Kind::Add, {left, product()});
            else if (accept("-"))
                left = make(Kind::Sub, {left, product()});
            else
                return left;
        }
    }

    NodePtr product()
    {
        auto left = unary();
        while (true) {
            if (accept("*"))
                left = make(Kind::Mul, {left, unary()});
            else if (accept("/"))
                left = make(Kind::Div, {left, unary()});
            else
                return left;
        }
    }

    NodePtr unary()
    {
        if (accept("-"))
            return make(Kind::Negate, {unary()});
        return primary();
    }

    NodePtr primary()
    {
        skipSpace();
        const size_t start = m_pos;
        if (m_pos >= m_text.size())
            fail("a number, a name or '('");
        const char c = m_text[m_pos];
        if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
            char *end = nullptr;
            const double v = std::strtod(m_text.c_str() + m_pos, &end);
            if (end == m_text.c_str() + m_pos)
                fail("a number");
            m_pos = size_t(end - m_text.c_str());
            if (!std::isfinite(v) || std::fabs(v) > 3.4e38)
                throw Error(prefix(start) + "the number " + m_text.substr(start, m_pos - start) + " is outside float's range");
            return make(Kind::Number, {}, v);
        }
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            while (m_pos < m_text.size() && (std::isalnum(static_cast<unsigned char>(m_text[m_pos])) || m_text[m_pos] == '_'))
                ++m_pos;
            const std::string name = m_text.substr(start, m_pos - start);
            if (accept("(")) {
                std::vector<NodePtr> args;
                if (!accept(")")) {
                    do
                        args.push_back(comparison());
                    while (accept(","));
                    if (!accept(")"))
                        fail("',' or ')' after an argument of " + name);
                }
                return checkedCall(name, std::move(args), prefix(start));
            }
            if (m_variables.count(name))
                return make(Kind::Variable, {}, 0, name);
            if (const auto it = m_constants.find(name); it != m_constants.end())
                return make(Kind::Number, {}, it->second);
            if (name == "pi")
                return make(Kind::Number, {}, std::numbers::pi);
            if (expressionFunctions().count(name))
                fail("'(' after the function " + name);
            std::string known;
            for (const auto &v : m_variables)
                known += (known.empty() ? "" : ", ") + v;
            for (const auto &[k, v] : m_constants)
                known += (known.empty() ? "" : ", ") + k;
            throw Error(prefix(start) + "unknown name '" + name + "' (the names are " + (known.empty() ? "none" : known) + " and pi)");
        }
        if (accept("(")) {
            auto n = comparison();
            if (!accept(")"))
                fail("')'");
            return n;
        }
        fail("a number, a name or '('");
    }
};

std::string textOf(const Node &n)
{
    auto side = [&](const Node &child, bool right) {
        const int p = precedence(n), q = precedence(child);
        // Left-associative: a right operand of the same strength keeps its parentheses (a - (b - c)),
        // and comparisons do not chain.
        const bool paren = q < p || (right && q == p) || (p == 1 && q == 1);
        return paren ? "(" + textOf(child) + ")" : textOf(child);
    };
    switch (n.kind) {
    case Kind::Number: return shortest(n.number);
    case Kind::Variable: return n.name;
    case Kind::Negate: return "-" + (precedence(*n.args[0]) < 4 ? "(" + textOf(*n.args[0]) + ")" : textOf(*n.args[0]));
    case Kind::Call: {
        std::string s = n.name + "(";
        for (size_t i = 0; i < n.args.size(); ++i)
            s += (i ? ", " : "") + textOf(*n.args[i]);
        return s + ")";
    }
    default: return side(*n.args[0], false) + " " + opText(n.kind) + " " + side(*n.args[1], true);
    }
}

class Renderer {
public:
    Renderer(Expression::Target t, const std::map<std::string, std::string> &values, const std::string &roundEach)
        : m_cuda(t == Expression::Target::Cuda), m_values(values), m_round(roundEach)
    {
    }

    std::string value(const Node &n) const
    {
        if (isComparison(n.kind))
            return "(" + condition(n) + " ? 1.0f : 0.0f)";
        switch (n.kind) {
        case Kind::Number: return floatLiteral(n.number);
        case Kind::Variable: {
            const auto it = m_values.find(n.name);
            if (it == m_values.end())
                throw Error("the expression's variable '" + n.name + "' is not among the kernel's values");
            return it->second;
        }
        // Negation is exact, and where, max and min pick a value already rounded.
        case Kind::Negate: return "(-" + value(*n.args[0]) + ")";
        case Kind::Call:
            return n.name == "where" || n.name == "max" || n.name == "min" ? call(n) : rounded(call(n));
        default: return rounded("(" + value(*n.args[0]) + " " + opText(n.kind) + " " + value(*n.args[1]) + ")");
        }
    }

private:
    bool m_cuda;
    const std::map<std::string, std::string> &m_values;
    std::string m_round;

    std::string rounded(const std::string &v) const { return m_round.empty() ? v : m_round + "(" + v + ")"; }

    std::string condition(const Node &n) const
    {
        if (isComparison(n.kind))
            return "(" + value(*n.args[0]) + " " + opText(n.kind) + " " + value(*n.args[1]) + ")";
        return "(" + value(n) + " != 0.0f)";
    }

    std::string fn(const char *cuda, const char *cpp, const Node &arg) const { return std::string(m_cuda ? cuda : cpp) + "(" + value(arg) + ")"; }

    std::string call(const Node &n) const
    {
        const auto &f = n.name;
        const auto &a = *n.args[0];
        if (f == "where")
            return "(" + condition(a) + " ? " + value(*n.args[1]) + " : " + value(*n.args[2]) + ")";
        if (f == "max" || f == "min")
            return "kf_" + f + "(" + value(a) + ", " + value(*n.args[1]) + ")";
        if (f == "pow") {
            const double k = n.args[1]->number;
            const auto v = value(a);
            if (k == 1) return v;
            if (k == 2) return "(" + v + " * " + v + ")";
            if (k == 3) return "(" + v + " * " + v + " * " + v + ")";
            if (k == 0.5) return fn("sqrtf", "std::sqrt", a);
            if (k == -1) return "(1.0f / " + v + ")";
            return std::string(m_cuda ? "powf(" : "std::pow(") + v + ", " + floatLiteral(k) + ")";
        }
        if (f == "exp") return fn("expf", "std::exp", a);
        if (f == "log") return fn("logf", "std::log", a);
        if (f == "log1p") return fn("log1pf", "std::log1p", a);
        if (f == "expm1") return fn("expm1f", "std::expm1", a);
        if (f == "tanh") return fn("tanhf", "std::tanh", a);
        if (f == "erf") return fn("erff", "std::erf", a);
        if (f == "sqrt") return fn("sqrtf", "std::sqrt", a);
        if (f == "abs") return fn("fabsf", "std::fabs", a);
        if (f == "rsqrt") return m_cuda ? fn("rsqrtf", "", a) : "(1.0f / " + fn("", "std::sqrt", a) + ")";
        if (f == "sigmoid") return "(1.0f / (1.0f + " + (m_cuda ? std::string("expf(-") : std::string("std::exp(-")) + value(a) + ")))";
        throw Error("the expression calls an unknown function '" + f + "'");
    }
};

void collect(const Node &n, std::set<std::string> &out)
{
    if (n.kind == Kind::Variable)
        out.insert(n.name);
    for (const auto &a : n.args)
        collect(*a, out);
}

} // namespace

const std::map<std::string, int> &expressionFunctions()
{
    static const std::map<std::string, int> f = {{"exp", 1},   {"log", 1},  {"log1p", 1}, {"expm1", 1}, {"tanh", 1}, {"sigmoid", 1},
                                                 {"erf", 1},   {"sqrt", 1}, {"rsqrt", 1}, {"abs", 1},   {"max", 2},  {"min", 2},
                                                 {"pow", 2},   {"where", 3}};
    return f;
}

Expression Expression::parse(const std::string &text, const std::vector<std::string> &variables, const std::map<std::string, double> &constants)
{
    return Expression(Parser(text, variables, constants).parse());
}

Expression Expression::number(double v)
{
    if (!std::isfinite(v))
        throw Error("an expression's constant must be finite, not " + shortest(v));
    return Expression(make(Kind::Number, {}, v));
}

Expression Expression::variable(const std::string &name)
{
    return Expression(make(Kind::Variable, {}, 0, name));
}

Expression Expression::binary(const std::string &op, const Expression &a, const Expression &b)
{
    const auto it = binaryKinds().find(op);
    if (it == binaryKinds().end())
        throw Error("'" + op + "' is not an operator of the expression language");
    return Expression(make(it->second, {a.m_root, b.m_root}));
}

Expression Expression::call(const std::string &fn, const std::vector<Expression> &args)
{
    std::vector<NodePtr> nodes;
    for (const auto &a : args)
        nodes.push_back(a.m_root);
    return Expression(checkedCall(fn, std::move(nodes), ""));
}

Expression Expression::negate(const Expression &a)
{
    return Expression(make(Kind::Negate, {a.m_root}));
}

std::string Expression::text() const
{
    return textOf(*m_root);
}

std::string Expression::render(Target target, const std::map<std::string, std::string> &values, const std::string &roundEach) const
{
    return Renderer(target, values, roundEach).value(*m_root);
}

double Expression::evaluate(const std::map<std::string, double> &values) const
{
    return eval(*m_root, values);
}

std::vector<std::string> Expression::variables() const
{
    std::set<std::string> s;
    collect(*m_root, s);
    return {s.begin(), s.end()};
}

Expression Expression::substitute(const std::map<std::string, Expression> &with) const
{
    std::function<NodePtr(const NodePtr &)> walk = [&](const NodePtr &n) -> NodePtr {
        if (n->kind == Kind::Variable) {
            const auto it = with.find(n->name);
            return it == with.end() ? n : it->second.m_root;
        }
        if (n->args.empty())
            return n;
        std::vector<NodePtr> args;
        for (const auto &a : n->args)
            args.push_back(walk(a));
        return make(n->kind, std::move(args), n->number, n->name);
    };
    return Expression(walk(m_root));
}

int Expression::flops() const
{
    std::function<int(const Node &)> count = [&](const Node &n) {
        int c = n.kind == Kind::Call ? (n.name == "max" || n.name == "min" || n.name == "where" ? 1 : 4)
                : (n.kind == Kind::Number || n.kind == Kind::Variable) ? 0
                                                                        : 1;
        for (const auto &a : n.args)
            c += count(*a);
        return c;
    };
    return std::max(1, count(*m_root));
}

} // namespace kforge
