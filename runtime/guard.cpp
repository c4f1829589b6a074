#include "runtime/guard.h"

#include <sstream>

#include <c10/core/GradMode.h>
#include <c10/core/ScalarType.h>

#include "ops/mask_rows.h"
#include "util/error.h"

namespace kforge::runtime {

namespace {

c10::ScalarType toScalarType(DType t)
{
    switch (t) {
    case DType::F32: return c10::ScalarType::Float;
    case DType::F16: return c10::ScalarType::Half;
    case DType::BF16: return c10::ScalarType::BFloat16;
    case DType::F64: return c10::ScalarType::Double;
    case DType::I64: return c10::ScalarType::Long;
    case DType::I32: return c10::ScalarType::Int;
    case DType::Bool: return c10::ScalarType::Bool;
    }
    return c10::ScalarType::Undefined;
}

int64_t wrapDim(int64_t d, int64_t rank)
{
    return d < 0 ? d + rank : d;
}

} // namespace

const char *mismatchName(Mismatch m)
{
    switch (m) {
    case Mismatch::None: return "none";
    case Mismatch::Device: return "device";
    case Mismatch::Arch: return "arch";
    case Mismatch::Dtype: return "dtype";
    case Mismatch::Rank: return "rank";
    case Mismatch::Shape: return "shape";
    case Mismatch::Layout: return "layout";
    case Mismatch::Alignment: return "alignment";
    case Mismatch::Argument: return "argument";
    case Mismatch::Kernel: return "kernel";
    case Mismatch::Autograd: return "autograd";
    case Mismatch::Count: break;
    }
    return "?";
}

int Guard::symbol(const std::string &name)
{
    for (size_t i = 0; i < m_symbols.size(); ++i)
        if (m_symbols[i] == name)
            return int(i);
    if (m_symbols.size() >= size_t(kMaxSymbols))
        throw Error("the kernel has more than " + std::to_string(kMaxSymbols) + " shape symbols");
    m_symbols.push_back(name);
    return int(m_symbols.size() - 1);
}

int Guard::symbolIndex(const std::string &name) const
{
    for (size_t i = 0; i < m_symbols.size(); ++i)
        if (m_symbols[i] == name)
            return int(i);
    return -1;
}

Guard::Guard(const pack::PackKernel &k, const c10::FunctionSchema &schema, c10::DeviceType device)
    : m_device(device), m_alignment(device == c10::DeviceType::CPU ? kCpuAlignment : kVerifiedAlignment)
{
    const auto &params = schema.arguments();
    m_argCount = params.size();
    if (k.arguments.size() != params.size())
        throw Error("kernel " + k.key + " has " + std::to_string(k.arguments.size()) + " arguments and this libtorch's " + k.qualifiedOp()
                    + " takes " + std::to_string(params.size()) + " (" + schema.name() + ")");
    for (size_t i = 0; i < params.size(); ++i) {
        const auto &a = k.arguments[i];
        const auto where = "kernel " + k.key + ": argument " + std::to_string(i) + " (" + params[i].name() + ")";
        if (a.contains("input")) {
            const auto &spec = k.inputs.at(a["input"].get<size_t>());
            if (spec.dims.size() > 8)
                throw Error(where + ": more than 8 dimensions");
            TensorCheck t;
            t.arg = int(i);
            t.dtype = toScalarType(spec.dtype);
            t.flatten = spec.flattenLeading;
            t.contiguous = spec.contiguous;
            t.rank = int(spec.dims.size());
            t.name = spec.name;
            for (size_t d = 0; d < spec.dims.size(); ++d)
                t.sym[d] = int8_t(symbol(spec.dims[d]));
            if (spec.broadcastRows) {
                if (m_rankArg < 0 || !m_tensors.front().flatten || spec.dims.size() != 2)
                    throw Error(where + ": a mask broadcast over the rows needs a rows x cols tensor before it");
                t.over = m_rankArg;
                t.runSym = {int8_t(symbol("minner")), int8_t(symbol("mstep")), int8_t(symbol("mblock"))};
            }
            if (m_rankArg < 0)
                m_rankArg = int(i);
            m_tensors.push_back(std::move(t));
            continue;
        }
        ValueCheck v;
        v.arg = int(i);
        v.name = params[i].name();
        v.isDim = v.name == "dim";
        if (a.contains("int")) {
            v.kind = ValueCheck::Kind::Int;
            v.i = a["int"].get<int64_t>();
        } else if (a.contains("bool")) {
            v.kind = ValueCheck::Kind::Bool;
            v.i = a["bool"].get<bool>();
        } else if (a.contains("double")) {
            v.kind = ValueCheck::Kind::Double;
            v.d = a["double"].get<double>();
        } else if (a.contains("str")) {
            v.kind = ValueCheck::Kind::Str;
            v.s = a["str"].get<std::string>();
        } else if (a.contains("int_list")) {
            v.kind = ValueCheck::Kind::IntList;
            v.ints = a["int_list"].get<std::vector<int64_t>>();
        } else if (a.contains("none")) {
            v.kind = ValueCheck::Kind::None;
        } else if (a.contains("sym")) {
            v.kind = ValueCheck::Kind::Sym;
            v.syms = {int8_t(symbol(a["sym"].get<std::string>()))};
        } else if (a.contains("sym_list")) {
            v.kind = ValueCheck::Kind::SymList;
            for (const auto &s : a["sym_list"])
                v.syms.push_back(int8_t(symbol(s.get<std::string>())));
        } else {
            throw Error(where + ": the runtime cannot check the argument " + a.dump());
        }
        m_values.push_back(std::move(v));
    }
    if (m_tensors.empty())
        throw Error("kernel " + k.key + " takes no tensor: nothing tells which calls it covers");
    if (m_tensors.size() != k.inputs.size())
        throw Error("kernel " + k.key + " has " + std::to_string(k.inputs.size()) + " inputs and its arguments name "
                    + std::to_string(m_tensors.size()) + ": each input must be exactly one argument");
    for (const auto &[a, b] : k.multiples) {
        const int ia = symbolIndex(a), ib = symbolIndex(b);
        if (ia < 0 || ib < 0)
            throw Error("kernel " + k.key + ": multiples names '" + a + "' and '" + b + "', which no input or argument binds");
        m_multiples.emplace_back(int8_t(ia), int8_t(ib));
    }
    m_ranges.assign(m_symbols.size(), {INT64_MIN, INT64_MAX});
    for (size_t i = 0; i < m_symbols.size(); ++i)
        if (const auto it = k.symbols.find(m_symbols[i]); it != k.symbols.end())
            m_ranges[i] = it->second;
    for (const auto &o : k.outputs) {
        OutputRule r;
        for (const auto &in : k.inputs) {
            const int idx = int(&in - k.inputs.data());
            if (in.dims == o.dims && in.flattenLeading) {
                r.likeInput = idx;
                break;
            }
            if (in.flattenLeading && o.dims.size() == 1 && o.dims[0] == in.dims[0]) {
                r.likeInput = idx;
                r.dropLast = true;
                break;
            }
        }
        for (const auto &d : o.dims) {
            const int s = symbolIndex(d);
            if (s < 0 && r.likeInput < 0)
                throw Error("kernel " + k.key + ": output " + o.name + " has the dimension '" + d + "', which no input or argument binds");
            r.sym.push_back(int8_t(s));
        }
        m_outputs.push_back(std::move(r));
    }
    // The argument of the first input, mapped from the kernel's input index to the stack position.
    std::vector<int> argOfInput(k.inputs.size(), -1);
    for (size_t i = 0; i < k.arguments.size(); ++i)
        if (k.arguments[i].contains("input"))
            argOfInput[k.arguments[i]["input"].get<size_t>()] = int(i);
    for (auto &r : m_outputs)
        if (r.likeInput >= 0)
            r.likeInput = argOfInput[size_t(r.likeInput)];
}

Mismatch Guard::bindExtent(int s, int64_t extent, Binding &b) const
{
    const uint32_t bit = 1u << s;
    if (b.bound & bit)
        return b.value[size_t(s)] == extent ? Mismatch::None : Mismatch::Shape;
    if (extent < m_ranges[size_t(s)].min || extent > m_ranges[size_t(s)].max)
        return Mismatch::Shape;
    b.value[size_t(s)] = extent;
    b.bound |= bit;
    return Mismatch::None;
}

Mismatch Guard::checkTensor(const TensorCheck &t, const at::Tensor &x, const c10::IValue *args, Binding &b, bool first) const
{
    if (!x.defined())
        return Mismatch::Argument;
    if (x.device().type() != m_device)
        return Mismatch::Device;
    if (first)
        b.device = x.device().index();
    else if (x.device().index() != b.device)
        return Mismatch::Device;
    if (x.scalar_type() != t.dtype)
        return Mismatch::Dtype;
    const auto sizes = x.sizes();
    const int64_t rank = int64_t(sizes.size());
    int64_t ext[8];
    int n = t.rank;
    std::optional<MaskRows> runs;
    if (t.over >= 0) { // the mask as it broadcasts over x's leading dimensions; x was checked before it
        const auto xs = args[t.over].toTensor().sizes();
        runs = maskRows(xs.data(), xs.size(), sizes.data(), sizes.size());
        if (!runs)
            return Mismatch::Shape;
        ext[0] = runs->mrows;
        ext[1] = sizes[size_t(rank - 1)];
    } else if (t.flatten) {
        if (rank < 1)
            return Mismatch::Rank;
        int64_t rows = 1;
        for (int64_t d = 0; d + 1 < rank; ++d)
            rows *= sizes[size_t(d)];
        ext[0] = rows;
        ext[1] = sizes[size_t(rank - 1)];
    } else {
        if (rank != t.rank)
            return Mismatch::Rank;
        for (int d = 0; d < n; ++d)
            ext[d] = sizes[size_t(d)];
    }
    if (t.contiguous && !x.is_contiguous())
        return Mismatch::Layout;
    if (reinterpret_cast<uintptr_t>(x.data_ptr()) % m_alignment != 0)
        return Mismatch::Alignment;
    for (int d = 0; d < n; ++d)
        if (const auto m = bindExtent(t.sym[size_t(d)], ext[d], b); m != Mismatch::None)
            return m;
    if (runs) {
        const int64_t values[3] = {runs->minner, runs->mstep, runs->mblock};
        for (size_t i = 0; i < 3; ++i)
            if (const auto m = bindExtent(t.runSym[i], values[i], b); m != Mismatch::None)
                return m;
    }
    return Mismatch::None;
}

Mismatch Guard::checkValue(const ValueCheck &v, const c10::IValue &iv, int64_t rank, Binding &b) const
{
    using K = ValueCheck::Kind;
    switch (v.kind) {
    case K::Int:
        if (!iv.isInt())
            return Mismatch::Argument;
        return iv.toInt() == v.i || (v.isDim && wrapDim(iv.toInt(), rank) == wrapDim(v.i, rank)) ? Mismatch::None : Mismatch::Argument;
    case K::Bool:
        return iv.isBool() && iv.toBool() == bool(v.i) ? Mismatch::None : Mismatch::Argument;
    case K::Double:
        return iv.isDouble() && iv.toDouble() == v.d ? Mismatch::None : Mismatch::Argument;
    case K::Str:
        return iv.isString() && iv.toStringRef() == v.s ? Mismatch::None : Mismatch::Argument;
    case K::None:
        return iv.isNone() ? Mismatch::None : Mismatch::Argument;
    case K::IntList: {
        if (!iv.isIntList())
            return Mismatch::Argument;
        const auto list = iv.toListRef();
        if (list.size() != v.ints.size())
            return Mismatch::Argument;
        for (size_t i = 0; i < list.size(); ++i) {
            const int64_t got = list[i].toInt();
            if (got != v.ints[i] && !(v.isDim && wrapDim(got, rank) == wrapDim(v.ints[i], rank)))
                return Mismatch::Argument;
        }
        return Mismatch::None;
    }
    case K::Sym:
    case K::SymList: {
        int64_t one = 0;
        c10::ArrayRef<c10::IValue> list;
        if (v.kind == K::Sym) {
            if (!iv.isInt())
                return Mismatch::Argument;
            one = iv.toInt();
        } else {
            if (!iv.isIntList())
                return Mismatch::Argument;
            list = iv.toListRef();
            if (list.size() != v.syms.size())
                return Mismatch::Argument;
        }
        for (size_t i = 0; i < v.syms.size(); ++i) {
            const int64_t got = v.kind == K::Sym ? one : list[i].toInt();
            const int s = v.syms[i];
            if (b.bound & (1u << s)) {
                if (b.value[size_t(s)] != got)
                    return Mismatch::Argument;
            } else if (const auto m = bindExtent(s, got, b); m != Mismatch::None) {
                return m;
            }
        }
        return Mismatch::None;
    }
    }
    return Mismatch::Argument;
}

Mismatch Guard::check(const c10::IValue *args, Binding &b, bool recordsGrad) const
{
    b.bound = 0;
    b.device = -1;
    bool first = true;
    const bool grad = recordsGrad && c10::GradMode::is_enabled();
    for (const auto &t : m_tensors) {
        const auto &iv = args[t.arg];
        if (!iv.isTensor())
            return Mismatch::Argument;
        if (const auto m = checkTensor(t, iv.toTensor(), args, b, first); m != Mismatch::None)
            return m;
        if (grad && iv.toTensor().requires_grad())
            return Mismatch::Autograd;
        first = false;
    }
    const int64_t rank = m_rankArg >= 0 ? args[m_rankArg].toTensor().dim() : 0;
    for (const auto &v : m_values) // after the tensors: a `sym` argument must agree with the sizes they bound
        if (const auto m = checkValue(v, args[v.arg], rank, b); m != Mismatch::None)
            return m;
    return brokenMultiple(b) ? Mismatch::Shape : Mismatch::None;
}

const std::pair<int8_t, int8_t> *Guard::brokenMultiple(const Binding &b) const
{
    for (const auto &m : m_multiples)
        if (b.value[size_t(m.second)] < 1 || b.value[size_t(m.first)] % b.value[size_t(m.second)] != 0)
            return &m;
    return nullptr;
}

std::string Guard::describe(const c10::IValue *args) const
{
    if (c10::GradMode::is_enabled())
        for (const auto &t : m_tensors)
            if (args[t.arg].isTensor() && args[t.arg].toTensor().requires_grad())
                return t.name + " requires grad: autograd must record the operator, so its own kernels run";
    Binding b;
    bool first = true;
    for (const auto &t : m_tensors) {
        const auto &iv = args[t.arg];
        if (!iv.isTensor())
            return t.name + ": not a tensor (" + iv.tagKind() + ")";
        const auto &x = iv.toTensor();
        const auto m = checkTensor(t, x, args, b, first);
        first = false;
        if (m == Mismatch::None)
            continue;
        std::string sizes;
        if (x.defined())
            for (auto s : x.sizes())
                sizes += (sizes.empty() ? "" : ", ") + std::to_string(s);
        switch (m) {
        case Mismatch::Device: return t.name + ": on " + x.device().str() + ", the kernel runs on " + c10::DeviceTypeName(m_device, true);
        case Mismatch::Dtype:
            return t.name + ": dtype " + std::string(c10::toString(x.scalar_type())) + ", the kernel takes " + c10::toString(t.dtype);
        case Mismatch::Rank: return t.name + ": " + std::to_string(x.dim()) + " dimensions, the kernel takes " + std::to_string(t.rank);
        case Mismatch::Layout: return t.name + ": not contiguous, the kernel takes contiguous tensors";
        case Mismatch::Alignment:
            return t.name + ": starts " + std::to_string(reinterpret_cast<uintptr_t>(x.data_ptr()) % m_alignment) + " bytes past a "
                 + std::to_string(m_alignment) + "-byte boundary, the kernel was verified on aligned buffers";
        case Mismatch::Shape: {
            std::string ranges;
            for (int d = 0; d < t.rank; ++d) {
                const int s = t.sym[size_t(d)];
                ranges += (ranges.empty() ? "" : ", ") + m_symbols[size_t(s)] + " in [" + std::to_string(m_ranges[size_t(s)].min) + ", "
                        + std::to_string(m_ranges[size_t(s)].max) + "]";
            }
            return t.name + ": sizes [" + sizes + "], the kernel was verified on " + ranges;
        }
        default: return t.name + ": undefined";
        }
    }
    const int64_t rank = m_rankArg >= 0 ? args[m_rankArg].toTensor().dim() : 0;
    for (const auto &v : m_values)
        if (const auto m = checkValue(v, args[v.arg], rank, b); m != Mismatch::None) {
            std::ostringstream got;
            got << args[v.arg];
            return "argument " + v.name + " = " + got.str() + (m == Mismatch::Shape ? ", outside the range the kernel was verified on"
                                                                                      : ", not the value the kernel was verified with");
        }
    if (const auto *m = brokenMultiple(b)) {
        const auto [a, d] = *m;
        return m_symbols[size_t(a)] + " = " + std::to_string(b.value[size_t(a)]) + " is not a multiple of " + m_symbols[size_t(d)] + " = "
                   + std::to_string(b.value[size_t(d)]) + ": the operator's own kernel decides";
    }
    return "accepted";
}

std::vector<int64_t> Guard::kernelSizes(const pack::TensorGuard &t, const Binding &b) const
{
    std::vector<int64_t> out;
    for (const auto &d : t.dims) {
        const int s = symbolIndex(d);
        out.push_back(s >= 0 ? b.value[size_t(s)] : 0);
    }
    return out;
}

std::vector<int64_t> Guard::outputSizes(size_t i, const c10::IValue *args, const Binding &b) const
{
    const auto &r = m_outputs.at(i);
    if (r.likeInput >= 0) {
        auto sizes = args[r.likeInput].toTensor().sizes().vec();
        if (r.dropLast && !sizes.empty())
            sizes.pop_back();
        return sizes;
    }
    std::vector<int64_t> out;
    for (auto s : r.sym)
        out.push_back(b.value[size_t(s)]);
    return out;
}

} // namespace kforge::runtime
