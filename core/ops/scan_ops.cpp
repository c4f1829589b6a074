#include "ops/scan_ops.h"

namespace kforge {

namespace {
using J = nlohmann::json;
}

const std::vector<ScanOp> &scanOps()
{
    static const std::vector<ScanOp> ops = {
        {"cumsum", false, false, false, false, false, "aten::cumsum", "aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
         "inclusive sum"},
        {"cumprod", true, false, false, false, false, "aten::cumprod", "aten::cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
         "inclusive product"},
        {"cumsum_reverse", false, true, false, false, false, "kforge::cumsum_reverse",
         "cumsum_reverse(Tensor x) -> Tensor  (x.flip(-1).cumsum(-1).flip(-1): y[i] = sum of x[i:])", "inclusive sum from the row's end"},
        {"cumsum_exclusive", false, false, true, false, false, "kforge::cumsum_exclusive",
         "cumsum_exclusive(Tensor x) -> Tensor  (cat(zeros, x[..., :-1].cumsum(-1)): y[i] = sum of x[:i])", "exclusive sum"},
        {"masked_cumsum", false, false, false, true, false, "kforge::masked_cumsum",
         "masked_cumsum(Tensor x, Tensor mask) -> Tensor  ((x * mask).cumsum(-1), mask bool)", "inclusive sum of x * mask"},
        {"weighted_cumsum", false, false, false, true, true, "kforge::weighted_cumsum",
         "weighted_cumsum(Tensor x, Tensor w) -> Tensor  ((x * w).cumsum(-1), w of x's dtype: a float mask)", "inclusive sum of x * w"},
    };
    return ops;
}

const ScanOp *findScanOp(const std::string &family)
{
    for (const auto &op : scanOps())
        if (op.family == family)
            return &op;
    return nullptr;
}

OperatorCard scanFamilyCard(const ScanOp &op, const ShapeBindings &shape, DType dtype)
{
    auto c = rowwiseCard(op.family, shape, dtype);
    if (op.masked)
        c.inputs.push_back({op.weighted ? "w" : "mask", {"rows", "cols"}, op.weighted ? dtype : DType::Bool});
    c.atenSchema = op.schema;
    c.atenOp = op.atenOp;
    c.referenceArgs = J::array({{{"input", 0}}});
    if (op.masked)
        c.referenceArgs.push_back({{"input", 1}});
    if (op.atenOp.rfind("aten::", 0) == 0)
        c.referenceArgs = J::array({{{"input", 0}}, {{"int", -1}}, {{"none", true}}});
    // A scan's rounding error grows with the sum of the magnitudes before each element; a product's
    // with the product of the magnitudes, which the same model gives from the reference over |x|.
    c.errorModel = ErrorModel::Sum;
    c.flopsPerElement = op.masked ? 2 : 1;
    if (op.product) {
        // A product of randn values over thousands of terms under- or overflows float32 partway (of
        // uniform [0, 1) values, to zero within a few hundred), where every result is within an absolute
        // bound of zero and nothing relative is checked. Log-normal values around +-1 with the spread of
        // log|x| shrunk by sqrt(cols) keep every partial product near exp(+-scale).
        c.inputs.front().init = "lognormal:cols";
        c.inputScales = {1.0, 4.0};
    }
    return c;
}

} // namespace kforge
