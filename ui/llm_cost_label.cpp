#include "ui/llm_cost_label.h"

#include <QTimer>

#include "store/llm_calls.h"
#include "store/session_store.h"
#include "ui/llm_call_view.h"
#include "ui/session_context.h"

namespace kforge::ui {

LlmCostLabel::LlmCostLabel(SessionContext *context, QWidget *parent) : QLabel(parent), m_context(context)
{
    setObjectName(QStringLiteral("llmCost"));
    setContentsMargins(8, 0, 8, 0);
    setToolTip(QStringLiteral("What this session's LLM calls cost: calls, tokens in and out, money"));
    hide();
    connect(context, &SessionContext::sessionLoaded, this, &LlmCostLabel::open);
    connect(context, &SessionContext::nodesChanged, this, &LlmCostLabel::refresh);
    connect(context, &SessionContext::sessionClosed, this, [this] {
        m_log.reset();
        m_store.reset();
        hide();
    });
}

LlmCostLabel::~LlmCostLabel() = default;

void LlmCostLabel::open()
{
    m_log.reset();
    m_store.reset();
    try {
        m_store = std::make_unique<SessionStore>(m_context->sessionPath().toStdString(), SessionStore::Mode::ReadOnly);
        m_log = std::make_unique<LlmCallLog>(*m_store, false);
    } catch (const std::exception &) {
        m_log.reset(); // a file without calls to read shows none
        m_store.reset();
    }
    refresh();
}

void LlmCostLabel::refresh()
{
    const auto &snap = m_context->snapshot();
    if (!m_log || !snap) {
        hide();
        return;
    }
    LlmTotals t;
    try {
        t = m_log->sessionTotals(snap->session().id);
    } catch (const std::exception &) {
        QTimer::singleShot(500, this, &LlmCostLabel::refresh); // busy: the last change must still be shown
        return;
    }
    setVisible(t.calls > 0);
    setText(QStringLiteral("LLM: ") + costLine(t, 0));
}

} // namespace kforge::ui
