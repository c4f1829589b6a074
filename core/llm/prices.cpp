#include "llm/prices.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace kforge::llm {

PriceTable PriceTable::builtin()
{
    return fromJson(nlohmann::json::parse(builtinPricesJson()), "the built-in price table");
}

std::string PriceTable::userFile()
{
    if (const char *x = std::getenv("XDG_CONFIG_HOME"); x && *x)
        return std::string(x) + "/kforge/prices.json";
    if (const char *h = std::getenv("HOME"); h && *h)
        return std::string(h) + "/.config/kforge/prices.json";
    return {};
}

PriceTable PriceTable::load()
{
    auto table = builtin();
    const auto path = userFile();
    if (path.empty())
        return table;
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return table;
    std::stringstream ss;
    ss << in.rdbuf();
    nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
    if (j.is_discarded())
        throw Error("the price table '" + path + "' is not valid JSON");
    table.overlay(fromJson(j, "the price table '" + path + "'"));
    return table;
}

PriceTable PriceTable::fromJson(const nlohmann::json &j, const std::string &origin)
{
    PriceTable t;
    if (!j.is_object() || !j.contains("providers") || !j["providers"].is_object())
        throw Error(origin + " needs a \"providers\" object of provider -> model -> {\"input\": X, \"output\": Y}");
    if (j.contains("currency") && j["currency"].is_string())
        t.m_currency = j["currency"].get<std::string>();
    for (const auto &[provider, models] : j["providers"].items()) {
        if (!models.is_object())
            throw Error(origin + ": the provider '" + provider + "' needs an object of models");
        for (const auto &[model, p] : models.items()) {
            if (!p.is_object() || !p.contains("input") || !p.contains("output") || !p["input"].is_number() || !p["output"].is_number()
                || p["input"].get<double>() < 0 || p["output"].get<double>() < 0)
                throw Error(origin + ": " + provider + "/" + model + " needs non-negative numbers \"input\" and \"output\" (per million tokens)");
            t.m_prices[provider][model] = {p["input"].get<double>(), p["output"].get<double>()};
        }
    }
    return t;
}

void PriceTable::overlay(const PriceTable &other)
{
    for (const auto &[provider, models] : other.m_prices)
        for (const auto &[model, price] : models)
            m_prices[provider][model] = price;
    m_currency = other.m_currency;
}

std::optional<Price> PriceTable::find(const std::string &provider, const std::string &model) const
{
    auto p = m_prices.find(provider);
    if (p == m_prices.end())
        return std::nullopt;
    if (auto m = p->second.find(model); m != p->second.end())
        return m->second;
    std::optional<Price> best;
    size_t bestLen = 0;
    for (const auto &[pattern, price] : p->second) {
        if (pattern.empty() || pattern.back() != '*')
            continue;
        const auto prefix = std::string_view(pattern).substr(0, pattern.size() - 1);
        if (model.compare(0, prefix.size(), prefix) == 0 && (!best || prefix.size() >= bestLen)) {
            best = price;
            bestLen = prefix.size();
        }
    }
    return best;
}

} // namespace kforge::llm
