#pragma once
// The profiler panels of the main window: a Timeline dock and an Operators dock over one
// WorkloadContext, and the File menu's actions that open a workload and a second profile of it run
// with a pack. Kept apart from MainWindow so the window only places them.
#include <QObject>
#include <QString>

class QAction;
class QDockWidget;
class QMainWindow;

namespace kforge::ui {

class OperatorTable;
class SessionContext;
class TimelineView;
class WorkloadContext;

class WorkloadPanels : public QObject {
    Q_OBJECT
public:
    WorkloadPanels(QMainWindow *window, SessionContext *session);

    // Read on a pool thread; errors go to the status bar and a dialog (never modal to the loop).
    void open(const QString &path);
    void openAfter(const QString &path);
    // The same, waiting in a local event loop (the command line, tests): the error, or "".
    QString openAndWait(const QString &path, bool after = false);
    // W.with-pack.json beside W.json, which `kforge-cli profile W.json --pack P` writes by default: open()
    // shows it under the workload's own profile at once. "" when there is none.
    static QString packProfileBeside(const QString &workloadPath);

    WorkloadContext *context() const { return m_context; }
    TimelineView *timeline() const { return m_timeline; }
    OperatorTable *table() const { return m_table; }
    QDockWidget *timelineDock() const { return m_timelineDock; }
    QDockWidget *tableDock() const { return m_tableDock; }
    QAction *openAction() const { return m_openAction; }
    QAction *openAfterAction() const { return m_openAfterAction; }
    QAction *clearAfterAction() const { return m_clearAfterAction; }

signals:
    void message(const QString &text);

private:
    void showDocks();

    QMainWindow *m_window;
    WorkloadContext *m_context;
    TimelineView *m_timeline;
    OperatorTable *m_table;
    QDockWidget *m_timelineDock;
    QDockWidget *m_tableDock;
    QAction *m_openAction;
    QAction *m_openAfterAction;
    QAction *m_clearAfterAction;
    bool m_dialogs = true; // off while openAndWait() answers with the error instead
    QString m_autoAfterFor; // the workload whose profile with a pack opens once it is shown
};

} // namespace kforge::ui
