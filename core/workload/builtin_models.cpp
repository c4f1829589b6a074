#include "workload/builtin_models.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "util/error.h"

namespace kforge {

namespace {

using Options = std::map<std::string, std::string>;

const std::vector<std::string> kModelDtypes = {"float32", "float16", "bfloat16"};

BuiltinOption intOption(const char *name, const char *def, int64_t min, int64_t max, const char *help)
{
    return {name, "int", def, min, max, help};
}
BuiltinOption dtypeOption()
{
    return {"dtype", "dtype", "float32", 0, 0, "float32, float16 or bfloat16: parameters, buffers and inputs"};
}
BuiltinOption seedOption()
{
    return intOption("seed", "0", 0, int64_t(1) << 53, "seed of the random weights and inputs");
}
BuiltinOption presetOption(const char *help)
{
    return {"preset", "preset", "small", 0, 0, help};
}

// "{B}" -> value, for every key of `values`.
std::string fill(std::string text, const std::map<std::string, std::string> &values)
{
    for (const auto &[k, v] : values) {
        const auto key = "{" + k + "}";
        for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + v.size()))
            text.replace(at, key.size(), v);
    }
    return text;
}

std::string real(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    std::string s = buf;
    if (s.find_first_of(".e") == std::string::npos)
        s += ".0";
    return s;
}

int64_t num(const Options &o, const std::string &k)
{
    return std::stoll(o.at(k));
}

// The initializer range Llama, Qwen and diffusion models use for their projections.
const char *kLinearInit = "normal:0.02";

// --- Llama/Qwen-style decoder block -------------------------------------------------------------

const char *kDecoderSource = R"(
def rms_norm(self, x, w):
    xf = x.float()
    var = xf.pow(2).mean(-1, True)
    xf = xf * torch.rsqrt(var + {EPS})
    return w * xf.to(x.dtype)

def rotate_half(self, x):
    x1 = x[..., :{HALF}]
    x2 = x[..., {HALF}:]
    return torch.cat([-x2, x1], -1)

def forward(self, x):
    residual = x
    h = self.rms_norm(x, self.input_norm)
    q = torch.linear(h, self.q_proj).view({B}, {S}, {NH}, {HD}).transpose(1, 2)
    k = torch.linear(h, self.k_proj).view({B}, {S}, {NH}, {HD}).transpose(1, 2)
    v = torch.linear(h, self.v_proj).view({B}, {S}, {NH}, {HD}).transpose(1, 2)
    q = q * self.rope_cos + self.rotate_half(q) * self.rope_sin
    k = k * self.rope_cos + self.rotate_half(k) * self.rope_sin
    s = torch.matmul(q, k.transpose(2, 3)) * {SCALE}
    s = s + self.causal_mask
    p = torch.softmax(s.float(), -1).to(q.dtype)
    o = torch.matmul(p, v).transpose(1, 2).reshape({B}, {S}, {H})
    h = residual + torch.linear(o, self.o_proj)
    m = self.rms_norm(h, self.post_norm)
    m = torch.silu(torch.linear(m, self.gate_proj)) * torch.linear(m, self.up_proj)
    return h + torch.linear(m, self.down_proj)
)";

void buildDecoder(BuiltinModel &m)
{
    const auto &o = m.options;
    const int64_t b = num(o, "batch"), s = num(o, "seq"), h = num(o, "hidden"), nh = num(o, "heads"), im = num(o, "intermediate");
    if (h % nh != 0)
        throw Error("decoder: option heads=" + std::to_string(nh) + " does not divide hidden=" + std::to_string(h));
    const int64_t hd = h / nh;
    if (hd % 2 != 0)
        throw Error("decoder: the head size hidden/heads = " + std::to_string(hd) + " must be even for the rotary embedding");
    m.source = fill(kDecoderSource, {{"B", std::to_string(b)}, {"S", std::to_string(s)}, {"H", std::to_string(h)},
                                     {"NH", std::to_string(nh)}, {"HD", std::to_string(hd)}, {"HALF", std::to_string(hd / 2)},
                                     {"SCALE", real(1.0 / std::sqrt(double(hd)))}, {"EPS", real(1e-6)}});
    const auto theta = o.at("rope_theta");
    m.tensors = {{"input_norm", {h}, "ones"},
                 {"q_proj", {h, h}, kLinearInit},
                 {"k_proj", {h, h}, kLinearInit},
                 {"v_proj", {h, h}, kLinearInit},
                 {"o_proj", {h, h}, kLinearInit},
                 {"post_norm", {h}, "ones"},
                 {"gate_proj", {im, h}, kLinearInit},
                 {"up_proj", {im, h}, kLinearInit},
                 {"down_proj", {h, im}, kLinearInit},
                 {"rope_cos", {s, hd}, "rope_cos:" + theta, true},
                 {"rope_sin", {s, hd}, "rope_sin:" + theta, true},
                 {"causal_mask", {s, s}, "causal_mask", true}};
    m.inputs = {{{b, s, h}, m.dtype, "randn"}};
}

