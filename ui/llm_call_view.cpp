#include "ui/llm_call_view.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTabWidget>
#include <QVBoxLayout>
#include <nlohmann/json.hpp>

#include "ui/theme.h"

namespace kforge::ui {

namespace {

using J = nlohmann::json;

QPlainTextEdit *makeText(QWidget *parent, bool wrap)
{
    auto *t = new QPlainTextEdit(parent);
    t->setReadOnly(true);
    t->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    t->setLineWrapMode(wrap ? QPlainTextEdit::WidgetWidth : QPlainTextEdit::NoWrap);
    return t;
}

// A content value: a string, or blocks / parts each with a "text".
std::string contentText(const J &c)
{
    if (c.is_string())
        return c.get<std::string>();
    std::string out;
    if (c.is_array())
        for (const auto &b : c)
            if (b.is_object() && b.contains("text") && b["text"].is_string())
                out += (out.empty() ? "" : "\n") + b["text"].get<std::string>();
    return out;
}

QString section(const std::string &role, const std::string &text)
{
    return QStringLiteral("━━ %1 ━━\n%2\n\n").arg(QString::fromStdString(role), QString::fromStdString(text));
}

} // namespace

QString promptText(const std::string &requestBody)
{
    const auto j = J::parse(requestBody, nullptr, false);
    if (!j.is_object())
        return QString::fromStdString(requestBody);
    QString out;
    if (j.contains("system")) // Anthropic
        out += section("system", contentText(j["system"]));
    if (j.contains("systemInstruction") && j["systemInstruction"].is_object()) // Gemini
        out += section("system", contentText(j["systemInstruction"].value("parts", J::array())));
    for (const char *list : {"messages", "contents"})
        if (j.contains(list) && j[list].is_array())
            for (const auto &m : j[list])
                if (m.is_object())
                    out += section(m.value("role", std::string("?")), contentText(m.contains("parts") ? m["parts"] : m.value("content", J())));
    return out.isEmpty() ? QString::fromStdString(requestBody) : out.trimmed();
}

QString money(double cost, bool priced)
{
    if (!priced)
        return QStringLiteral("unknown");
    return QStringLiteral("$%1").arg(cost, 0, 'f', cost < 1 ? 4 : 2);
}

QString costLine(const LlmTotals &t, int attempts)
{
    QString line = QStringLiteral("%1 call%2 · %3 in / %4 out tokens · %5")
                       .arg(t.calls)
                       .arg(t.calls == 1 ? QString() : QStringLiteral("s"))
                       .arg(t.inputTokens)
                       .arg(t.outputTokens)
                       .arg(money(t.cost, t.unpriced == 0));
    if (t.unpriced && t.unpriced < t.calls)
        line = QStringLiteral("%1 call%2 · %3 in / %4 out tokens · %5 + %6 unpriced")
                   .arg(t.calls)
                   .arg(t.calls == 1 ? QString() : QStringLiteral("s"))
                   .arg(t.inputTokens)
                   .arg(t.outputTokens)
                   .arg(money(t.cost))
                   .arg(t.unpriced);
    if (attempts > 0)
        line += QStringLiteral(" · %1 attempt%2").arg(attempts).arg(attempts == 1 ? QString() : QStringLiteral("s"));
    return line;
}

LlmCallView::LlmCallView(QWidget *parent)
    : QWidget(parent), m_summary(new QLabel(this)), m_callBox(new QComboBox(this)), m_heading(new QLabel(this)),
      m_tabs(new QTabWidget(this)), m_prompt(makeText(this, true)), m_reply(makeText(this, true)), m_request(makeText(this, false)),
      m_response(makeText(this, false))
{
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_heading->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_heading->setWordWrap(true);
    m_callBox->setToolTip(QStringLiteral("The calls that made this node, in order"));
    m_tabs->setDocumentMode(true);
    m_tabs->addTab(m_prompt, QStringLiteral("Prompt"));
    m_tabs->addTab(m_reply, QStringLiteral("Reply"));
    m_tabs->addTab(m_request, QStringLiteral("Request as sent"));
    m_tabs->addTab(m_response, QStringLiteral("Response as received"));
    auto *top = new QHBoxLayout;
    top->setContentsMargins(4, 2, 4, 0);
    top->addWidget(m_summary, 1);
    top->addWidget(m_callBox);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addLayout(top);
    layout->addWidget(m_heading);
    layout->addWidget(m_tabs, 1);
    m_heading->setContentsMargins(4, 0, 4, 0);
    connect(m_callBox, &QComboBox::currentIndexChanged, this, &LlmCallView::showCall);
    showMessage(QStringLiteral("No LLM calls made this node."));
}

void LlmCallView::showMessage(const QString &text)
{
    m_calls.clear();
    const QSignalBlocker block(m_callBox);
    m_callBox->clear();
    m_callBox->hide();
    m_summary->setText(text);
    m_heading->clear();
    for (auto *t : {m_prompt, m_reply, m_request, m_response})
        t->clear();
}

void LlmCallView::showCalls(std::vector<LlmCallRecord> calls)
{
    if (calls.empty()) {
        showMessage(QStringLiteral("No LLM calls made this node."));
        return;
    }
    m_calls = std::move(calls);
    LlmTotals t;
    int attempts = 0;
    for (const auto &c : m_calls) {
        ++t.calls;
        t.inputTokens += c.inputTokens;
        t.outputTokens += c.outputTokens;
        t.cost += c.cost;
        t.unpriced += !c.priced;
        attempts += c.attempts;
    }
    m_summary->setText(QStringLiteral("<b>This node:</b> ") + costLine(t, attempts).toHtmlEscaped());
    {
        const QSignalBlocker block(m_callBox);
        m_callBox->clear();
        for (size_t i = 0; i < m_calls.size(); ++i)
            m_callBox->addItem(QStringLiteral("call %1: %2").arg(i + 1).arg(QString::fromStdString(m_calls[i].purpose)));
        m_callBox->setVisible(m_calls.size() > 1);
        m_callBox->setCurrentIndex(int(m_calls.size()) - 1); // the call whose reply became the node
    }
    showCall(int(m_calls.size()) - 1);
}

void LlmCallView::showCall(int index)
{
    if (index < 0 || index >= int(m_calls.size()))
        return;
    const auto &c = m_calls[size_t(index)];
    const QString took = c.millis < 1000 ? QStringLiteral("%1 ms").arg(c.millis, 0, 'f', 0) : QStringLiteral("%1 s").arg(c.millis / 1000.0, 0, 'f', 1);
    QString head = QStringLiteral("Call %1 of %2: <b>%3</b> · %4 · %5 in / %6 out tokens · %7 · %8 attempt%9 · %10 · %11 via %12")
                       .arg(index + 1)
                       .arg(m_calls.size())
                       .arg(QString::fromStdString(c.purpose).toHtmlEscaped(), QString::fromStdString(c.outcome).toHtmlEscaped())
                       .arg(c.inputTokens)
                       .arg(c.outputTokens)
                       .arg(money(c.cost, c.priced))
                       .arg(c.attempts)
                       .arg(c.attempts == 1 ? QString() : QStringLiteral("s"))
                       .arg(took)
                       .arg(QString::fromStdString(c.model).toHtmlEscaped(), QString::fromStdString(c.provider).toHtmlEscaped());
    if (!c.error.empty())
        head += QStringLiteral("<br><span style=\"color:%1\">%2</span>").arg(htmlColour(theme().bad), QString::fromStdString(c.error).toHtmlEscaped());
    m_heading->setText(head);
    m_prompt->setPlainText(promptText(c.request));
    m_reply->setPlainText(QString::fromStdString(c.replyText));
    m_request->setPlainText(QString::fromStdString(c.request));
    m_response->setPlainText(QString::fromStdString(c.response));
}

QString LlmCallView::summary() const
{
    return m_summary->text();
}

QString LlmCallView::callHeading() const
{
    return m_heading->text();
}

QString LlmCallView::prompt() const
{
    return m_prompt->toPlainText();
}

QString LlmCallView::reply() const
{
    return m_reply->toPlainText();
}

QString LlmCallView::request() const
{
    return m_request->toPlainText();
}

QString LlmCallView::response() const
{
    return m_response->toPlainText();
}

} // namespace kforge::ui
