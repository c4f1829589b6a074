#pragma once
// The main window: the family tree in the centre, the node inspector on the right, live search
// controls and progress in the toolbar. It owns the SessionContext every panel observes.
#include <QElapsedTimer>
#include <QMainWindow>
#include <QTimer>
#include <vector>

#include "search/search_engine.h"
#include "ui/search_controller.h"

class QAction;
class QLabel;
class QSplitter;

namespace kforge::ui {

class NodeInspector;
class SessionContext;
class TreeView;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    // Shows the file's first session read-only. Returns an empty string, or the reason it could not
    // (the file is untouched either way). The menu action shows that reason in a dialog.
    QString openSession(const QString &path);

    // Starts a live search; an empty sessionPath writes to a new file in the temporary folder.
    bool startSearch(SearchRequest request);
    void stopSearch();
    // What Search > Start demo search runs.
    void setDemoSettings(int maxNodes, int workers, const QString &workerCommand);
    bool startDemoSearch();

    void selectBestNode();
    static QString newLiveSessionPath();

    SessionContext *context() const { return m_context; }
    TreeView *treeView() const { return m_tree; }
    NodeInspector *inspector() const { return m_inspector; }
    SearchController *searchController() const { return m_search; }
    QString progressText() const;
    QString lastSearchError() const { return m_lastError; }

signals:
    void searchFinished(); // after the tree shows the final nodes and the best one is selected

protected:
    void closeEvent(QCloseEvent *event) override;
    void showEvent(QShowEvent *event) override;

private:
    void createActions();
    void updateActions();
    void updateProgress();
    void onOpenTriggered();
    void onSessionCreated(const QString &path, const SessionInfo &info);
    void queueNode(const NodeRecord &node);
    void applyPendingNodes();
    void onFinished(const SearchProgress &progress);

    SessionContext *m_context;
    SearchController *m_search;
    TreeView *m_tree;
    NodeInspector *m_inspector;
    QSplitter *m_split;
    QLabel *m_progress;
    QLabel *m_pathLabel;
    QAction *m_openAction = nullptr;
    QAction *m_startAction = nullptr;
    QAction *m_stopAction = nullptr;

    int m_demoNodes = 24;
    int m_demoWorkers = 1;
    QString m_workerCommand;

    // The live search: which file and session its reports belong to.
    QString m_livePath;
    qint64 m_liveSession = 0;
    SearchProgress m_lastProgress;
    QElapsedTimer m_elapsed;
    QTimer m_tick;
    // Reports arrive in bursts; applying them together redraws the tree once per burst.
    std::vector<NodeRecord> m_pending;
    QTimer m_applyTimer;
    QString m_lastError;
    bool m_closing = false;
    bool m_sized = false;
};

} // namespace kforge::ui
