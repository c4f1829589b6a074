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
        m += "; x is [rows, cols] and row r of x adds mask row ((r / mblock) % (mrows / minner)) * minner + (r / mstep) % minner of "
             "the mask [mrows, cols] (the shape symbols minner, mstep, mblock say how the model's mask broadcasts over x's "
             "leading dimensions: a causal [q, k] mask has minner = mrows, mstep = mblock = 1, so row r takes mask row r % mrows)";
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
    if (op == "kforge::rms_norm_offset")
        return "xf = x.float(); y = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * (1.0 + weight.float())).type_as(x), eps "
               "the third reference argument: the product is taken in float32 and rounded to x's dtype once";
    if (op == "kforge::add_rms_norm_offset")
        return "h = x + residual (in x's dtype); xf = h.float(); y = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * (1.0 + "
               "weight.float())).type_as(h), eps the fourth reference argument; both h and y are outputs";
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
    // Prose wrapped at about 75 columns (the code view's width beside the tree), at spaces; a
    // program's lines kept as they are.
    const auto prose = [&](const std::string &text) {
        constexpr size_t kWidth = 72;
        size_t from = 0;
        while (text.size() - from > kWidth) {
            size_t cut = text.rfind(' ', from + kWidth);
            if (cut == std::string::npos || cut <= from)
                cut = from + kWidth;
            out += "// " + text.substr(from, cut - from) + "\n";
            from = text[cut] == ' ' ? cut + 1 : cut;
        }
        out += "// " + text.substr(from) + "\n";
    };
    const auto program = [&](const std::string &text) {
        size_t from = 0;
        for (size_t to; (to = text.find('\n', from)) != std::string::npos; from = to + 1)
            out += "// " + text.substr(from, to - from) + "\n";
        if (from < text.size())
            out += "// " + text.substr(from) + "\n";
    };
    if (card.atenOp.rfind("kforge::", 0) != 0)
        prose("The baseline: the ATen operator itself, called through the dispatcher.");
    else if (!card.definition.empty() || card.atenOp == "kforge::module")
        prose("The baseline: the problem's whole forward, its TorchScript module run as the model runs it.");
    else
        prose("The baseline: kforge's reference for " + card.atenOp + ", the ATen calls the model makes for it, in its dtypes.");
    prose(card.atenSchema);
    if (const auto meaning = operatorMeaning(card); !meaning.empty())
        prose("It computes: " + meaning);
    if (!card.definition.empty()) {
        out += "//\n";
        program(card.definition);
    }
    return out;
}

} // namespace kforge