// --- diffusion UNet-style block: a ResNet block (GroupNorm, SiLU, 3x3 convolutions) and self-attention -----

const char *kDiffusionSource = R"(
def forward(self, x):
    h = torch.group_norm(x, {G}, self.norm1_weight, self.norm1_bias, 1e-05, True)
    h = torch.conv2d(torch.silu(h), self.conv1_weight, self.conv1_bias, [1, 1], [1, 1])
    h = torch.group_norm(h, {G}, self.norm2_weight, self.norm2_bias, 1e-05, True)
    h = torch.conv2d(torch.silu(h), self.conv2_weight, self.conv2_bias, [1, 1], [1, 1])
    x = x + h
    a = torch.group_norm(x, {G}, self.attn_norm_weight, self.attn_norm_bias, 1e-05, True)
    a = a.view({B}, {C}, {HW}).transpose(1, 2)
    q = torch.linear(a, self.q_weight, self.q_bias).view({B}, {HW}, {NH}, {HD}).transpose(1, 2)
    k = torch.linear(a, self.k_weight, self.k_bias).view({B}, {HW}, {NH}, {HD}).transpose(1, 2)
    v = torch.linear(a, self.v_weight, self.v_bias).view({B}, {HW}, {NH}, {HD}).transpose(1, 2)
    s = torch.matmul(q, k.transpose(2, 3)) * {SCALE}
    p = torch.softmax(s.float(), -1).to(q.dtype)
    o = torch.matmul(p, v).transpose(1, 2).reshape({B}, {HW}, {C})
    o = torch.linear(o, self.out_weight, self.out_bias).transpose(1, 2).reshape({B}, {C}, {SIZE}, {SIZE})
    return x + o
)";

void buildDiffusion(BuiltinModel &m)
{
    const auto &o = m.options;
    const int64_t b = num(o, "batch"), c = num(o, "channels"), size = num(o, "size"), g = num(o, "groups"), nh = num(o, "heads");
    if (c % g != 0)
        throw Error("diffusion: option groups=" + std::to_string(g) + " does not divide channels=" + std::to_string(c));
    if (c % nh != 0)
        throw Error("diffusion: option heads=" + std::to_string(nh) + " does not divide channels=" + std::to_string(c));
    const int64_t hd = c / nh;
    m.source = fill(kDiffusionSource, {{"B", std::to_string(b)}, {"C", std::to_string(c)}, {"G", std::to_string(g)},
                                       {"HW", std::to_string(size * size)}, {"SIZE", std::to_string(size)}, {"NH", std::to_string(nh)},
                                       {"HD", std::to_string(hd)}, {"SCALE", real(1.0 / std::sqrt(double(hd)))}});
    const auto conv = "normal:" + real(std::sqrt(2.0 / double(c * 9)));
    m.tensors = {{"norm1_weight", {c}, "ones"}, {"norm1_bias", {c}, "zeros"},
                 {"conv1_weight", {c, c, 3, 3}, conv}, {"conv1_bias", {c}, "zeros"},
                 {"norm2_weight", {c}, "ones"}, {"norm2_bias", {c}, "zeros"},
                 {"conv2_weight", {c, c, 3, 3}, conv}, {"conv2_bias", {c}, "zeros"},
                 {"attn_norm_weight", {c}, "ones"}, {"attn_norm_bias", {c}, "zeros"}};
    for (const char *p : {"q", "k", "v", "out"}) {
        m.tensors.push_back({std::string(p) + "_weight", {c, c}, kLinearInit});
        m.tensors.push_back({std::string(p) + "_bias", {c}, "zeros"});
    }
    m.inputs = {{{b, c, size, size}, m.dtype, "randn"}};
}

