#include "ops/launch_comment.h"

#include <cctype>

#include "util/error.h"

namespace kforge {

std::optional<nlohmann::json> launchPlanFromComment(std::string_view source)
{
    static constexpr std::string_view kTag = "kforge-launch";
    for (size_t at = source.find("/*"); at != std::string_view::npos; at = source.find("/*", at + 2)) {
        size_t p = at + 2;
        while (p < source.size() && std::isspace(static_cast<unsigned char>(source[p])))
            ++p;
        if (source.substr(p, kTag.size()) != kTag)
            continue;
        p += kTag.size();
        const auto end = source.find("*/", p);
        if (end == std::string_view::npos)
            throw Error("the /* kforge-launch ... */ comment is not closed");
        nlohmann::json plan;
        try {
            plan = nlohmann::json::parse(source.substr(p, end - p));
        } catch (const nlohmann::json::exception &e) {
            throw Error(std::string("the /* kforge-launch ... */ comment does not hold valid JSON: ") + e.what());
        }
        if (!plan.is_object())
            throw Error(std::string("the /* kforge-launch ... */ comment must hold a JSON object (a launch plan), not ")
                        + plan.type_name());
        return plan;
    }
    return std::nullopt;
}

} // namespace kforge
