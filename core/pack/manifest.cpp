#include "pack/manifest.h"

#include <algorithm>

#include "ops/shape_box.h"
#include "util/error.h"

namespace kforge::pack {

namespace {

using J = nlohmann::json;

const J &field(const J &j, const char *name, const std::string &where)
{
    if (!j.is_object())
        throw Error(where + ": expected an object, got " + std::string(j.type_name()));
    const auto it = j.find(name);
    if (it == j.end())
        throw Error(where + "." + name + ": missing");
    return *it;
}

std::string text(const J &j, const char *name, const std::string &where, bool required = true)
{
    if (!required && (!j.is_object() || !j.contains(name)))
        return {};
    const auto &v = field(j, name, where);
    if (!v.is_string())
        throw Error(where + "." + name + ": expected a string, got " + std::string(v.type_name()));
    return v.get<std::string>();
}

PackFile fileFromJson(const J &j, const std::string &where)
{
    PackFile f{text(j, "path", where), text(j, "sha256", where)};
    if (f.path.empty() || f.path[0] == '/' || f.path.find("..") != std::string::npos)
        throw Error(where + ".path: '" + f.path + "' is not a path inside the pack");
    if (f.sha256.size() != 64 || f.sha256.find_first_not_of("0123456789abcdef") != std::string::npos)
        throw Error(where + ".sha256: '" + f.sha256 + "' is not a SHA-256 in hex");
    return f;
}

J fileToJson(const PackFile &f)
{
    return {{"path", f.path}, {"sha256", f.sha256}};
}

TensorGuard tensorFromJson(const J &j, const std::string &where)
{
    TensorGuard t;
    t.name = text(j, "name", where);
    try {
        t.dtype = dtypeFromName(text(j, "dtype", where));
    } catch (const Error &e) {
        throw Error(where + ".dtype: " + e.what());
    }
    const auto &dims = field(j, "dims", where);
    if (!dims.is_array())
        throw Error(where + ".dims: expected a list of shape symbols");
    for (const auto &d : dims) {
        if (!d.is_string())
            throw Error(where + ".dims: expected a list of shape symbols, found " + d.dump());
        t.dims.push_back(d.get<std::string>());
    }
    t.contiguous = j.value("contiguous", true);
    t.flattenLeading = j.value("flatten_leading", false);
    if (t.flattenLeading && t.dims.size() != 2)
        throw Error(where + ".flatten_leading: only a rows x cols tensor flattens its leading dimensions");
    t.broadcastRows = j.value("broadcast_rows", false);
    if (t.broadcastRows && (t.dims.size() != 2 || t.flattenLeading))
        throw Error(where + ".broadcast_rows: only a mrows x cols mask broadcasts over the rows");
    return t;
}

J tensorToJson(const TensorGuard &t)
{
    J j = {{"name", t.name}, {"dtype", dtypeName(t.dtype)}, {"dims", t.dims}, {"contiguous", t.contiguous}};
    if (t.flattenLeading)
        j["flatten_leading"] = true;
    if (t.broadcastRows)
        j["broadcast_rows"] = true;
    return j;
}

std::vector<TensorGuard> tensorsFromJson(const J &j, const char *name, const std::string &where)
{
    const auto &list = field(j, name, where);
    if (!list.is_array())
        throw Error(where + "." + name + ": expected a list");
    std::vector<TensorGuard> out;
    for (size_t i = 0; i < list.size(); ++i)
        out.push_back(tensorFromJson(list[i], where + "." + name + "[" + std::to_string(i) + "]"));
    return out;
}

PackKernel kernelFromJson(const J &j, const std::string &where)
{
    PackKernel k;
    k.key = text(j, "key", where);
    k.atenOp = text(j, "operator", where);
    k.atenOverload = text(j, "overload", where, false);
    k.atenSchema = text(j, "schema", where, false);
    k.backend = text(j, "backend", where);
    if (k.backend != "cpu" && k.backend != "cuda")
        throw Error(where + ".backend: '" + k.backend + "' is neither cpu nor cuda");
    k.node = j.value("node", int64_t(0));
    k.speedup = j.value("speedup", 0.0);
    k.errorModel = j.value("error_model", std::string());
    k.arguments = field(j, "arguments", where);
    if (!k.arguments.is_array())
        throw Error(where + ".arguments: expected a list");
    k.inputs = tensorsFromJson(j, "inputs", where);
    k.outputs = tensorsFromJson(j, "outputs", where);
    if (k.outputs.empty())
        throw Error(where + ".outputs: a kernel writes at least one output");
    const auto &syms = field(j, "symbols", where);
    if (!syms.is_object())
        throw Error(where + ".symbols: expected an object of [min, max] ranges");
    for (const auto &[name, r] : syms.items()) {
        if (!r.is_array() || r.size() != 2 || !r[0].is_number_integer() || !r[1].is_number_integer() || r[0].get<int64_t>() > r[1].get<int64_t>())
            throw Error(where + ".symbols." + name + ": expected [min, max] with min <= max, got " + r.dump());
        k.symbols[name] = {r[0].get<int64_t>(), r[1].get<int64_t>()};
    }
    for (const auto *list : {&k.inputs, &k.outputs})
        for (const auto &t : *list)
            for (const auto &d : t.dims)
                if (!k.symbols.count(d))
                    throw Error(where + ": tensor " + t.name + " names the shape symbol '" + d + "', which symbols has no range for");
    if (j.contains("multiples")) {
        const auto &m = j["multiples"];
        if (!m.is_array())
            throw Error(where + ".multiples: expected a list of [a, b] symbol pairs");
        for (size_t i = 0; i < m.size(); ++i) {
            const auto &pair = m[i];
            if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_string() || !k.symbols.count(pair[0].get<std::string>())
                || !k.symbols.count(pair[1].get<std::string>()))
                throw Error(where + ".multiples[" + std::to_string(i) + "]: expected [a, b], two symbols with ranges, got " + pair.dump());
            k.multiples.emplace_back(pair[0].get<std::string>(), pair[1].get<std::string>());
        }
    }
    for (size_t i = 0; i < k.arguments.size(); ++i) {
        const auto &a = k.arguments[i];
        if (a.contains("input") && (!a["input"].is_number_integer() || a["input"].get<int64_t>() < 0
                                    || a["input"].get<size_t>() >= k.inputs.size()))
            throw Error(where + ".arguments[" + std::to_string(i) + "]: names input " + a["input"].dump() + ", which the kernel does not have");
    }
    k.source = fileFromJson(field(j, "source", where), where + ".source");
    k.launch = j.value("launch", J::object());
    const auto &bins = field(j, "binaries", where);
    if (!bins.is_array() || bins.empty())
        throw Error(where + ".binaries: expected a non-empty list");
    for (size_t i = 0; i < bins.size(); ++i) {
        const auto w = where + ".binaries[" + std::to_string(i) + "]";
        k.binaries.push_back({text(bins[i], "arch", w), fileFromJson(bins[i], w)});
    }
    return k;
}

J kernelToJson(const PackKernel &k)
{
    J syms = J::object();
    for (const auto &[name, r] : k.symbols)
        syms[name] = {r.min, r.max};
    J ins = J::array(), outs = J::array(), bins = J::array();
    for (const auto &t : k.inputs)
        ins.push_back(tensorToJson(t));
    for (const auto &t : k.outputs)
        outs.push_back(tensorToJson(t));
    for (const auto &b : k.binaries) {
        auto f = fileToJson(b.file);
        f["arch"] = b.arch;
        bins.push_back(f);
    }
    J j = {{"key", k.key}, {"operator", k.atenOp}, {"overload", k.atenOverload}, {"schema", k.atenSchema}, {"backend", k.backend},
           {"node", k.node}, {"speedup", k.speedup}, {"error_model", k.errorModel}, {"arguments", k.arguments}, {"inputs", ins},
           {"outputs", outs}, {"symbols", syms}, {"source", fileToJson(k.source)}, {"binaries", bins}};
    if (!k.launch.empty())
        j["launch"] = k.launch;
    if (!k.multiples.empty())
        j["multiples"] = k.multiples;
    return j;
}

} // namespace

