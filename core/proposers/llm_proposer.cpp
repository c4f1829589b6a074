#include "proposers/llm_proposer.h"

#include <cstdio>
#include <map>

#include "knowledge/lessons.h"
#include "llm/prompt.h"
#include "llm/reply.h"
#include "proposers/templates/cuda_prelude.h"
#include "util/error.h"
#include "util/redact.h"

namespace kforge {

namespace {

std::string money(double v, const std::string &currency)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4f %s", v, currency.c_str());
    return buf;
}

std::string shortText(const std::string &s, size_t n)
{
    return s.size() > n ? s.substr(0, n - 3) + "..." : s;
}

} // namespace

LlmProposer::LlmProposer(SessionStore &store, LlmProposerOptions options)
    : m_store(store), m_options(std::move(options)), m_client(m_options.provider)
{
    if (!m_options.pricesGiven)
        m_options.prices = llm::PriceTable::load();
    m_price = m_options.prices.find(m_options.provider.provider, m_options.provider.model);
    if (!m_price && m_options.budget > 0)
        throw llm::LlmError(llm::ErrorKind::NoPrice, "no price is known for " + m_options.provider.provider + "/" + m_options.provider.model
                                                         + ", so a budget cannot be kept: add it to " + llm::PriceTable::userFile()
                                                         + " ({\"providers\": {\"" + m_options.provider.provider + "\": {\""
                                                         + m_options.provider.model + "\": {\"input\": X, \"output\": Y}}}}, per million tokens)");
}

LlmProposer::~LlmProposer() = default;

std::string LlmProposer::name() const
{
    return "llm:" + m_options.provider.provider + "/" + m_options.provider.model;
}

void LlmProposer::loadKnowledge()
{
    m_knowledgeLoaded = true;
    try {
        m_knowledge = knowledge::KnowledgeBase::load(m_options.knowledgeDir);
        m_knowledgeProblems = m_knowledge->problems();
    } catch (const Error &e) {
        m_knowledge.reset();
        m_knowledgeProblems = {std::string("no knowledge base: ") + e.what()};
    }
}

void LlmProposer::target(const nlohmann::json &device)
{
    if (!device.is_null())
        m_options.device = device;
}

void LlmProposer::begin(int64_t sessionId, int64_t operatorId)
{
    m_sessionId = sessionId;
    m_operatorId = operatorId;
    loadKnowledge(); // again for every search: the one before may have written a lesson
    if (!m_log)
        m_log = std::make_unique<LlmCallLog>(m_store, true);
}

void LlmProposer::stored(int64_t nodeId)
{
    if (m_log && !m_pending.empty())
        m_log->attach(m_pending, nodeId);
    m_pending.clear();
}

int64_t LlmProposer::record(const std::string &purpose, const llm::Exchange &ex, const llm::ChatReply *reply, const std::string &outcome,
                            const std::string &error)
{
    if (!m_log)
        begin(m_sessionId, m_operatorId);
    auto redactor = Redactor::fromEnvironment();
    if (!m_options.provider.apiKey.empty())
        redactor.addSecret(m_options.provider.apiKey);
    LlmCallRecord c;
    c.sessionId = m_sessionId;
    if (m_operatorId)
        c.operatorId = m_operatorId;
    c.provider = m_options.provider.provider;
    c.model = m_options.provider.model;
    c.purpose = purpose;
    c.url = ex.url;
    c.request = ex.requestBody;
    c.response = ex.responseBody;
    c.outcome = outcome;
    c.error = redactor.redact(error);
    if (reply) {
        c.replyText = llm::redactBody(reply->text, redactor);
        c.inputTokens = reply->usage.inputTokens;
        c.outputTokens = reply->usage.outputTokens;
        c.attempts = reply->attempts;
        c.millis = reply->millis;
    }
    c.priced = m_price.has_value();
    c.cost = m_price ? m_price->cost({c.inputTokens, c.outputTokens}) : 0;
    m_spent += c.cost;
    return m_log->add(c);
}

