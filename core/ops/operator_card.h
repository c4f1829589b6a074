#pragma once
// An operator card describes one captured call pattern of a workload: what the operator is, the
// shapes it ran with, how to make inputs for it, how to check a candidate against the reference
// (the ATen operator itself, called through the dispatcher), and how many bytes and FLOPs it must
// at least cost, for the roofline.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kforge {

// Bool is a mask's element (one byte, 0 or 1), an input only.
enum class DType { F32, F16, BF16, F64, I64, I32, Bool };
std::string dtypeName(DType t);
DType dtypeFromName(const std::string &name);
int dtypeSize(DType t);

using ShapeBindings = std::map<std::string, int64_t>; // shape symbol -> extent

// The special trials (OperatorCard::specialInputs): rows partly -inf, as attention masks make them; a
// loss's class targets with the ignore index, and that index (ATen's default for cross entropy and NLL
// loss, which its cards keep).
inline constexpr const char *kMaskedRows = "masked_rows";
inline constexpr const char *kIgnoredTargets = "ignored_targets";
inline constexpr int64_t kIgnoreIndex = -100;

struct TensorSpec {
    std::string name;
    std::vector<std::string> dims; // shape symbols, resolved through ShapeBindings
    DType dtype = DType::F32;
    // How verification fills it: "randn" (normal, times the trial's scale), "randn_unscaled" (weights),
    // "index:<symbol>" (integers in [0, extent of symbol), e.g. class targets), "lognormal:<symbol>"
    // (random signs, magnitudes exp(N(0, scale^2 / extent)): a product over the symbol stays in range).
    // "causal_mask" (a 2-D attention mask: 0 on and below the diagonal, the dtype's lowest finite value above).
    // "positive" (uniform in [0.5, 1.5): a variance). "uniform" (uniform in [0, scale): a problem's input that
    // was never negative, so a forward through log or sqrt is defined on the trials).
    std::string init = "randn";
};

// How a correct result's rounding error grows, so the guard bounds it by what the operation does
// (core/guard/numerics.h): `exact` results must equal ATen's (max, argmax, ReLU); `pointwise` errors
// scale with the value and the output's typical size (activations); `norm` errors also carry the
// relative error of statistics reduced over many elements (softmax, layer, RMS and group norms, losses);
// `sum` errors scale with the sum of the magnitudes that went into each result (sums, means, scans).
enum class ErrorModel { Exact, Pointwise, Normalization, Sum };
std::string errorModelName(ErrorModel m);
ErrorModel errorModelFromName(const std::string &name);

struct OperatorCard {
    std::string key;    // unique within a workload, e.g. "softmax.lastdim.f32"
    std::string family; // template family: "softmax", "log_softmax", ...
    std::string atenSchema;
    std::string atenOp;       // dispatcher name, e.g. "aten::_softmax"
    std::string atenOverload; // "" for the default overload
    // Reference call arguments, in schema order: {"input": i}, {"int": v}, {"bool": v}, {"double": v},
    // {"str": s}, {"int_list": [..]}, {"sym_list": ["cols"]} (extents of shape symbols) or {"none": true}.
    // An atenOp of the form "kforge::name" is a composite the worker computes from ATen operators,
    // for operators this libtorch lacks as one op (rms_norm before 2.4, fused add-and-activate).
    nlohmann::json referenceArgs = nlohmann::json::array();
    std::vector<TensorSpec> inputs;
    std::vector<TensorSpec> outputs;
    ShapeBindings shape;                    // the shape captured from the workload
    std::vector<ShapeBindings> heldOutShapes; // other shapes the kernel must also handle
    // (a, b): the operator is defined only where symbol a's extent is a multiple of b's (a group norm's
    // channels of its groups). makeCard refuses other shapes, and a pack's guard leaves such calls to
    // the original operator, which raises its own error, instead of running the kernel on them.
    std::vector<std::pair<std::string, std::string>> multiples;
    std::vector<double> inputScales{1.0, 8.0, 64.0}; // inputs are randn * scale, one trial each
    ErrorModel errorModel = ErrorModel::Pointwise;
    std::vector<std::string> invariants; // e.g. "rows_sum_to_one"
    // Extra trials on inputs with values the operator defines behaviour for: kMaskedRows puts -inf
    // in about a quarter of each row (attention masks), keeping the first column finite;
    // kIgnoredTargets sets about one in eight of the index inputs to kIgnoreIndex (a language model's
    // padded labels), keeping the first.
    std::vector<std::string> specialInputs;
    double flopsPerElement = 0;          // of the first output
    int64_t calls = 1;                   // how often the workload ran it
    double workloadMs = 0;               // total time the workload spent in it
    // The real inputs of the workload's first call of this pattern: buffers <prefix>0, <prefix>1, ... of
    // the TorchScript container `capturedFile` (WORKLOAD.samples.pt), one per input. When set, every
    // candidate is also verified on them (trial "captured inputs").
    std::string capturedFile, capturedPrefix;
    // What a pointwise card computes per element, over its input names (core/ops/expression.h, e.g.
    // "x * sigmoid(x)"); the pointwise templates render it. "" for other cards.
    std::string expression;
    // The program that defines the operator where no name can (a KernelBench-style problem's Python
    // source, for its cards whose reference is the whole forward); shown to an LLM proposer. "" otherwise.
    std::string definition;

