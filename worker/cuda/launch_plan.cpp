#include "worker/cuda/launch_plan.h"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <set>

#include "util/error.h"

namespace kforge::worker {

namespace {

// Recursive descent over 64-bit integers. Overflow and division by zero are errors, not wraps: a plan
// whose grid silently wrapped would launch something nobody wrote.
class Parser {
public:
    Parser(const std::string &text, const ShapeBindings &symbols) : m_text(text), m_symbols(symbols) {}

    int64_t parse()
    {
        const int64_t v = sum();
        skipSpace();
        if (m_pos != m_text.size())
            fail("unexpected '" + m_text.substr(m_pos, 1) + "' at position " + std::to_string(m_pos));
        return v;
    }

private:
    [[noreturn]] void fail(const std::string &why) const { throw Error("expression '" + m_text + "': " + why); }

    void skipSpace()
    {
        while (m_pos < m_text.size() && std::isspace(static_cast<unsigned char>(m_text[m_pos])))
            ++m_pos;
    }

    bool eat(char c)
    {
        skipSpace();
        if (m_pos < m_text.size() && m_text[m_pos] == c) {
            ++m_pos;
            return true;
        }
        return false;
    }

    int64_t checked(bool overflow, int64_t v) const
    {
        if (overflow)
            fail("the value overflows 64 bits");
        return v;
    }

    // The builtins write their result through the pointer; read it only after they ran.
    int64_t add(int64_t a, int64_t b) const
    {
        int64_t r = 0;
        const bool o = __builtin_add_overflow(a, b, &r);
        return checked(o, r);
    }
    int64_t sub(int64_t a, int64_t b) const
    {
        int64_t r = 0;
        const bool o = __builtin_sub_overflow(a, b, &r);
        return checked(o, r);
    }
    int64_t mul(int64_t a, int64_t b) const
    {
        int64_t r = 0;
        const bool o = __builtin_mul_overflow(a, b, &r);
        return checked(o, r);
    }

    int64_t sum()
    {
        int64_t v = product();
        for (;;) {
            if (eat('+'))
                v = add(v, product());
            else if (eat('-'))
                v = sub(v, product());
            else
                return v;
        }
    }

    int64_t product()
    {
        int64_t v = unary();
        for (;;) {
            if (eat('*')) {
                v = mul(v, unary());
            } else if (eat('/')) {
                v = divide(v, unary(), "division");
            } else if (eat('%')) {
                const int64_t b = unary();
                if (b == 0)
                    fail("remainder by zero");
                v = v % b;
            } else
                return v;
        }
    }

    int64_t divide(int64_t a, int64_t b, const char *what) const
    {
        if (b == 0)
            fail(std::string(what) + " by zero");
        if (a == INT64_MIN && b == -1)
            fail("the value overflows 64 bits");
        return a / b;
    }

    int64_t unary()
    {
        if (eat('-')) {
            const int64_t v = unary();
            return checked(v == INT64_MIN, -v);
        }
        if (eat('+'))
            return unary();
        return primary();
    }

    int64_t primary()
    {
        skipSpace();
        if (m_pos >= m_text.size())
            fail(m_text.find_first_not_of(" \t") == std::string::npos ? "empty" : "ends where a value was expected");
        const char c = m_text[m_pos];
        if (c == '(') {
            ++m_pos;
            const int64_t v = sum();
            if (!eat(')'))
                fail("missing ')'");
            return v;
        }
        if (std::isdigit(static_cast<unsigned char>(c))) {
            const size_t start = m_pos;
            while (m_pos < m_text.size() && std::isdigit(static_cast<unsigned char>(m_text[m_pos])))
                ++m_pos;
            errno = 0;
            const auto digits = m_text.substr(start, m_pos - start);
            const long long v = std::strtoll(digits.c_str(), nullptr, 10);
            if (errno == ERANGE)
                fail("the number " + digits + " overflows 64 bits");
            return v;
        }
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            const size_t start = m_pos;
            while (m_pos < m_text.size() && (std::isalnum(static_cast<unsigned char>(m_text[m_pos])) || m_text[m_pos] == '_'))
                ++m_pos;
            const std::string name = m_text.substr(start, m_pos - start);
            if (eat('('))
                return call(name);
            auto it = m_symbols.find(name);
            if (it == m_symbols.end()) {
                std::string known;
                for (const auto &[k, v] : m_symbols)
                    known += (known.empty() ? "" : ", ") + k;
                fail("unknown symbol '" + name + "' (the card's shape symbols: " + (known.empty() ? "none" : known) + ")");
            }
            return it->second;
        }
        fail("unexpected '" + std::string(1, c) + "' at position " + std::to_string(m_pos));
    }

