#include "protocol/messages.h"

namespace kforge {

void to_json(nlohmann::json &j, const Candidate &c)
{
    j = {{"backend", c.backend}, {"source", c.source}, {"launch", c.launch}};
}

void from_json(const nlohmann::json &j, Candidate &c)
{
    c.backend = j.value("backend", "cpu");
    c.source = j.at("source").get<std::string>();
    c.launch = j.value("launch", nlohmann::json::object());
}

void to_json(nlohmann::json &j, const EvalOptions &o)
{
    j = {{"bench_samples", o.benchSamples}, {"warmup", o.warmup}, {"deadline_ms", o.deadlineMs},
         {"benchmark", o.benchmark}};
}

void from_json(const nlohmann::json &j, EvalOptions &o)
{
    o.benchSamples = j.value("bench_samples", o.benchSamples);
    o.warmup = j.value("warmup", o.warmup);
    o.deadlineMs = j.value("deadline_ms", o.deadlineMs);
    o.benchmark = j.value("benchmark", o.benchmark);
}

nlohmann::json helloRequest()
{
    return {{"type", "hello"}, {"protocol", kProtocolVersion}};
}

nlohmann::json evaluateRequest(const OperatorCard &card, const Candidate &candidate, const EvalOptions &options)
{
    return {{"type", "evaluate"}, {"card", card}, {"candidate", candidate}, {"options", options}};
}

nlohmann::json profileRequest(const OperatorCard &card, const Candidate &candidate)
{
    return {{"type", "profile"}, {"card", card}, {"candidate", candidate}};
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
