#pragma once
// The status bar's LLM spend for the shown session: calls, tokens in and out, and money, from the
// session's llm_calls, read again whenever its nodes change (a live search adds calls as it goes).
// Hidden for a session with no calls.
#include <QLabel>
#include <memory>

namespace kforge {
class LlmCallLog;
class SessionStore;
} // namespace kforge

namespace kforge::ui {

class SessionContext;

class LlmCostLabel : public QLabel {
    Q_OBJECT
public:
    explicit LlmCostLabel(SessionContext *context, QWidget *parent = nullptr);
    ~LlmCostLabel() override;

private:
    void open();
    void refresh();

    SessionContext *m_context;
    std::unique_ptr<SessionStore> m_store;
    std::unique_ptr<LlmCallLog> m_log;
};

} // namespace kforge::ui
