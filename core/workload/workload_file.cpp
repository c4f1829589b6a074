#include "workload/workload_file.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "util/error.h"
#include "util/files.h"

namespace kforge {

namespace {

using J = nlohmann::json;

const std::set<std::string> &argKinds()
{
    static const std::set<std::string> k = {"tensor", "int", "double", "bool", "str", "int_list", "double_list",
                                            "bool_list", "tensor_list", "none", "other"};
    return k;
}

[[noreturn]] void fail(const std::string &where, const std::string &what)
{
    throw Error(where + ": " + what);
}

const J &field(const J &j, const char *key, const std::string &where)
{
    auto it = j.find(key);
    if (it == j.end())
        fail(where, std::string("missing \"") + key + "\"");
    return *it;
}

std::string text(const J &j, const char *key, const std::string &where, bool required = true)
{
    auto it = j.find(key);
    if (it == j.end()) {
        if (required)
            fail(where, std::string("missing \"") + key + "\"");
        return {};
    }
    if (!it->is_string())
        fail(where, std::string("\"") + key + "\" must be a string, not " + it->type_name());
    return it->get<std::string>();
}

std::vector<int64_t> intList(const J &j, const std::string &where)
{
    if (!j.is_array())
        fail(where, std::string("expected a list of whole numbers, not ") + j.type_name());
    std::vector<int64_t> v;
    for (const auto &x : j) {
        if (!x.is_number_integer())
            fail(where, "expected whole numbers, found " + x.dump());
        v.push_back(x.get<int64_t>());
    }
    return v;
}

TensorMeta metaFromJson(const J &j, const std::string &where)
{
    if (!j.is_object())
        fail(where, std::string("a tensor is an object with shape, dtype and strides, not ") + j.type_name());
    TensorMeta t;
    t.shape = intList(field(j, "shape", where), where + ".shape");
    for (int64_t d : t.shape)
        if (d < 0)
            fail(where + ".shape", "extents are never negative, found " + std::to_string(d));
    t.dtype = text(j, "dtype", where);
    if (j.contains("strides")) {
        t.strides = intList(j["strides"], where + ".strides");
        if (t.strides.size() != t.shape.size())
            fail(where + ".strides", "has " + std::to_string(t.strides.size()) + " entries for a tensor of " + std::to_string(t.shape.size())
                                          + " dimensions");
    }
    for (const char *k : {"min", "max"})
        if (j.contains(k)) {
            if (!j[k].is_number())
                fail(where + "." + k, "must be a number");
            (k[1] == 'i' ? t.min : t.max) = j[k].get<double>();
        }
    return t;
}

CallArg argFromJson(const J &j, const std::string &where)
{
    if (!j.is_object())
        fail(where, std::string("an argument is an object such as {\"int\": 3}, not ") + j.type_name());
    CallArg a;
    a.name = text(j, "name", where, false);
    for (const auto &k : argKinds())
        if (j.contains(k)) {
            if (!a.kind.empty())
                fail(where, "has both \"" + a.kind + "\" and \"" + k + "\"");
            a.kind = k;
        }
    if (a.kind.empty())
        fail(where, "names no value kind (tensor, int, double, bool, str, int_list, double_list, bool_list, tensor_list, none, other)");
    const auto &v = j[a.kind];
    if (a.kind == "tensor") {
        a.tensors.push_back(metaFromJson(v, where + ".tensor"));
    } else if (a.kind == "tensor_list") {
        if (!v.is_array())
            fail(where + ".tensor_list", "must be a list of tensors");
        for (size_t i = 0; i < v.size(); ++i)
            a.tensors.push_back(metaFromJson(v[i], where + ".tensor_list[" + std::to_string(i) + "]"));
    } else {
        const bool ok = (a.kind == "int" && v.is_number_integer()) || (a.kind == "double" && v.is_number())
                        || (a.kind == "bool" && v.is_boolean()) || (a.kind == "str" && v.is_string()) || (a.kind == "other" && v.is_string())
                        || (a.kind == "none") || (a.kind == "int_list" && v.is_array()) || (a.kind == "double_list" && v.is_array())
                        || (a.kind == "bool_list" && v.is_array());
        if (!ok)
            fail(where + "." + a.kind, "has a value of the wrong type: " + v.dump());
        if (a.kind == "int_list")
            intList(v, where + ".int_list");
        a.value = v;
    }
    return a;
}

} // namespace

bool TensorMeta::contiguous() const
{
    if (strides.empty())
        return true;
    int64_t expect = 1;
    for (size_t i = shape.size(); i-- > 0;) {
        if (shape[i] != 1 && strides[i] != expect)
            return false;
        expect *= shape[i];
    }
    return true;
}

int64_t TensorMeta::numel() const
{
    int64_t n = 1;
    for (int64_t d : shape)
        n *= d;
    return n;
}

J tensorMetaToJson(const TensorMeta &t)
{
    J j = {{"shape", t.shape}, {"dtype", t.dtype}, {"strides", t.strides}};
    if (t.min)
        j["min"] = *t.min;
    if (t.max)
        j["max"] = *t.max;
    return j;
}

std::string CapturedCall::signature() const
{
    J sig = J::array({qualifiedName()});
    for (const auto &a : args) {
        if (a.kind == "tensor" || a.kind == "tensor_list") {
            J ts = J::array();
            for (const auto &t : a.tensors)
                ts.push_back({t.shape, t.dtype, t.strides});
            sig.push_back({a.kind, ts});
        } else {
            sig.push_back({a.kind, a.value});
        }
    }
    return sig.dump();
}

CapturedCall callFromJson(const J &j, const std::string &where)
{
    if (!j.is_object())
        fail(where, std::string("a call is an object, not ") + j.type_name());
    CapturedCall c;
    c.op = text(j, "op", where);
    if (c.op.find("::") == std::string::npos)
        fail(where + ".op", "an operator is named namespace::name (aten::gelu), not '" + c.op + "'");
    c.overload = text(j, "overload", where, false);
    c.schema = text(j, "schema", where, false);
    const auto &args = field(j, "args", where);
    if (!args.is_array())
        fail(where + ".args", "must be a list");
    for (size_t i = 0; i < args.size(); ++i)
        c.args.push_back(argFromJson(args[i], where + ".args[" + std::to_string(i) + "]"));
    for (const char *k : {"start_us", "dur_us"})
        if (j.contains(k) && !j[k].is_number())
            fail(where + "." + k, "must be a number of microseconds");
    c.startUs = j.value("start_us", 0.0);
    c.durUs = j.value("dur_us", 0.0);
    if (c.durUs < 0)
        fail(where + ".dur_us", "a duration is never negative");
    if (j.contains("depth") && !j["depth"].is_number_integer())
        fail(where + ".depth", "must be a whole number");
    c.depth = j.value("depth", 0);
    c.tid = j.value("tid", int64_t(0));
    return c;
}

J callToJson(const CapturedCall &c)
{
    J args = J::array();
    for (const auto &a : c.args) {
        J x = J::object();
        if (!a.name.empty())
            x["name"] = a.name;
        if (a.kind == "tensor")
            x["tensor"] = tensorMetaToJson(a.tensors.at(0));
        else if (a.kind == "tensor_list") {
            J ts = J::array();
            for (const auto &t : a.tensors)
                ts.push_back(tensorMetaToJson(t));
            x["tensor_list"] = ts;
        } else
            x[a.kind] = a.kind == "none" ? J(true) : a.value;
        args.push_back(x);
    }
    return {{"op", c.op}, {"overload", c.overload}, {"schema", c.schema}, {"args", args},
            {"start_us", c.startUs}, {"dur_us", c.durUs}, {"depth", c.depth}, {"tid", c.tid}};
}

std::string WorkloadFile::resolve(const std::string &relative) const
{
    if (relative.empty() || relative[0] == '/' || dir.empty())
        return relative;
    return dir + "/" + relative;
}

WorkloadFile parseWorkload(const J &j, const std::string &where)
{
    if (!j.is_object())
        fail(where, std::string("a workload file is a JSON object, not ") + j.type_name());
    const auto &version = field(j, "kforge_workload", where);
    if (!version.is_number_integer() || version.get<int>() != kWorkloadFormat)
        fail(where, "\"kforge_workload\" is the format version, " + std::to_string(kWorkloadFormat) + " here, not " + version.dump());
    WorkloadFile w;
    w.name = text(j, "name", where, false);
    w.problem = text(j, "problem", where, false);
    w.problemSource = text(j, "problem_source", where, false);
    const auto &model = field(j, "model", where);
    if (!model.is_object())
        fail(where + ": model", "must be an object with \"kind\" and \"path\"");
    w.model.kind = text(model, "kind", where + ": model");
    if (w.model.kind != "torchscript" && w.model.kind != "problem")
        fail(where + ": model.kind", "is \"torchscript\" (a .pt file) or \"problem\" (a Python file defining Model, get_inputs, "
                                    "get_init_inputs), not \"" + w.model.kind + "\"");
    w.model.path = text(model, "path", where + ": model");
    if (w.model.path.empty())
        fail(where + ": model.path", "is empty");
    if (model.contains("source"))
        w.model.source = text(model, "source", where + ": model");
    if (j.contains("inputs")) {
        const auto &in = j["inputs"];
        const auto iw = where + ": inputs";
        if (!in.is_object())
            fail(iw, "must be an object with \"seed\" and \"tensors\", or \"captured\"");
        if (in.contains("seed")) {
            if (!in["seed"].is_number_integer() || in["seed"].get<int64_t>() < 0)
                fail(iw + ".seed", "must be a whole number of at least 0");
            w.seed = in["seed"].get<uint64_t>();
        }
        w.capturedInputs = text(in, "captured", iw, false);
        if (in.contains("tensors")) {
            if (!w.capturedInputs.empty())
                fail(iw, "has both \"tensors\" and \"captured\"; give one");
            const auto &ts = in["tensors"];
            if (!ts.is_array())
                fail(iw + ".tensors", "must be a list");
            for (size_t i = 0; i < ts.size(); ++i) {
                const auto tw = iw + ".tensors[" + std::to_string(i) + "]";
                if (!ts[i].is_object())
                    fail(tw, "must be an object with shape and dtype");
                InputSpec s;
                s.shape = intList(field(ts[i], "shape", tw), tw + ".shape");
                for (int64_t d : s.shape)
                    if (d < 0)
                        fail(tw + ".shape", "extents are never negative");
                s.dtype = ts[i].contains("dtype") ? text(ts[i], "dtype", tw) : "float32";
                s.init = ts[i].contains("init") ? text(ts[i], "init", tw) : "randn";
                const bool known = s.init == "randn" || s.init == "rand" || s.init == "zeros" || s.init == "ones"
                                   || s.init.rfind("randint:", 0) == 0;
                if (!known)
                    fail(tw + ".init", "is randn, rand, zeros, ones or randint:LO:HI, not '" + s.init + "'");
                w.inputs.push_back(std::move(s));
            }
        }
    }
    if (j.contains("calls")) {
        const auto &calls = j["calls"];
        if (!calls.is_array())
            fail(where + ": calls", "must be a list");
        for (size_t i = 0; i < calls.size(); ++i)
            w.calls.push_back(callFromJson(calls[i], where + ": calls[" + std::to_string(i) + "]"));
    }
    if (j.contains("cards")) {
        const auto &cards = j["cards"];
        if (!cards.is_array())
            fail(where + ": cards", "must be a list of operator cards");
        std::set<std::string> keys;
        for (size_t i = 0; i < cards.size(); ++i) {
            try {
                w.cards.push_back(cards[i].get<OperatorCard>());
            } catch (const std::exception &e) {
                fail(where + ": cards[" + std::to_string(i) + "]", e.what());
            }
            if (!keys.insert(w.cards.back().key).second)
                fail(where + ": cards[" + std::to_string(i) + "]", "repeats the card key '" + w.cards.back().key + "'");
        }
    }
    if (j.contains("skipped")) {
        if (!j["skipped"].is_array())
            fail(where + ": skipped", "must be a list");
        for (size_t i = 0; i < j["skipped"].size(); ++i) {
            const auto sw = where + ": skipped[" + std::to_string(i) + "]";
            const auto &s = j["skipped"][i];
            if (!s.is_object())
                fail(sw, "must be an object with op and why");
            w.skipped.push_back({text(s, "op", sw), text(s, "why", sw)});
        }
    }
    if (j.contains("samples")) {
        if (!j["samples"].is_object())
            fail(where + ": samples", "must be an object from card key to {file, prefix}");
        for (const auto &[key, s] : j["samples"].items()) {
            const auto sw = where + ": samples." + key;
            if (!s.is_object())
                fail(sw, "must be an object with file and prefix");
            w.samples[key] = {text(s, "file", sw), text(s, "prefix", sw)};
        }
    }
    return w;
}

WorkloadFile loadWorkloadFile(const std::string &path)
{
    std::ifstream in(path);
    if (!in)
        throw Error("cannot read the workload file " + path);
    J j;
    try {
        j = J::parse(in);
    } catch (const J::exception &e) {
        throw Error("workload file " + path + " is not valid JSON: " + e.what());
    }
    auto w = parseWorkload(j, "workload file " + path);
    const auto slash = path.rfind('/');
    w.dir = slash == std::string::npos ? "." : path.substr(0, slash);
    if (w.name.empty()) {
        w.name = path.substr(slash == std::string::npos ? 0 : slash + 1);
        if (w.name.size() > 5 && w.name.compare(w.name.size() - 5, 5, ".json") == 0)
            w.name.resize(w.name.size() - 5);
    }
    // Each card carries where its real inputs are, so whatever searches it verifies on them too.
    for (auto &c : w.cards)
        if (const auto s = w.samples.find(c.key); s != w.samples.end()) {
            c.capturedFile = w.resolve(s->second.file);
            c.capturedPrefix = s->second.prefix;
        }
    return w;
}

J workloadToJson(const WorkloadFile &w)
{
    J j = {{"kforge_workload", kWorkloadFormat}, {"name", w.name}, {"model", {{"kind", w.model.kind}, {"path", w.model.path}}}};
    if (!w.model.source.empty())
        j["model"]["source"] = w.model.source;
    J inputs = {{"seed", w.seed}};
    if (!w.capturedInputs.empty()) {
        inputs["captured"] = w.capturedInputs;
    } else {
        J ts = J::array();
        for (const auto &s : w.inputs)
            ts.push_back({{"shape", s.shape}, {"dtype", s.dtype}, {"init", s.init}});
        inputs["tensors"] = ts;
    }
    j["inputs"] = inputs;
    if (!w.problem.empty())
        j["problem"] = w.problem;
    if (!w.problemSource.empty())
        j["problem_source"] = w.problemSource;
    J calls = J::array(), cards = J::array(), skipped = J::array(), samples = J::object();
    for (const auto &c : w.calls)
        calls.push_back(callToJson(c));
    for (const auto &c : w.cards)
        cards.push_back(c);
    for (const auto &s : w.skipped)
        skipped.push_back({{"op", s.op}, {"why", s.why}});
    for (const auto &[k, s] : w.samples)
        samples[k] = {{"file", s.file}, {"prefix", s.prefix}};
    j["calls"] = calls;
    j["cards"] = cards;
    j["skipped"] = skipped;
    j["samples"] = samples;
    return j;
}

void saveWorkloadFile(const WorkloadFile &w, const std::string &path)
{
    writeFileAtomically(path, workloadToJson(w).dump(1) + "\n");
}

std::vector<CallGroup> groupCalls(const std::vector<CapturedCall> &calls)
{
    std::map<std::string, size_t> bySig;
    std::vector<CallGroup> groups;
    double total = 0;
    for (size_t i = 0; i < calls.size(); ++i) {
        if (calls[i].depth != 0)
            continue;
        const auto sig = calls[i].signature();
        auto [it, fresh] = bySig.emplace(sig, groups.size());
        if (fresh)
            groups.push_back({sig, {}, 0, 0});
        auto &g = groups[it->second];
        g.calls.push_back(i);
        g.totalUs += calls[i].durUs;
        total += calls[i].durUs;
    }
    for (auto &g : groups)
        g.share = total > 0 ? g.totalUs / total : 0;
    std::stable_sort(groups.begin(), groups.end(), [](const CallGroup &a, const CallGroup &b) { return a.totalUs > b.totalUs; });
    return groups;
}

J chromeTrace(const std::vector<CapturedCall> &calls, const std::string &processName)
{
    J events = J::array();
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 0}, {"args", {{"name", processName}}}});
    for (const auto &c : calls) {
        J shapes = J::array(), dtypes = J::array();
        for (const auto &a : c.args)
            for (const auto &t : a.tensors) {
                shapes.push_back(t.shape);
                dtypes.push_back(t.dtype);
            }
        events.push_back({{"name", c.qualifiedName()}, {"cat", "aten"}, {"ph", "X"}, {"ts", c.startUs}, {"dur", c.durUs}, {"pid", 1},
                          {"tid", c.tid}, {"args", {{"schema", c.schema}, {"shapes", shapes}, {"dtypes", dtypes}, {"depth", c.depth}}}});
    }
    return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

