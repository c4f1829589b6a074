#include "knowledge/signature.h"

#include <cmath>
#include <limits>

#include "util/error.h"
#include "util/hash.h"

namespace kforge::knowledge {

std::string operatorSignature(const OperatorCard &card)
{
    std::string s = card.atenOp + (card.atenOverload.empty() ? "" : "." + card.atenOverload) + "(";
    for (size_t i = 0; i < card.inputs.size(); ++i) {
        const auto &t = card.inputs[i];
        s += (i ? ", " : "") + dtypeName(t.dtype) + "[";
        for (size_t d = 0; d < t.dims.size(); ++d)
            s += (d ? "," : "") + t.dims[d];
        s += "]";
    }
    s += ")";
    const std::string shape = shapeText(card.shape);
    if (!shape.empty())
        s += " " + shape;
    return s + " #" + contentHash(card.referenceArgs.dump()).substr(0, 8);
}

std::optional<SignatureParts> splitSignature(const std::string &signature)
{
    const auto hash = signature.rfind(" #");
    const auto close = signature.rfind(')', hash);
    if (hash == std::string::npos || close == std::string::npos)
        return std::nullopt;
    SignatureParts parts;
    parts.op = signature.substr(0, close + 1) + signature.substr(hash);
    std::string shape = signature.substr(close + 1, hash - close - 1);
    if (!shape.empty() && shape.front() == ' ')
        shape.erase(0, 1);
    try {
        parts.shape = parseShape(shape);
    } catch (const Error &) {
        return std::nullopt;
    }
    return parts;
}

double shapeDistance(const std::map<std::string, int64_t> &a, const std::map<std::string, int64_t> &b)
{
    constexpr double kApart = std::numeric_limits<double>::infinity();
    if (a.size() != b.size())
        return kApart;
    double d = 0;
    for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
        if (i->first != j->first || i->second <= 0 || j->second <= 0)
            return kApart;
        d += std::abs(std::log(double(i->second) / double(j->second)));
    }
    return d;
}

} // namespace kforge::knowledge