const PackBinary *PackKernel::binaryFor(const std::string &arch) const
{
    for (const auto &b : binaries)
        if (b.arch == arch)
            return &b;
    return nullptr;
}

J manifestToJson(const PackManifest &m)
{
    J kernels = J::array();
    for (const auto &k : m.kernels)
        kernels.push_back(kernelToJson(k));
    return {{"kforge_pack", m.formatVersion}, {"created_by", m.createdBy}, {"created_at", m.createdAt}, {"session", m.session},
            {"kernels", kernels}};
}

PackManifest manifestFromJson(const J &j)
{
    if (!j.is_object() || !j.contains("kforge_pack"))
        throw Error("manifest.json is not a kforge pack manifest (no \"kforge_pack\" format version)");
    const auto &v = j["kforge_pack"];
    if (!v.is_number_integer())
        throw Error("manifest.json: kforge_pack: expected a format version number, got " + v.dump());
    if (v.get<int64_t>() != kPackFormatVersion)
        throw Error("manifest.json: the pack is format version " + v.dump() + "; this kforge reads version "
                    + std::to_string(kPackFormatVersion));
    PackManifest m;
    m.formatVersion = kPackFormatVersion;
    m.createdBy = j.value("created_by", std::string());
    m.createdAt = j.value("created_at", std::string());
    m.session = j.value("session", std::string());
    const auto &kernels = field(j, "kernels", "manifest.json");
    if (!kernels.is_array())
        throw Error("manifest.json.kernels: expected a list");
    for (size_t i = 0; i < kernels.size(); ++i)
        m.kernels.push_back(kernelFromJson(kernels[i], "manifest.json.kernels[" + std::to_string(i) + "]"));
    return m;
}

PackKernel kernelFromCard(const OperatorCard &card)
{
    PackKernel k;
    k.key = card.key;
    k.atenOp = card.atenOp;
    k.atenOverload = card.atenOverload;
    k.atenSchema = card.atenSchema;
    k.errorModel = errorModelName(card.errorModel);
    k.arguments = card.referenceArgs;
    const auto guards = [&](const std::vector<TensorSpec> &specs) {
        std::vector<TensorGuard> out;
        for (const auto &s : specs) {
            TensorGuard t{s.name, s.dtype, s.dims, true, false};
            // A family card is the call flattened to rows x cols (core/workload/call_cards.h).
            t.flattenLeading = !card.family.empty() && s.dims.size() == 2 && s.dims[0] == "rows";
            // ... and its mask [mrows, cols] as it broadcasts over the call's leading dimensions.
            t.broadcastRows = !card.family.empty() && s.dims == std::vector<std::string>{"mrows", "cols"};
            out.push_back(std::move(t));
        }
        return out;
    };
    k.inputs = guards(card.inputs);
    k.outputs = guards(card.outputs);
    for (const auto &[sym, range] : verifiedBox(card))
        k.symbols[sym] = SymbolRange{range.min, range.max};
    k.multiples = card.multiples;
    return k;
}

} // namespace kforge::pack