// --- ResNet-50 (torchvision's v1.5: the stride on the 3x3 convolution), batch norm in eval mode -----------

void buildResnet50(BuiltinModel &m)
{
    const auto &o = m.options;
    const int64_t b = num(o, "batch"), size = num(o, "size"), classes = num(o, "classes");
    if (size % 32 != 0)
        throw Error("resnet50: option size=" + std::to_string(size) + " must be a multiple of 32 (five stride-2 stages)");
    std::string src = R"(
def bn(self, x, w, b, mean, var):
    return torch.batch_norm(x, w, b, mean, var, False, 0.1, 1e-05, True)

def forward(self, x):
    x = torch.relu(self.bn(torch.conv2d(x, self.conv1, None, [2, 2], [3, 3]), self.bn1_w, self.bn1_b, self.bn1_m, self.bn1_v))
    x = torch.max_pool2d(x, [3, 3], [2, 2], [1, 1])
)";
    auto addBn = [&](const std::string &name, int64_t ch) {
        m.tensors.push_back({name + "_w", {ch}, "ones"});
        m.tensors.push_back({name + "_b", {ch}, "zeros"});
        m.tensors.push_back({name + "_m", {ch}, "zeros", true});
        m.tensors.push_back({name + "_v", {ch}, "ones", true});
    };
    auto addConv = [&](const std::string &name, int64_t out, int64_t in, int64_t k) {
        m.tensors.push_back({name, {out, in, k, k}, "normal:" + real(std::sqrt(2.0 / double(out * k * k)))});
    };
    auto bnCall = [](const std::string &n) { return "self." + n + "_w, self." + n + "_b, self." + n + "_m, self." + n + "_v"; };
    addConv("conv1", 64, 3, 7);
    addBn("bn1", 64);
    int64_t in = 64;
    const int64_t blocks[4] = {3, 4, 6, 3}, widths[4] = {64, 128, 256, 512};
    for (int layer = 0; layer < 4; ++layer)
        for (int64_t i = 0; i < blocks[layer]; ++i) {
            const auto p = "l" + std::to_string(layer + 1) + "_" + std::to_string(i);
            const int64_t w = widths[layer], out = w * 4, stride = (i == 0 && layer > 0) ? 2 : 1;
            const auto st = "[" + std::to_string(stride) + ", " + std::to_string(stride) + "]";
            addConv(p + "_conv1", w, in, 1);
            addBn(p + "_bn1", w);
            addConv(p + "_conv2", w, w, 3);
            addBn(p + "_bn2", w);
            addConv(p + "_conv3", out, w, 1);
            addBn(p + "_bn3", out);
            src += "    y = torch.relu(self.bn(torch.conv2d(x, self." + p + "_conv1, None, [1, 1], [0, 0]), " + bnCall(p + "_bn1") + "))\n";
            src += "    y = torch.relu(self.bn(torch.conv2d(y, self." + p + "_conv2, None, " + st + ", [1, 1]), " + bnCall(p + "_bn2") + "))\n";
            src += "    y = self.bn(torch.conv2d(y, self." + p + "_conv3, None, [1, 1], [0, 0]), " + bnCall(p + "_bn3") + ")\n";
            if (i == 0) {
                addConv(p + "_down", out, in, 1);
                addBn(p + "_dbn", out);
                src += "    x = self.bn(torch.conv2d(x, self." + p + "_down, None, " + st + ", [0, 0]), " + bnCall(p + "_dbn") + ")\n";
            }
            src += "    x = torch.relu(y + x)\n";
            in = out;
        }
    src += "    x = torch.adaptive_avg_pool2d(x, [1, 1]).flatten(1)\n";
    src += "    return torch.linear(x, self.fc_w, self.fc_b)\n";
    m.tensors.push_back({"fc_w", {classes, in}, "normal:0.01"});
    m.tensors.push_back({"fc_b", {classes}, "zeros"});
    m.source = src;
    m.inputs = {{{b, 3, size, size}, m.dtype, "randn"}};
}

