#pragma once
// The main window: the family tree in the centre, the node inspector on the right, live search
// controls and progress in the toolbar. It owns the SessionContext every panel observes.
#include <QElapsedTimer>
#include <QMainWindow>
#include <QTimer>
#include <vector>

#include "search/search_engine.h"
#include "ui/pack_export.h"
#include "ui/search_controller.h"
#include "ui/search_settings.h"

class QAction;
class QDockWidget;
class QLabel;
class QMenu;
class QProgressBar;

namespace kforge::ui {

class CampaignDialog;
class CampaignProgressView;
class CompareView;
class FilterBar;
class NodeInspector;
class SessionContext;
class SessionWatcher;
class TreeView;
class WorkloadPanels;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    // Shows the file's first session read-only and follows it as another process writes it. Returns
    // an empty string, or the reason it could not (the file is untouched either way). The file is
    // read on a pool thread; this waits for it in a local event loop, so the window keeps painting.
    QString openSession(const QString &path);
    // openSession() for a person: the reason goes to a dialog (never modal to the event loop), the
    // status bar and the empty tree; a file from an older kforge gets the offer to upgrade it.
    void openSessionInteractively(const QString &path);
    // Brings an older session file to the current schema in place, then opens it.
    QString upgradeAndOpen(const QString &path);

    // Starts a live search; an empty sessionPath writes to a new file in the temporary folder.
    bool startSearch(SearchRequest request);
    void stopSearch(); // pause: the evaluations in flight finish, the session is marked stopped
    void stopSearchNow(); // the nodes in flight are marked interrupted; a resume evaluates them again
    // Goes on with the shown session's search (Search > Resume): possible when nothing runs, the file's
    // last search is the one shown, and it stopped or has unfinished nodes. False when it did not start
    // (lastSearchError() says why).
    // A session the file still marks running may be another process's live search: resuming it here
    // too would search it twice, so that takes evenIfMarkedRunning (the menu asks the person first).
    bool canResume() const;
    bool resumeSearch(bool evenIfMarkedRunning = false);
    // File > Export pack…: kforge-cli export on the shown session's file into outDir, in the
    // background; the result (kernels in, operators skipped and why, or the error) goes to a dialog and
    // lastExport(). False when nothing is shown or an export is running.
    bool exportPack(const QString &outDir, const QString &cliPath = QString());
    PackExporter *packExporter() const { return m_exporter; }
    const PackExportResult &lastExport() const { return m_lastExport; }
    // What Search > Start demo search runs: the saved settings (Settings dialog); the command line may
    // override them for this run without saving.
    const SearchSettings &searchSettings() const { return m_settings; }
    void setSearchSettings(const SearchSettings &settings, bool save);
    void setDemoSettings(int maxNodes, int workers, const QString &workerCommand);
    SettingsDialog *openSettingsDialog(); // not modal to the event loop; applies and saves on OK
    bool startDemoSearch();
    // Search > Start campaign…: the workload's plan in a dialog (not modal to the event loop), from the
    // saved settings' worker, backend, proposer and node budget; Start runs it as startSearch() does.
    CampaignDialog *openCampaignDialog(const QString &workloadPath);
    CampaignProgressView *campaignView() const { return m_campaignView; }
    QDockWidget *campaignDock() const { return m_campaignDock; }

    void selectBestNode();
    // Sets the filter bar's choices (empty: any) as a person would; false when a value is not offered.
    bool applyFilter(const QString &status, const QString &templateId, bool hide);
    static QString newLiveSessionPath();

    SessionContext *context() const { return m_context; }
    SessionWatcher *watcher() const { return m_watcher; }
    QDockWidget *inspectorDock() const { return m_inspectorDock; }
    QDockWidget *compareDock() const { return m_compareDock; }
    CompareView *compareView() const { return m_compare; }
    FilterBar *filterBar() const { return m_filterBar; }
    QString sessionStatusText() const;
    QStringList recentSessions() const;
    TreeView *treeView() const { return m_tree; }
    WorkloadPanels *workloadPanels() const { return m_workloads; } // the profiler timeline and operator table
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
    void reportOpenError(const QString &path, const QString &error);
    void onOpenStarted(const QString &path);
    void onOpenFinished(const QString &path, const QString &error);
    void offerUpgradeOrReport(const QString &path, const QString &error);
    void addRecent(const QString &path);
    void fillRecentMenu();
    void updateSessionStatus();
    void saveLayout();
    void restoreLayout();
    void onSessionCreated(const QString &path, const SessionInfo &info);
    void queueNode(const NodeRecord &node);
    void applyPendingNodes();
    void onFinished(const SearchProgress &progress);
    void onExportTriggered();
    void onExportFinished(const PackExportResult &result);

    SessionContext *m_context;
    SearchController *m_search;
    TreeView *m_tree;
    NodeInspector *m_inspector;
    SessionWatcher *m_watcher;
    QDockWidget *m_inspectorDock;
    CompareView *m_compare;
    QDockWidget *m_compareDock;
    FilterBar *m_filterBar;
    QLabel *m_progress;
    QLabel *m_pathLabel;
    QLabel *m_sessionStatus;
    QProgressBar *m_budget;
    QProgressBar *m_openBusy;
    QString m_reportOpenErrorsFor; // an open a person asked for: its error goes to a dialog
    QMenu *m_recentMenu = nullptr;
    QAction *m_openAction = nullptr;
    QAction *m_startAction = nullptr;
    QAction *m_stopAction = nullptr;
    QAction *m_stopNowAction = nullptr;
    QAction *m_resumeAction = nullptr;
    QAction *m_exportAction = nullptr;
    QAction *m_campaignAction = nullptr;
    CampaignProgressView *m_campaignView = nullptr;
    QDockWidget *m_campaignDock = nullptr;
    PackExporter *m_exporter = nullptr;
    PackExportResult m_lastExport;

    SearchSettings m_settings;

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
    bool m_restored = false;
    WorkloadPanels *m_workloads = nullptr;
};

} // namespace kforge::ui
