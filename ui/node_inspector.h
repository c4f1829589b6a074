#pragma once
// Everything stored about the selected node: its code, the guard's verdict, the compile log and the
// parameters it was generated from. It reads through its own read-only connection to the session
// file, so it works the same for a file opened from disk and for a search writing it right now.
#include <QWidget>
#include <memory>
#include <string>

class QLabel;
class QPlainTextEdit;
class QTabWidget;
class QsciScintilla;

namespace kforge {
class SessionStore;
}

namespace kforge::ui {

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
    QString heading() const;
    VerdictPane *verdictPane() const { return m_verdict; }

private:
    void openStore();
    void showNode(qint64 id);
    void refreshIfChanged();
    void showMessage(const QString &text);

    SessionContext *m_context;
    std::unique_ptr<SessionStore> m_store;
    QString m_storeError;
    qint64 m_shown = 0;
    std::string m_shownStatus; // to reload when a live search finishes the shown node

    QLabel *m_heading;
    QsciScintilla *m_code;
    QTabWidget *m_tabs;
    VerdictPane *m_verdict;
    QPlainTextEdit *m_compileLog;
    QPlainTextEdit *m_params;
    QPlainTextEdit *m_profile;
};

} // namespace kforge::ui
