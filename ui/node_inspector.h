#pragma once
// Everything stored about the selected node: its code and its diff against the parent or any chosen
// node, the guard's verdict, the compile log (file positions link into the code), the launch plan,
// the parameters and the profiler report, for an LLM node its calls (ui/llm_call_view.h), and the person's accept or reject with a reason. It reads
// through its own read-only connection to the session file, so it works the same for a file opened
// from disk and for a search writing it right now.
#include <QWidget>
#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "ui/diff_rows.h"

class QAction;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QTextBrowser;
class QUrl;
class QsciScintilla;

namespace kforge {
class LlmCallLog;
class SessionStore;
struct NodeDetail;
} // namespace kforge

namespace kforge::ui {

class DiffView;
class LlmCallView;
class SessionContext;
class VerdictPane;

class NodeInspector : public QWidget {
    Q_OBJECT
public:
    explicit NodeInspector(SessionContext *context, QWidget *parent = nullptr);
    ~NodeInspector() override;

    qint64 shownNode() const { return m_shown; }
    QString code() const;
    QString compileLog() const;
    QString profileText() const;
    QString launchPlanText() const;
    QString heading() const;
    QString decisionText() const;
    VerdictPane *verdictPane() const { return m_verdict; }
    DiffView *diffView() const { return m_diff; }
    QsciScintilla *codeView() const { return m_code; }
    QTextBrowser *compileLogView() const { return m_compileLog; }
    LlmCallView *llmView() const { return m_llm; }
    bool llmTabVisible() const;
    QLineEdit *reasonEdit() const { return m_reason; }
    QAction *acceptAction() const { return m_acceptAction; }
    QAction *rejectAction() const { return m_rejectAction; }

    // 0 compares with the node's parent.
    void setDiffBase(qint64 nodeId);
    qint64 diffBase() const;
    // Brings a tab forward by name: "code", "diff", "verdict", "compile-log", "launch-plan",
    // "parameters", "profile", "llm". False for a name it does not know.
    bool showPanel(const QString &name);
    // Brings the code forward at a 1-based line, as a compile-log link does.
    void goToLine(int line);

signals:
    void diffReady(); // the diff for the shown node is on screen
    void message(const QString &text);

private:
    void openStore();
    void showNode(qint64 id);
    void refreshIfChanged();
    void showMessage(const QString &text);
    void showDecision();
    void showLlmCalls(qint64 id);
    void beginDecision(const QString &decision);
    void commitDecision(const QString &decision);
    void updateDiff();
    void onLogLink(const QUrl &url);

    SessionContext *m_context;
    std::unique_ptr<SessionStore> m_store;
    std::unique_ptr<LlmCallLog> m_llmLog; // the same file's LLM calls (schema 5)
    QString m_storeError;
    qint64 m_shown = 0;
    std::string m_shownStatus; // to reload when a live search finishes the shown node
    std::string m_shownSource;
    quint64 m_diffJob = 0;
    QString m_pendingDecision; // "accept" or "reject" while the reason is being typed

    QLabel *m_heading;
    QLabel *m_decision;
    QLineEdit *m_reason;
    QPushButton *m_acceptButton;
    QPushButton *m_rejectButton;
    QAction *m_acceptAction;
    QAction *m_rejectAction;
    QTabWidget *m_codeTabs;
    QsciScintilla *m_code;
    QSpinBox *m_diffBase;
    DiffView *m_diff;
    QTabWidget *m_tabs;
    VerdictPane *m_verdict;
    QTextBrowser *m_compileLog;
    QPlainTextEdit *m_plan;
    QPlainTextEdit *m_params;
    QPlainTextEdit *m_profile;
    LlmCallView *m_llm;
};

// The compile log as HTML with every "candidate.cu(476)" or "candidate.cpp:12:5" turned into a link
// to "line:476"; exposed for tests.
QString linkCompileLog(const QString &log);
// A CUDA launch plan as a person reads it, then as stored.
QString formatLaunchPlan(const std::string &backend, const nlohmann::json &plan);

} // namespace kforge::ui