struct Builder {
    BuiltinModelInfo info;
    void (*build)(BuiltinModel &);
};

const std::vector<Builder> &builders()
{
    static const std::vector<Builder> b = {
        {{"decoder",
          "a Llama/Qwen-style decoder block: RMSNorm, rotary embedding, causal attention with an explicit softmax upcast to "
          "float32, gated SiLU MLP, residuals",
          {presetOption("small (CPU-sized, the default) or h200 (bfloat16, batch 8, seq 2048, hidden 4096, heads 32, "
                        "intermediate 11008)"),
           intOption("batch", "2", 1, 4096, "sequences"), intOption("seq", "64", 1, 131072, "tokens per sequence"),
           intOption("hidden", "256", 2, 65536, "model width"), intOption("heads", "4", 1, 1024, "attention heads (dividing hidden)"),
           intOption("intermediate", "688", 1, 262144, "MLP width"), intOption("rope_theta", "10000", 1, 100000000, "rotary base"),
           dtypeOption(), seedOption()},
          {{"small", {}},
           {"h200", {{"batch", "8"}, {"seq", "2048"}, {"hidden", "4096"}, {"heads", "32"}, {"intermediate", "11008"}, {"dtype", "bfloat16"}}}}},
         &buildDecoder},
        {{"diffusion",
          "a diffusion UNet-style block: GroupNorm, SiLU and 3x3 convolutions in a residual block, then GroupNorm and "
          "self-attention over the pixels",
          {presetOption("small (the default) or h200 (bfloat16, batch 8, 320 channels, 64x64, 32 groups, 8 heads)"),
           intOption("batch", "2", 1, 4096, "images"), intOption("channels", "64", 1, 8192, "channels"),
           intOption("size", "16", 1, 1024, "height and width"), intOption("groups", "32", 1, 8192, "GroupNorm groups (dividing channels)"),
           intOption("heads", "1", 1, 1024, "attention heads (dividing channels)"), dtypeOption(), seedOption()},
          {{"small", {}},
           {"h200", {{"batch", "8"}, {"channels", "320"}, {"size", "64"}, {"groups", "32"}, {"heads", "8"}, {"dtype", "bfloat16"}}}}},
         &buildDiffusion},
        {{"resnet50", "ResNet-50 (torchvision v1.5 layout, batch norm in eval mode)",
          {presetOption("small (the default: batch 1, 64x64) or h200 (bfloat16, batch 32, 224x224)"),
           intOption("batch", "1", 1, 4096, "images"), intOption("size", "64", 32, 2048, "height and width (a multiple of 32)"),
           intOption("classes", "1000", 1, 1000000, "classifier outputs"), dtypeOption(), seedOption()},
          {{"small", {}}, {"h200", {{"batch", "32"}, {"size", "224"}, {"dtype", "bfloat16"}}}}},
         &buildResnet50},
    };
    return b;
}

const Builder &builderFor(const std::string &name)
{
    std::string known;
    for (const auto &b : builders()) {
        if (b.info.name == name)
            return b;
        known += (known.empty() ? "" : ", ") + b.info.name;
    }
    throw Error("no built-in model '" + name + "' (the built-in models are " + known + ")");
}

std::string optionNames(const BuiltinModelInfo &info)
{
    std::string s;
    for (const auto &o : info.options)
        s += (s.empty() ? "" : ", ") + o.name;
    return s;
}

const BuiltinOption &optionOf(const BuiltinModelInfo &info, const std::string &name)
{
    for (const auto &o : info.options)
        if (o.name == name)
            return o;
    throw Error(info.name + ": no option '" + name + "' (its options are " + optionNames(info) + ")");
}

