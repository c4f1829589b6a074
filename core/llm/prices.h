#pragma once
// What a call costs: money per million input and output tokens for each provider and model. The table
// ships in resources/llm/prices.json (compiled in, so an installed kforge has it); a user's copy at
// $XDG_CONFIG_HOME/kforge/prices.json (~/.config/kforge/prices.json) is laid over it, entry by entry.
// A model matches its exact name, else the longest pattern ending in '*' that is a prefix of it.
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "llm/client.h"

namespace kforge::llm {

struct Price {
    double inputPerMillion = 0;
    double outputPerMillion = 0;
    double cost(const Usage &u) const { return (double(u.inputTokens) * inputPerMillion + double(u.outputTokens) * outputPerMillion) / 1e6; }
};

class PriceTable {
public:
    PriceTable() = default;
    // The shipped table with the user's file laid over it (when it exists). Throws Error naming the
    // file when the user's copy is not a valid table.
    static PriceTable load();
    static PriceTable builtin();
    static std::string userFile(); // where the user's copy is looked for
    // Throws Error saying what is wrong (with `origin` in the message).
    static PriceTable fromJson(const nlohmann::json &j, const std::string &origin);
    void overlay(const PriceTable &other); // other's entries replace this table's

    std::optional<Price> find(const std::string &provider, const std::string &model) const;
    const std::string &currency() const { return m_currency; }

private:
    std::string m_currency = "USD";
    std::map<std::string, std::map<std::string, Price>> m_prices; // provider -> model or pattern -> price
};

const char *builtinPricesJson(); // resources/llm/prices.json as built

} // namespace kforge::llm