    int64_t call(const std::string &fn)
    {
        std::vector<int64_t> args;
        if (!eat(')')) {
            do
                args.push_back(sum());
            while (eat(','));
            if (!eat(')'))
                fail("missing ')' after the arguments of " + fn);
        }
        if (fn == "ceil_div") {
            if (args.size() != 2)
                fail("ceil_div takes 2 arguments, got " + std::to_string(args.size()));
            const int64_t a = args[0], b = args[1];
            if (b <= 0)
                fail("ceil_div by " + std::to_string(b) + " (the divisor must be positive)");
            if (a < 0)
                fail("ceil_div of a negative value " + std::to_string(a));
            return a / b + (a % b != 0);
        }
        if (fn == "min" || fn == "max") {
            if (args.size() < 2)
                fail(fn + " takes at least 2 arguments, got " + std::to_string(args.size()));
            int64_t v = args[0];
            for (int64_t a : args)
                v = fn == "min" ? std::min(v, a) : std::max(v, a);
            return v;
        }
        fail("unknown function '" + fn + "' (known: ceil_div, min, max)");
    }

    const std::string &m_text;
    const ShapeBindings &m_symbols;
    size_t m_pos = 0;
};

std::string exprOf(const nlohmann::json &j, const std::string &where)
{
    if (j.is_number_integer())
        return std::to_string(j.get<int64_t>());
    if (j.is_string())
        return j.get<std::string>();
    throw Error("launch plan: " + where + " must be an integer or an expression string, not " + j.dump());
}

bool isIdentifier(const std::string &s)
{
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
        return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
            return false;
    return true;
}

std::string kernelLabel(size_t i, const std::string &name)
{
    return "kernel " + std::to_string(i) + (name.empty() ? std::string() : " '" + name + "'");
}

std::array<std::string, 3> dims(const nlohmann::json &k, const char *field, const std::string &where)
{
    std::array<std::string, 3> out{"1", "1", "1"};
    if (!k.contains(field))
        throw Error("launch plan: " + where + " has no \"" + field + "\"");
    const auto &v = k[field];
    if (!v.is_array()) {
        out[0] = exprOf(v, where + " " + field); // a bare number or expression is the x extent
        return out;
    }
    if (v.empty() || v.size() > 3)
        throw Error("launch plan: " + where + " " + field + " must have 1 to 3 entries, has " + std::to_string(v.size()));
    for (size_t d = 0; d < v.size(); ++d)
        out[d] = exprOf(v[d], where + " " + field + "[" + std::to_string(d) + "]");
    return out;
}

int indexOf(const std::vector<TensorSpec> &ts, const std::string &name)
{
    for (size_t i = 0; i < ts.size(); ++i)
        if (ts[i].name == name)
            return int(i);
    return -1;
}

std::string namesOf(const std::vector<TensorSpec> &ts)
{
    std::string s;
    for (const auto &t : ts)
        s += (s.empty() ? "" : ", ") + t.name;
    return s.empty() ? "none" : s;
}

} // namespace

