#include "protocol/messages.h"

#include "util/error.h"
#include "util/text.h"

namespace kforge {

// JSON strings must be UTF-8, and a source is any bytes (a Latin-1 comment, a stray byte): those go
// as base64, so the worker compiles exactly what the proposer wrote.
void to_json(nlohmann::json &j, const Candidate &c)
{
    j = {{"backend", c.backend}, {"launch", c.launch}};
    if (isValidUtf8(c.source))
        j["source"] = c.source;
    else
        j["source_b64"] = base64Encode(c.source);
}

void from_json(const nlohmann::json &j, Candidate &c)
{
    c.backend = j.value("backend", "cpu");
    if (const auto b64 = j.find("source_b64"); b64 != j.end()) {
        auto bytes = base64Decode(b64->get<std::string>());
        if (!bytes)
            throw Error("the candidate's source_b64 is not base64");
        c.source = std::move(*bytes);
    } else {
        c.source = j.at("source").get<std::string>();
    }
    c.launch = j.value("launch", nlohmann::json::object());
}

void to_json(nlohmann::json &j, const EvalOptions &o)
{
    j = {{"bench_samples", o.benchSamples}, {"warmup", o.warmup}, {"deadline_ms", o.deadlineMs},
         {"benchmark", o.benchmark}};
    if (o.inputSeed)
        j["input_seed"] = o.inputSeed;
}

void from_json(const nlohmann::json &j, EvalOptions &o)
{
    o.benchSamples = j.value("bench_samples", o.benchSamples);
    o.warmup = j.value("warmup", o.warmup);
    o.deadlineMs = j.value("deadline_ms", o.deadlineMs);
    o.benchmark = j.value("benchmark", o.benchmark);
    o.inputSeed = j.value("input_seed", o.inputSeed);
}

nlohmann::json helloRequest(bool measure)
{
    nlohmann::json r = {{"type", "hello"}, {"protocol", kProtocolVersion}};
    if (measure)
        r["measure"] = true;
    return r;
}

nlohmann::json helloDevice(const nlohmann::json &hello, const std::string &backend)
{
    if (const auto d = hello.is_object() ? hello.find("devices") : hello.end(); hello.is_object() && d != hello.end() && d->is_array())
        for (const auto &dev : *d)
            if (dev.is_object() && dev.value("backend", std::string()) == backend)
                return dev;
    return nullptr;
}

std::string deviceLabel(const nlohmann::json &device)
{
    if (!device.is_object())
        return {};
    auto text = [&](const char *k) {
        const auto it = device.find(k);
        return it != device.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    std::string label = text("backend").empty() ? "device" : text("backend");
    if (const auto i = device.find("index"); i != device.end() && i->is_number_integer())
        label += ":" + std::to_string(i->get<int64_t>());
    if (!text("name").empty())
        label += " " + text("name");
    if (!text("sm").empty())
        label += " (" + text("sm") + ")";
    return label;
}

nlohmann::json evaluateRequest(const OperatorCard &card, const Candidate &candidate, const EvalOptions &options)
{
    return {{"type", "evaluate"}, {"card", card}, {"candidate", candidate}, {"options", options}};
}

nlohmann::json profileRequest(const OperatorCard &card, const Candidate &candidate)
{
    return {{"type", "profile"}, {"card", card}, {"candidate", candidate}};
}

nlohmann::json prepareRequest(const Candidate &candidate)
{
    return {{"type", "prepare"}, {"candidate", candidate}};
}

nlohmann::json shutdownRequest()
{
    return {{"type", "shutdown"}};
}

nlohmann::json errorReply(const nlohmann::json &id, const std::string &message)
{
    return {{"id", id}, {"type", "error"}, {"ok", false}, {"error", message}};
}

} // namespace kforge