std::string checked(const BuiltinModelInfo &info, const BuiltinOption &o, const std::string &value)
{
    if (o.kind == "int") {
        int64_t v = 0;
        const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
        if (ec != std::errc() || p != value.data() + value.size() || v < o.min || v > o.max)
            throw Error(info.name + ": option " + o.name + " takes a whole number from " + std::to_string(o.min) + " to "
                        + std::to_string(o.max) + ", not '" + value + "'");
        return std::to_string(v);
    }
    if (o.kind == "dtype") {
        for (const auto &d : kModelDtypes)
            if (d == value)
                return value;
        throw Error(info.name + ": option dtype takes float32, float16 or bfloat16, not '" + value + "'");
    }
    if (!info.presets.count(value)) {
        std::string names;
        for (const auto &[k, v] : info.presets)
            names += (names.empty() ? "" : " or ") + k;
        throw Error(info.name + ": option preset takes " + names + ", not '" + value + "'");
    }
    return value;
}

} // namespace

const std::vector<BuiltinModelInfo> &builtinModels()
{
    static const std::vector<BuiltinModelInfo> infos = [] {
        std::vector<BuiltinModelInfo> v;
        for (const auto &b : builders())
            v.push_back(b.info);
        return v;
    }();
    return infos;
}

const BuiltinModelInfo &builtinModelInfo(const std::string &name)
{
    return builderFor(name).info;
}

int64_t BuiltinModel::elements(bool parametersOnly) const
{
    int64_t n = 0;
    for (const auto &t : tensors)
        if (!parametersOnly || !t.buffer) {
            int64_t e = 1;
            for (int64_t d : t.shape)
                e *= d;
            n += e;
        }
    return n;
}

int64_t BuiltinModel::parameterCount() const
{
    return elements(true);
}

std::string BuiltinModel::summary() const
{
    std::string s = name;
    for (const auto &[k, v] : options)
        s += " " + k + "=" + v;
    return s;
}

BuiltinModel makeBuiltinModel(const std::string &name, const Options &given)
{
    const auto &b = builderFor(name);
    const auto &info = b.info;
    BuiltinModel m;
    m.name = name;
    for (const auto &o : info.options)
        m.options[o.name] = o.defaultValue;
    const auto preset = given.count("preset") ? checked(info, optionOf(info, "preset"), given.at("preset")) : std::string("small");
    for (const auto &[k, v] : info.presets.at(preset))
        m.options[k] = v;
    for (const auto &[k, v] : given)
        m.options[k] = checked(info, optionOf(info, k), v);
    m.dtype = m.options.at("dtype");
    m.seed = uint64_t(std::stoll(m.options.at("seed")));
    b.build(m);
    return m;
}

Options parseBuiltinOptions(const std::string &model, const std::vector<std::string> &words)
{
    const auto &info = builtinModelInfo(model);
    Options out;
    for (size_t i = 0; i < words.size(); ++i) {
        const auto &w = words[i];
        if (w.rfind("--", 0) != 0 || w.size() < 3)
            throw Error(model + ": '" + w + "' is not an option (options are --NAME=VALUE: " + optionNames(info) + ")");
        auto eq = w.find('=');
        std::string key = w.substr(2, eq == std::string::npos ? std::string::npos : eq - 2), value;
        optionOf(info, key);
        if (eq != std::string::npos) {
            value = w.substr(eq + 1);
        } else {
            if (i + 1 >= words.size() || words[i + 1].rfind("--", 0) == 0)
                throw Error(model + ": option " + key + " needs a value (--" + key + "=VALUE)");
            value = words[++i];
        }
        if (value.empty())
            throw Error(model + ": option " + key + " needs a value, not an empty string");
        if (out.count(key))
            throw Error(model + ": option " + key + " is given twice");
        out[key] = value;
    }
    return out;
}

std::string builtinModelsHelp()
{
    std::string s;
    for (const auto &info : builtinModels()) {
        s += info.name + ": " + info.description + "\n";
        for (const auto &o : info.options) {
            std::string range = o.kind == "int" ? " (" + std::to_string(o.min) + ".." + std::to_string(o.max) + ")" : "";
            s += "    --" + o.name + "=" + o.defaultValue + range + "  " + o.help + "\n";
        }
    }
    return s;
}

} // namespace kforge
