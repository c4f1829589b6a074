#include "ops/operator_meaning.h"

#include "ops/loss_ops.h"

namespace kforge {

namespace {

// The attention softmax chain in its form (softmaxForm): the scale's product or quotient, the mask, and
// with or without the float32 round trip.
std::string attentionMeaning(const OperatorCard &card, SoftmaxForm form)
{
    const bool masked = card.family == "scaled_masked_softmax";
    std::string s = form.divide ? "x / divisor" : "x * scale";
    if (masked)
        s += " + mask";
    std::string m = form.native ? "y = torch.softmax(" + s + ", dim=-1) with x, the scores and y in x's dtype (no float32 round trip)"
                                : "y = torch.softmax((" + s + ").float(), dim=-1).to(x.dtype)";
    m += std::string("; the ") + (form.divide ? "divisor" : "scale") + " is the second reference argument";
    if (form.traced)
        m += " (the model holds it as a 0-dim float64 tensor: the same value)";
    if (masked)
        m += "; x is [rows, cols] viewed as [rows / mrows, mrows, cols], and the mask [mrows, cols] is added to every "
             "[mrows, cols] slice (row r takes mask row r % mrows)";
    return m;
}

} // namespace

std::string operatorMeaning(const OperatorCard &card)
{
    if (const auto form = softmaxForm(card))
        return attentionMeaning(card, *form);
    const std::string &op = card.atenOp;
    if (op == "kforge::rms_norm_cast")
        return "xf = x.float(); y = weight * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype), eps the third "
               "reference argument: the normalized value is rounded to x's dtype before the weight multiplies it";
    if (op == "kforge::add_rms_norm_cast")
        return "h = x + residual (in x's dtype); xf = h.float(); y = weight * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + "
               "eps)).to(h.dtype), eps the fourth reference argument; both h and y are outputs";
    if (op == "kforge::rotary_embedding")
        return "q = x.transpose(1, 2) (x is [b, s, h, d], q [b, h, s, d]); y = q * cos + torch.cat([-q[..., half:], q[..., :half]], "
               "dim=-1) * sin, written contiguous [b, h, s, d]; half is the fourth reference argument; cos and sin broadcast over "
               "the heads";
    if (card.family == kTripletFamily)
        return "the mean over rows of max(margin + ||anchor - positive + eps||_2 - ||anchor - negative + eps||_2, 0), each norm over "
               "a row, eps " + std::to_string(kTripletEps) + "; per row: " + card.expression;
    if (!card.expression.empty()) {
        if (const auto reduction = lossReductionOf(card.family)) {
            const char *how = *reduction == LossReduction::Sum ? "the sum" : *reduction == LossReduction::BatchMean ? "the sum divided by rows"
                                                                                                                    : "the mean";
            return std::string(how) + " over every element of " + card.expression + " (one scalar out)";
        }
        return "elementwise, y = " + card.expression;
    }
    return "";
}

std::string baselineComment(const OperatorCard &card)
{
    std::string out;
    const auto line = [&](const std::string &text) {
        size_t from = 0;
        for (size_t to; (to = text.find('\n', from)) != std::string::npos; from = to + 1)
            out += "// " + text.substr(from, to - from) + "\n";
        if (from < text.size())
            out += "// " + text.substr(from) + "\n";
    };
    if (card.atenOp.rfind("kforge::", 0) != 0)
        line("The baseline: the ATen operator itself, called through the dispatcher.");
    else if (!card.definition.empty() || card.atenOp == "kforge::module")
        line("The baseline: the problem's whole forward, its TorchScript module run as the model runs it.");
    else
        line("The baseline: kforge's reference for " + card.atenOp + ", the ATen calls the model makes for it, in its dtypes.");
    line(card.atenSchema);
    if (const auto meaning = operatorMeaning(card); !meaning.empty())
        line("It computes: " + meaning);
    if (!card.definition.empty()) {
        out += "//\n";
        line(card.definition);
    }
    return out;
}

} // namespace kforge