// Expressions see the card's shape symbols and the device's SM count (for persistent grids).
static ShapeBindings withDeviceSymbols(const ShapeBindings &shape, const DeviceLimits &limits)
{
    ShapeBindings s = shape;
    s.emplace("sm_count", limits.smCount);
    return s;
}

int64_t evalExpression(const std::string &expr, const ShapeBindings &symbols)
{
    return Parser(expr, symbols).parse();
}

LaunchPlan parseLaunchPlan(const nlohmann::json &j, const OperatorCard &card)
{
    if (!j.is_object())
        throw Error("launch plan: expected a JSON object with \"kernels\", got " + std::string(j.type_name()));
    if (!j.contains("kernels") || !j["kernels"].is_array() || j["kernels"].empty())
        throw Error("launch plan: \"kernels\" must be a non-empty array of kernel launches");
    LaunchPlan plan;
    std::set<std::string> wsNames;
    if (j.contains("workspace")) {
        if (!j["workspace"].is_array())
            throw Error("launch plan: \"workspace\" must be an array of {\"name\", \"bytes\"}");
        for (const auto &w : j["workspace"]) {
            if (!w.is_object() || !w.contains("name") || !w["name"].is_string() || !w.contains("bytes"))
                throw Error("launch plan: workspace entry " + w.dump() + " needs a \"name\" and \"bytes\"");
            PlanWorkspace ws{w["name"].get<std::string>(), exprOf(w["bytes"], "workspace '" + w["name"].get<std::string>() + "' bytes")};
            if (!wsNames.insert(ws.name).second)
                throw Error("launch plan: workspace '" + ws.name + "' is declared twice");
            plan.workspace.push_back(ws);
        }
    }
    // Symbols an argument may name: the card's shape symbols (held-out shapes bind the same ones).
    std::set<std::string> symbols;
    for (const auto &[k, v] : card.shape)
        symbols.insert(k);
    for (size_t i = 0; i < j["kernels"].size(); ++i) {
        const auto &k = j["kernels"][i];
        if (!k.is_object())
            throw Error("launch plan: " + kernelLabel(i, "") + " must be an object, not " + k.dump());
        PlanKernel pk;
        pk.name = k.value("name", "");
        const std::string where = kernelLabel(i, pk.name);
        if (!isIdentifier(pk.name))
            throw Error("launch plan: " + where + " needs a \"name\" that is a C identifier (the extern \"C\" __global__ function)");
        pk.grid = dims(k, "grid", where);
        pk.block = dims(k, "block", where);
        pk.sharedBytes = k.contains("shared_bytes") ? exprOf(k["shared_bytes"], where + " shared_bytes") : "0";
        if (k.contains("cluster")) {
            const auto &c = k["cluster"];
            if (!c.is_array() || c.empty() || c.size() > 3)
                throw Error("launch plan: " + where + " cluster must be an array of 1 to 3 positive integers, like [2,1,1]");
            for (size_t d = 0; d < c.size(); ++d) {
                if (!c[d].is_number_integer() || c[d].get<int64_t>() < 1 || c[d].get<int64_t>() > 64)
                    throw Error("launch plan: " + where + " cluster[" + std::to_string(d) + "] = " + c[d].dump()
                                + " must be a positive integer");
                pk.cluster[d] = c[d].get<int>();
            }
        }
        if (!k.contains("args") || !k["args"].is_array())
            throw Error("launch plan: " + where + " needs \"args\", an array like [\"in:x\", \"out:y\", \"sym:rows\"]");
        for (const auto &a : k["args"]) {
            if (!a.is_string())
                throw Error("launch plan: " + where + " argument " + a.dump() + " must be a string like \"in:x\"");
            const auto text = a.get<std::string>();
            const auto colon = text.find(':');
            if (colon == std::string::npos)
                throw Error("launch plan: " + where + " argument '" + text + "' has no kind (in:, out:, ws:, sym:, i64:, i32:, f32:)");
            PlanArg arg;
            arg.text = text;
            const auto kind = text.substr(0, colon);
            arg.name = text.substr(colon + 1);
            if (kind == "in" || kind == "out") {
                const auto &ts = kind == "in" ? card.inputs : card.outputs;
                arg.kind = kind == "in" ? PlanArg::Kind::Input : PlanArg::Kind::Output;
                arg.index = indexOf(ts, arg.name);
                if (arg.index < 0)
                    throw Error("launch plan: " + where + " argument '" + text + "' names no " + (kind == "in" ? "input" : "output")
                                + " of the card (its " + (kind == "in" ? "inputs" : "outputs") + ": " + namesOf(ts) + ")");
            } else if (kind == "ws") {
                arg.kind = PlanArg::Kind::Workspace;
                for (size_t w = 0; w < plan.workspace.size(); ++w)
                    if (plan.workspace[w].name == arg.name)
                        arg.index = int(w);
                if (arg.index < 0)
                    throw Error("launch plan: " + where + " argument '" + text + "' names no declared workspace");
            } else if (kind == "sym") {
                arg.kind = PlanArg::Kind::Symbol;
                if (!symbols.count(arg.name)) {
                    std::string known;
                    for (const auto &s : symbols)
                        known += (known.empty() ? "" : ", ") + s;
                    throw Error("launch plan: " + where + " argument '" + text + "' names no shape symbol of the card (its symbols: "
                                + (known.empty() ? "none" : known) + ")");
                }
            } else if (kind == "i64" || kind == "i32") {
                arg.kind = kind == "i64" ? PlanArg::Kind::I64 : PlanArg::Kind::I32;
                try {
                    evalExpression(arg.name, withDeviceSymbols(card.shape, DeviceLimits{})); // fail early on a malformed expression
                } catch (const Error &e) {
                    throw Error("launch plan: " + where + " argument '" + text + "': " + e.what());
                }
            } else if (kind == "f32") {
                arg.kind = PlanArg::Kind::F32;
                char *end = nullptr;
                std::strtof(arg.name.c_str(), &end);
                if (arg.name.empty() || *end)
                    throw Error("launch plan: " + where + " argument '" + text + "' is not a number");
            } else
                throw Error("launch plan: " + where + " argument '" + text + "' has unknown kind '" + kind
                            + "' (in:, out:, ws:, sym:, i64:, i32:, f32:)");
            pk.args.push_back(arg);
        }
        plan.kernels.push_back(pk);
    }
    return plan;
}

