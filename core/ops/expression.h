#pragma once
// A small expression language for pointwise operators: what a pointwise card computes per element,
// rendered into the pointwise templates' kernels (CUDA C and C++) and evaluated in double for tests.
//
//   expression := comparison
//   comparison := sum [('<' | '<=' | '>' | '>=' | '==' | '!=') sum]
//   sum        := product {('+' | '-') product}
//   product    := unary {('*' | '/') unary}
//   unary      := '-' unary | primary
//   primary    := number | name | name '(' expression {',' expression} ')' | '(' expression ')'
//
// Names are the caller's variables (a card's input names: x, residual, x0, ...), its named constants
// (an activation's scalar arguments: negative_slope, alpha, ...) and `pi`. Functions: exp, log, log1p,
// expm1, tanh, sigmoid, erf, sqrt, rsqrt, abs (one argument), max, min (two, NaN propagating as
// torch.maximum), pow(a, k) (k a constant), where(condition, a, b). A comparison is 1 or 0 outside
// where's condition. Values are float in the kernels: inputs are converted to float, the result back.
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kforge {

class Expression {
public:
    enum class Kind { Number, Variable, Negate, Add, Sub, Mul, Div, Less, LessEq, Greater, GreaterEq, Equal, NotEqual, Call };
    struct Node {
        Kind kind = Kind::Number;
        double number = 0;          // Number
        std::string name;           // Variable, Call (the function)
        std::vector<std::shared_ptr<const Node>> args;
    };
    enum class Target { Cuda, Cpp };

    // Throws Error naming the column (1-based) and what was expected there, e.g. "at column 9 of
    // 'x * (1 + ': expected a number, a name or '(', found the end".
    static Expression parse(const std::string &text, const std::vector<std::string> &variables,
                            const std::map<std::string, double> &constants = {});
    static Expression number(double v);
    static Expression variable(const std::string &name);
    // op is one of + - * / < <= > >= == != ; fn a function name with its arguments (checked as parse does).
    static Expression binary(const std::string &op, const Expression &a, const Expression &b);
    static Expression call(const std::string &fn, const std::vector<Expression> &args);
    static Expression negate(const Expression &a);

    // Canonical text, parseable again to the same expression (numbers to 17 significant digits).
    std::string text() const;
    // A C expression over float values; each variable becomes values.at(name) (e.g. "v[0]"). CUDA uses
    // the float intrinsics' names (expf, rsqrtf), C++ std:: overloads; both call kf_max and kf_min,
    // which the templates define. With roundEach, every operation's result is passed through that
    // function (the kernel's rounding to its storage type), as ATen computes a chain of operators, each
    // writing a tensor of that type: an intermediate that overflows it is Inf in both.
    std::string render(Target target, const std::map<std::string, std::string> &values, const std::string &roundEach = {}) const;
    double evaluate(const std::map<std::string, double> &values) const;
    // Every variable the expression uses, sorted.
    std::vector<std::string> variables() const;
    // Each variable replaced by an expression (variables not in the map stay).
    Expression substitute(const std::map<std::string, Expression> &with) const;
    // Arithmetic operations per element, roughly (a function counts 4), for the roofline.
    int flops() const;

    const Node &root() const { return *m_root; }
    bool operator==(const Expression &o) const { return text() == o.text(); }

private:
    explicit Expression(std::shared_ptr<const Node> root) : m_root(std::move(root)) {}
    std::shared_ptr<const Node> m_root;
};

// The functions the language knows and their argument counts.
const std::map<std::string, int> &expressionFunctions();

} // namespace kforge