    int64_t numel(const TensorSpec &t, const ShapeBindings &s) const;
    std::vector<int64_t> sizes(const TensorSpec &t, const ShapeBindings &s) const;
    // The fewest bytes any implementation must move: every input read once, every output written once.
    double minBytes(const ShapeBindings &s) const;
    double flops(const ShapeBindings &s) const;
};

void to_json(nlohmann::json &j, const OperatorCard &c);
void from_json(const nlohmann::json &j, OperatorCard &c);

// Cards for the families kforge knows, at a given shape and dtype. Throws Error for an unknown family
// or a shape missing one of the family's symbols.
std::vector<std::string> cardFamilies();
OperatorCard makeCard(const std::string &family, const ShapeBindings &shape, DType dtype = DType::F32);
// The extent of a family's shape symbol, or an Error naming the family and the missing symbol.
int64_t needSymbol(const ShapeBindings &s, const char *sym, const std::string &family);
// The card every row-wise family starts from: x[rows, cols] in, y[rows, cols] out, held-out shapes.
OperatorCard rowwiseCard(const std::string &family, const ShapeBindings &shape, DType dtype);
// Families over a middle dimension (named <op>_dim) take their input as an [outer, dim, inner] view and
// reduce or normalize along dim; dimView gives that view of a tensor around its dimension d.
bool dimFamily(const std::string &family);
ShapeBindings dimView(const std::vector<int64_t> &shape, size_t d);
// Families over [n, c, hw] with no other symbol (instance norm, the batch norms): statistics per row
// n * c or per channel c.
bool nchwFamily(const std::string &family);
// Whether the shape keeps every (a, b) of card.multiples: a's extent a multiple of b's, b at least 1.
bool keepsMultiples(const OperatorCard &card, const ShapeBindings &shape);
// Every extent the card's tensors use, at its shape and each held-out shape, is at least 1, and each
// tensor's bytes fit a 64-bit count: otherwise an Error names the tensor and the symbol. makeCard and a
// card read from JSON pass it.
void checkExtents(const OperatorCard &card);
// "rows=4096,cols=1024" -> bindings; throws Error saying what is malformed.
ShapeBindings parseShape(const std::string &text);
// bindings -> "cols=1024,rows=4096" (parseShape's form; `separator` ", " for prose)
std::string shapeText(const ShapeBindings &shape, const std::string &separator = ",");
OperatorCard makeSoftmaxCard(int64_t rows, int64_t cols, DType dtype = DType::F32);
// The forms of the attention softmax chain's operator (runtime/fused_ops.h): kforge::<family> with its
// casts; `native`, without casts in x's own dtype (a model that computes in one dtype),
// kforge::<family>_native[_div][_traced]: `divide` for `x / scale` (BERT's `/ math.sqrt(d)`), `traced`
// for the scale a 0-dim float64 tensor, as a trace keeps it.
struct SoftmaxForm {
    bool native = false;
    bool divide = false;
    bool traced = false;
};
// Makes a scaled_softmax or scaled_masked_softmax card's operator the native `form`: the family, its
// templates and its checks stay; only what the pack stands in front of changes. Refuses another family
// or a form that is not native.
void useNativeOperator(OperatorCard &card, SoftmaxForm form = {true, false, false});
// The form of an attention softmax card's operator, from its name; nullopt for any other card.
std::optional<SoftmaxForm> softmaxForm(const OperatorCard &card);
// What the chain multiplies x by: the card's scale (its second reference argument), or 1 / it where the
// form divides. The kernels multiply, as the chains with casts do; a quotient differs by one rounding.
double softmaxMultiplier(const OperatorCard &card);

} // namespace kforge
