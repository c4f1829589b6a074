#include "util/options.h"

#include <cstdlib>

#include "util/error.h"

namespace kforge {

int wholeNumber(const std::map<std::string, std::string> &o, const std::string &k, int def, int min, int max)
{
    auto it = o.find(k);
    if (it == o.end())
        return def;
    const auto &t = it->second;
    char *end = nullptr;
    const long v = std::strtol(t.c_str(), &end, 10);
    if (t.empty() || *end != '\0' || v < min || v > max)
        throw Error("option " + k + " takes a whole number from " + std::to_string(min) + " to " + std::to_string(max) + ", not '" + t + "'");
    return int(v);
}

} // namespace kforge