ResolvedPlan resolveLaunchPlan(const LaunchPlan &plan, const ShapeBindings &cardShape, const DeviceLimits &limits)
{
    const ShapeBindings shape = withDeviceSymbols(cardShape, limits);
    ResolvedPlan out;
    static const char *axis[3] = {"x", "y", "z"};
    for (const auto &w : plan.workspace) {
        int64_t bytes = 0;
        try {
            bytes = evalExpression(w.bytes, shape);
        } catch (const Error &e) {
            throw Error("launch plan: workspace '" + w.name + "' bytes: " + e.what());
        }
        if (bytes < 0 || bytes > limits.maxWorkspaceBytes)
            throw Error("launch plan: workspace '" + w.name + "' asks for " + std::to_string(bytes) + " bytes; allowed: 0 to "
                        + std::to_string(limits.maxWorkspaceBytes));
        out.workspaceBytes.push_back(bytes);
    }
    for (size_t i = 0; i < plan.kernels.size(); ++i) {
        const auto &k = plan.kernels[i];
        const std::string where = kernelLabel(i, k.name);
        ResolvedKernel r;
        r.name = k.name;
        auto eval = [&](const std::string &e, const std::string &field) {
            try {
                return evalExpression(e, shape);
            } catch (const Error &err) {
                throw Error("launch plan: " + where + " " + field + ": " + err.what());
            }
        };
        for (int d = 0; d < 3; ++d) {
            const int64_t g = eval(k.grid[size_t(d)], std::string("grid.") + axis[d]);
            const int64_t b = eval(k.block[size_t(d)], std::string("block.") + axis[d]);
            if (g < 1 || g > limits.maxGrid[size_t(d)])
                throw Error("launch plan: " + where + " grid." + axis[d] + " = " + std::to_string(g) + " (from '" + k.grid[size_t(d)]
                            + "'); this device allows 1 to " + std::to_string(limits.maxGrid[size_t(d)]));
            if (b < 1 || b > limits.maxBlock[size_t(d)])
                throw Error("launch plan: " + where + " block." + axis[d] + " = " + std::to_string(b) + " (from '" + k.block[size_t(d)]
                            + "'); this device allows 1 to " + std::to_string(limits.maxBlock[size_t(d)]));
            r.grid[size_t(d)] = uint32_t(g);
            r.block[size_t(d)] = uint32_t(b);
        }
        if (r.threadsPerBlock() > limits.maxThreadsPerBlock)
            throw Error("launch plan: " + where + " block has " + std::to_string(r.threadsPerBlock()) + " threads ("
                        + std::to_string(r.block[0]) + " x " + std::to_string(r.block[1]) + " x " + std::to_string(r.block[2])
                        + "); this device allows at most " + std::to_string(limits.maxThreadsPerBlock) + " per block");
        const int64_t shared = eval(k.sharedBytes, "shared_bytes");
        if (shared < 0 || shared > limits.maxSharedPerBlockOptin)
            throw Error("launch plan: " + where + " shared_bytes = " + std::to_string(shared) + "; this device allows 0 to "
                        + std::to_string(limits.maxSharedPerBlockOptin) + " bytes of shared memory per block");
        r.sharedBytes = uint32_t(shared);
        for (int d = 0; d < 3; ++d)
            r.cluster[size_t(d)] = uint32_t(k.cluster[size_t(d)]);
        if (r.clusterBlocks() > 1) {
            if (r.clusterBlocks() > limits.maxClusterBlocks)
                throw Error("launch plan: " + where + " cluster of " + std::to_string(r.clusterBlocks()) + " blocks; this device allows "
                            + (limits.maxClusterBlocks > 1 ? "at most " + std::to_string(limits.maxClusterBlocks) : std::string("no clusters")));
            for (int d = 0; d < 3; ++d)
                if (r.grid[size_t(d)] % r.cluster[size_t(d)] != 0)
                    throw Error("launch plan: " + where + " grid." + axis[d] + " = " + std::to_string(r.grid[size_t(d)])
                                + " is not a multiple of cluster." + axis[d] + " = " + std::to_string(r.cluster[size_t(d)]));
        }
        for (const auto &a : k.args) {
            ResolvedArg ra;
            ra.kind = a.kind;
            ra.index = a.index;
            switch (a.kind) {
            case PlanArg::Kind::Symbol: {
                auto it = shape.find(a.name);
                if (it == shape.end())
                    throw Error("launch plan: " + where + " argument '" + a.text + "': this shape does not bind '" + a.name + "'");
                ra.value = it->second;
                break;
            }
            case PlanArg::Kind::I64:
                ra.value = eval(a.name, "argument '" + a.text + "'");
                break;
            case PlanArg::Kind::I32:
                ra.value = eval(a.name, "argument '" + a.text + "'");
                if (ra.value < INT32_MIN || ra.value > INT32_MAX)
                    throw Error("launch plan: " + where + " argument '" + a.text + "' = " + std::to_string(ra.value)
                                + " does not fit 32 bits; pass it as i64:");
                break;
            case PlanArg::Kind::F32:
                ra.f32 = std::strtof(a.name.c_str(), nullptr);
                break;
            default:
                break;
            }
            r.args.push_back(ra);
        }
        out.kernels.push_back(std::move(r));
    }
    return out;
}

} // namespace kforge::worker
