#pragma once
// The LLM tab of the node inspector: every model call that made the shown node (a first attempt, a
// repair, the extra turn that asked for code), with the exact prompt as sent, the reply, the whole
// request and response bodies as they went over the wire (redacted of keys), and the cost: tokens in
// and out, money and attempts, per call and for the node. Read from the session's llm_calls
// (core/store/llm_calls.h); the session's totals are in the status bar (ui/llm_cost_label.h).
#include <QWidget>
#include <string>
#include <vector>

#include "store/llm_calls.h"

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QTabWidget;

namespace kforge::ui {

// The conversation in a request body as a person reads it, role by role, for each provider's shape
// (OpenAI's and Anthropic's messages, Anthropic's system, Gemini's systemInstruction and contents);
// the body itself when it is none of them.
QString promptText(const std::string &requestBody);
// "$0.0061" (4 decimals under a dollar); "unknown" when no price was known.
QString money(double cost, bool priced = true);
// "2 calls · 1843 in / 301 out tokens · $0.0061 · 3 attempts"
QString costLine(const LlmTotals &totals, int attempts);

class LlmCallView : public QWidget {
    Q_OBJECT
public:
    explicit LlmCallView(QWidget *parent = nullptr);

    void showCalls(std::vector<LlmCallRecord> calls);
    void showMessage(const QString &text);
    int callCount() const { return int(m_calls.size()); }
    void showCall(int index);

    QString summary() const;
    QString callHeading() const;
    QString prompt() const;
    QString reply() const;
    QString request() const;
    QString response() const;
    QComboBox *callBox() const { return m_callBox; }

private:
    std::vector<LlmCallRecord> m_calls;
    QLabel *m_summary;
    QComboBox *m_callBox;
    QLabel *m_heading;
    QTabWidget *m_tabs;
    QPlainTextEdit *m_prompt;
    QPlainTextEdit *m_reply;
    QPlainTextEdit *m_request;
    QPlainTextEdit *m_response;
};

} // namespace kforge::ui