std::string rankedTable(const WorkloadFile &w, const std::vector<CallGroup> &groups, size_t maxRows)
{
    std::ostringstream out;
    char line[512];
    double total = 0;
    for (const auto &g : groups)
        total += g.totalUs;
    std::snprintf(line, sizeof line, "workload %s: %zu ATen calls, %zu call patterns, %.1f us at top level\n", w.name.c_str(),
                  w.calls.size(), groups.size(), total);
    out << line;
    std::snprintf(line, sizeof line, "%4s %7s %10s %6s  %-34s %s\n", "rank", "share", "total_us", "calls", "operator", "shapes");
    out << line;
    for (size_t i = 0; i < groups.size() && i < maxRows; ++i) {
        const auto &g = groups[i];
        const auto &c = w.calls.at(g.calls.front());
        std::string shapes;
        for (const auto &a : c.args)
            for (const auto &t : a.tensors) {
                std::string s;
                for (int64_t d : t.shape)
                    s += (s.empty() ? "" : "x") + std::to_string(d);
                shapes += (shapes.empty() ? "" : " ") + (s.empty() ? std::string("scalar") : s) + ":" + t.dtype;
            }
        std::snprintf(line, sizeof line, "%4zu %6.1f%% %10.1f %6zu  %-34s %s\n", i + 1, 100.0 * g.share, g.totalUs, g.calls.size(),
                      c.qualifiedName().c_str(), shapes.c_str());
        out << line;
    }
    if (groups.size() > maxRows)
        out << "... " << groups.size() - maxRows << " more call patterns\n";
    return out.str();
}

} // namespace kforge