std::optional<Proposal> LlmProposer::propose(const OperatorCard &card, const NodeRecord *parent, std::mt19937_64 &)
{
    if (!m_stop.empty())
        return std::nullopt;
    if (parent && m_sessionId == 0)
        begin(parent->sessionId, parent->operatorId);
    m_pending.clear();

    // What the prompt needs from the store: the parent's detail, its lineage, and what failed before.
    std::optional<NodeDetail> parentDetail;
    llm::PromptInput in;
    in.card = &card;
    in.backend = m_options.backend;
    if (parent) {
        parentDetail = m_store.nodeDetail(parent->id);
        if (parentDetail)
            in.parent = &*parentDetail;
    }
    if (m_sessionId) {
        const auto nodes = m_store.nodes(m_sessionId);
        std::map<int64_t, const NodeRecord *> byId;
        for (const auto &n : nodes)
            byId[n.id] = &n;
        auto changeOf = [](const NodeRecord &n) {
            if (n.params.contains("rationale") && n.params["rationale"].is_string())
                return n.params["rationale"].get<std::string>();
            return n.templateId == "aten" ? std::string("the ATen baseline") : n.templateId + " " + n.params.dump();
        };
        std::vector<llm::LineageStep> lineage;
        for (auto id = parent ? std::optional<int64_t>(parent->id) : std::nullopt; id && byId.count(*id);) {
            const auto &n = *byId[*id];
            lineage.push_back({n.id, n.expansion, n.status, n.speedup, changeOf(n)});
            id = n.parentId;
        }
        in.lineage.assign(lineage.rbegin(), lineage.rend());
        for (const auto &n : nodes) {
            if (n.operatorId != m_operatorId || (parent && n.id == parent->id) || n.status == "running" || n.status == "baseline")
                continue;
            if (!statusIsFailure(statusFromName(n.status)))
                continue;
            in.failed.push_back({n.id, changeOf(n), n.status, n.reasons.empty() ? n.summary : shortText(n.reasons.front().message, 200)});
        }
        if (in.failed.size() > 6)
            in.failed.erase(in.failed.begin(), in.failed.end() - 6);
    }
    if (!m_knowledgeLoaded)
        loadKnowledge();
    const auto arch = knowledge::deviceArch(m_options.device);
    const std::string deviceName = m_options.device.is_object() ? m_options.device.value("name", std::string()) : std::string();
    in.device = llm::describeDevice(m_options.device, m_knowledge ? m_knowledge->hardwareNote(arch, deviceName) : nullptr);
    if (m_knowledge) {
        knowledge::Query q;
        q.arch = arch;
        q.deviceName = deviceName;
        q.families = knowledge::familiesOf(card);
        q.bottleneck = parentDetail ? knowledge::bottleneckOf(*parentDetail) : std::string();
        q.text = card.atenOp + " " + card.family + " " + card.key;
        q.signature = knowledge::operatorSignature(card);
        q.kinds = {knowledge::Kind::Family, knowledge::Kind::Lesson};
        q.limit = m_options.passages;
        in.passages = m_knowledge->retrieve(q);
    }
    in.knowledgeCap = m_options.knowledgeCap;
    const std::string mode = llm::promptMode(in);
    llm::ChatRequest request = llm::buildPrompt(in);
    request.maxTokens = m_options.maxTokens;
    request.temperature = m_options.temperature;

    std::string purpose = mode;
    for (int attempt = 0; attempt < std::max(1, m_options.replyAttempts); ++attempt) {
        if (m_options.budget > 0 && m_spent >= m_options.budget) {
            m_stop = "money budget spent (" + money(m_spent, m_options.prices.currency()) + " of " + money(m_options.budget, m_options.prices.currency())
                     + ")";
            return std::nullopt;
        }
        llm::Exchange ex;
        llm::ChatReply reply;
        try {
            std::function<void(std::string_view)> onDelta;
            if (m_options.stream)
                onDelta = m_options.onText ? m_options.onText : [](std::string_view) {};
            reply = m_client.chat(request, onDelta, &ex);
        } catch (const llm::LlmError &e) {
            m_pending.push_back(record(purpose, ex, nullptr, llm::errorKindName(e.kind()), e.what()));
            m_lastFailure = e.what();
            const auto k = e.kind();
            if (k == llm::ErrorKind::BadKey || k == llm::ErrorKind::UnknownModel || k == llm::ErrorKind::Cancelled)
                m_stop = std::string("llm: ") + e.what();
            else if (++m_failuresInRow >= m_options.maxConsecutiveFailures)
                m_stop = "llm: " + std::to_string(m_failuresInRow) + " calls in a row failed, the last: " + e.what();
            return std::nullopt;
        }
        m_failuresInRow = 0;
        auto parsed = llm::parseReply(reply.text, m_options.backend);
        const int64_t callId = record(purpose, ex, &reply, parsed.ok ? "ok" : parsed.failure, parsed.ok ? "" : parsed.message);
        m_pending.push_back(callId);
        if (m_options.budget > 0 && m_spent >= m_options.budget)
            m_stop = "money budget spent (" + money(m_spent, m_options.prices.currency()) + " of " + money(m_options.budget, m_options.prices.currency())
                     + ")";
        if (parsed.ok) {
            m_lastFailure.clear();
            Proposal p;
            p.templateId = name();
            p.candidate = std::move(parsed.candidate);
            if (m_options.backend == "cuda")
                p.candidate.source = cudaPrelude(card.inputs.empty() ? DType::F32 : card.inputs.front().dtype) + p.candidate.source;
            p.rationale = parsed.rationale.empty() ? mode + " by " + m_options.provider.model : parsed.rationale;
            p.params = {{"provider", m_options.provider.provider}, {"model", m_options.provider.model}, {"mode", mode},
                        {"rationale", p.rationale}, {"calls", m_pending}};
            return p;
        }
        // No usable code: say so in the same conversation and ask once more.
        m_lastFailure = parsed.message;
        request.messages.push_back({"assistant", reply.text});
        request.messages.push_back({"user", "Your reply has no usable candidate: " + parsed.message
                                                + ". Reply with the line 'Change: ...' and the complete source in one fenced code block."});
        purpose = "reformat";
        if (!m_stop.empty())
            break;
    }
    return std::nullopt; // its calls stay on the session and the operator, on no node
}

} // namespace kforge
