#include "ui/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QEventLoop>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QToolBar>
#include <QVBoxLayout>
#include <set>
#include <utility>

#include "store/session_store.h"
#include "ui/campaign_dialog.h"
#include "ui/campaign_progress.h"
#include "ui/compare_view.h"
#include "ui/filter_bar.h"
#include "ui/keychain.h"
#include "ui/llm_cost_label.h"
#include "ui/node_inspector.h"
#include "ui/session_context.h"
#include "ui/session_snapshot.h"
#include "ui/session_watcher.h"
#include "ui/status_style.h"
#include "ui/tree_view.h"
#include "ui/workload_panels.h"
#include "util/error.h"

namespace kforge::ui {

namespace {
// A number from the session's options, which older files or hand-written sessions may lack.
int sessionOption(const SessionInfo &info, const char *key)
{
    const auto &o = info.options;
    return o.is_object() && o.contains(key) && o[key].is_number() ? o[key].get<int>() : 0;
}

QString duration(double seconds)
{
    const int s = int(seconds);
    return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}
} // namespace

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent), m_context(new SessionContext(this)), m_search(new SearchController(this)),
      m_tree(new TreeView(m_context, this)), m_inspector(new NodeInspector(m_context, this)),
      m_watcher(new SessionWatcher(m_context, this)), m_inspectorDock(new QDockWidget(QStringLiteral("Node"), this)),
      m_compare(new CompareView(m_context, this)), m_compareDock(new QDockWidget(QStringLiteral("Compare"), this)),
      m_filterBar(new FilterBar(m_context, this)), m_progress(new QLabel(this)), m_pathLabel(new QLabel(this)), m_sessionStatus(new QLabel(this)),
      m_budget(new QProgressBar(this)), m_openBusy(new QProgressBar(this))
{
    setWindowTitle(QStringLiteral("kforge"));
    setDockNestingEnabled(true);
    // The filter strip sits on top of the tree, inside the central area.
    auto *centre = new QWidget(this);
    auto *centreLayout = new QVBoxLayout(centre);
    centreLayout->setContentsMargins(0, 0, 0, 0);
    centreLayout->setSpacing(0);
    centreLayout->addWidget(m_filterBar);
    centreLayout->addWidget(m_tree, 1);
    setCentralWidget(centre);
    connect(m_filterBar, &FilterBar::filterChanged, m_tree, &TreeView::setFilter);
    // Panels are docks so a person can arrange them; the arrangement is saved with the window.
    m_inspectorDock->setObjectName(QStringLiteral("inspectorDock"));
    m_inspectorDock->setWidget(m_inspector);
    m_inspectorDock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::RightDockWidgetArea, m_inspectorDock);
    m_compareDock->setObjectName(QStringLiteral("compareDock"));
    m_compareDock->setWidget(m_compare);
    m_compareDock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable | QDockWidget::DockWidgetClosable);
    // The Node panel keeps the full height on the right; the comparison goes under the tree.
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
    addDockWidget(Qt::BottomDockWidgetArea, m_compareDock);
    m_compareDock->hide();
    // Two nodes set side by side bring the panel up; it stays where the person put it.
    connect(m_context, &SessionContext::comparedChanged, this, [this](const QList<qint64> &ids) {
        if (ids.size() >= 2 && m_compareDock->isHidden()) {
            m_compareDock->show();
            m_compareDock->raise();
            if (!m_compareDock->isFloating())
                resizeDocks({m_compareDock}, {height() / 2}, Qt::Vertical);
        }
    });

    // The Campaign panel comes up when the shown session is a campaign.
    m_campaignView = new CampaignProgressView(m_context, this);
    m_campaignDock = new QDockWidget(QStringLiteral("Campaign"), this);
    m_campaignDock->setObjectName(QStringLiteral("campaignDock"));
    m_campaignDock->setWidget(m_campaignView);
    m_campaignDock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable | QDockWidget::DockWidgetClosable);
    addDockWidget(Qt::BottomDockWidgetArea, m_campaignDock);
    m_campaignDock->hide();
    connect(m_context, &SessionContext::sessionLoaded, this, [this] {
        if (m_context->snapshot() && isCampaign(*m_context->snapshot()) && m_campaignDock->isHidden()) {
            m_campaignDock->show();
            m_campaignDock->raise();
        }
    });

    m_workloads = new WorkloadPanels(this, m_context);
    connect(m_workloads, &WorkloadPanels::message, this, [this](const QString &text) { statusBar()->showMessage(text, 8000); });
    createActions();
    m_progress->setContentsMargins(12, 0, 12, 0);
    m_pathLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_budget->setMaximumWidth(160);
    m_budget->setTextVisible(true);
    m_budget->hide();
    statusBar()->addPermanentWidget(m_sessionStatus);
    statusBar()->addPermanentWidget(m_budget);
    statusBar()->addPermanentWidget(new LlmCostLabel(m_context, this));
    statusBar()->addPermanentWidget(m_pathLabel);
    m_openBusy->setRange(0, 0); // busy: a read has no steps to count
    m_openBusy->setMaximumWidth(120);
    m_openBusy->hide();
    statusBar()->addPermanentWidget(m_openBusy);
    connect(m_context, &SessionContext::openStarted, this, &MainWindow::onOpenStarted);
    connect(m_context, &SessionContext::openFinished, this, &MainWindow::onOpenFinished);
    connect(m_context, &SessionContext::openDropped, m_openBusy, &QWidget::hide);
    connect(m_inspector, &NodeInspector::message, this, [this](const QString &text) { statusBar()->showMessage(text, 8000); });
    connect(m_search->keyStore(), &KeyStore::notice, this, [this](const QString &text) { statusBar()->showMessage(text, 15000); });
    connect(m_context, &SessionContext::nodesChanged, this, &MainWindow::updateSessionStatus);
    connect(m_context, &SessionContext::sessionLoaded, this, &MainWindow::updateSessionStatus);
    connect(m_context, &SessionContext::nodesChanged, this, &MainWindow::updateActions);
    connect(m_context, &SessionContext::sessionLoaded, this, &MainWindow::updateActions);
    connect(m_watcher, &SessionWatcher::reloadFailed, this, [this](const QString &message) {
        statusBar()->showMessage(QStringLiteral("Could not re-read the session: ") + message, 8000);
    });

    m_tick.setInterval(1000);
    connect(&m_tick, &QTimer::timeout, this, &MainWindow::updateProgress);
    m_applyTimer.setSingleShot(true);
    m_applyTimer.setInterval(40);
    connect(&m_applyTimer, &QTimer::timeout, this, &MainWindow::applyPendingNodes);

    connect(m_search, &SearchController::sessionCreated, this, &MainWindow::onSessionCreated);
    connect(m_search, &SearchController::nodeAdded, this, &MainWindow::queueNode);
    connect(m_search, &SearchController::nodeFinished, this, &MainWindow::queueNode);
    connect(m_search, &SearchController::progress, this, [this](const SearchProgress &p) {
        m_lastProgress = p;
        updateProgress();
    });
    connect(m_search, &SearchController::workerEvent, this, [this](const PoolEvent &e) {
        statusBar()->showMessage(QStringLiteral("worker %1 %2: %3")
                                     .arg(e.slot)
                                     .arg(QString::fromStdString(e.kind), QString::fromStdString(e.detail)),
                                 8000);
    });
    connect(m_search, &SearchController::failed, this, [this](const QString &message) {
        m_lastError = message;
        statusBar()->showMessage(QStringLiteral("Search failed: ") + message);
        // open(), not exec(): a live search must never block the window, nor a test driving it.
        auto *box = new QMessageBox(QMessageBox::Warning, QStringLiteral("Search failed"), message, QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        if (!m_closing)
            box->open();
    });
    connect(m_search, &SearchController::finished, this, &MainWindow::onFinished);
    connect(m_search, &SearchController::stepStarted, this, [this](int index, qint64 operatorId) {
        const auto &snap = m_context->snapshot();
        if (!snap || !isCampaign(*snap) || !m_context->isShowing(m_livePath, m_liveSession))
            return;
        for (const auto &op : snap->operators())
            if (op.id == operatorId)
                statusBar()->showMessage(QStringLiteral("Campaign: operator %1 of %2, %3")
                                             .arg(index + 1)
                                             .arg(snap->operators().size())
                                             .arg(QString::fromStdString(op.card.key)));
    });
    connect(m_context, &SessionContext::selectionChanged, this, [this](qint64 id) {
        if (id)
            statusBar()->showMessage(QStringLiteral("Selected node #%1").arg(id), 4000);
    });

    setSearchSettings(SearchSettings::load(), false);
    updateActions();
    updateProgress();
    statusBar()->showMessage(QStringLiteral("Open a session file, or start a demo search."));
}

MainWindow::~MainWindow() = default;

void MainWindow::createActions()
{
    auto *style = QApplication::style();
    m_openAction = new QAction(style->standardIcon(QStyle::SP_DialogOpenButton), QStringLiteral("&Open session…"), this);
    m_openAction->setShortcut(QKeySequence::Open);
    connect(m_openAction, &QAction::triggered, this, &MainWindow::onOpenTriggered);
    m_recentMenu = new QMenu(QStringLiteral("Open &recent"), this);
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::fillRecentMenu);
    auto *quit = new QAction(QStringLiteral("&Quit"), this);
    quit->setShortcut(QKeySequence::Quit);
    connect(quit, &QAction::triggered, this, &QWidget::close);

    m_startAction = new QAction(style->standardIcon(QStyle::SP_MediaPlay), QStringLiteral("Start &demo search"), this);
    m_startAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    m_startAction->setToolTip(QStringLiteral("Search CPU kernels for the demo workload's softmax with the offline templates"));
    connect(m_startAction, &QAction::triggered, this, [this] { startDemoSearch(); });
    m_stopAction = new QAction(style->standardIcon(QStyle::SP_MediaPause), QStringLiteral("&Pause search"), this);
    m_stopAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Period));
    m_stopAction->setToolTip(QStringLiteral("Propose nothing more; the evaluations in flight finish (Search > Resume goes on)"));
    connect(m_stopAction, &QAction::triggered, this, &MainWindow::stopSearch);
    m_stopNowAction = new QAction(style->standardIcon(QStyle::SP_MediaStop), QStringLiteral("Stop &now"), this);
    m_stopNowAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Period));
    m_stopNowAction->setToolTip(QStringLiteral("End the search at once; the nodes in flight are marked interrupted and a resume evaluates them again"));
    connect(m_stopNowAction, &QAction::triggered, this, &MainWindow::stopSearchNow);
    m_resumeAction = new QAction(style->standardIcon(QStyle::SP_MediaSeekForward), QStringLiteral("&Resume search"), this);
    m_resumeAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
    m_resumeAction->setToolTip(QStringLiteral("Go on with the shown session's search up to its node budget, its unfinished nodes evaluated again"));
    connect(m_resumeAction, &QAction::triggered, this, [this] {
        const auto &snap = m_context->snapshot();
        if (snap && snap->session().status == "running") { // a crashed search, or one another process runs now
            auto *box = new QMessageBox(QMessageBox::Question, QStringLiteral("Resume a running search?"),
                                        QStringLiteral("The file says its search is still running. If another kforge is "
                                                       "writing it, resuming here too would search it twice; resume only "
                                                       "if that search has ended (a crash, a closed terminal)."),
                                        QMessageBox::Cancel, this);
            auto *resume = box->addButton(QStringLiteral("Resume here"), QMessageBox::AcceptRole);
            box->setAttribute(Qt::WA_DeleteOnClose);
            connect(box, &QMessageBox::finished, this, [this, box, resume] {
                if (box->clickedButton() == resume && !resumeSearch(true))
                    statusBar()->showMessage(QStringLiteral("Cannot resume: ") + m_lastError, 10000);
            });
            box->open();
            return;
        }
        if (!resumeSearch() && !m_lastError.isEmpty())
            statusBar()->showMessage(QStringLiteral("Cannot resume: ") + m_lastError, 10000);
    });
    m_campaignAction = new QAction(QStringLiteral("Start &campaign…"), this);
    m_campaignAction->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_R));
    m_campaignAction->setToolTip(QStringLiteral("Search every operator of a profiled workload, the node budget spread by the time each could save"));
    connect(m_campaignAction, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Profiled workload"), QString(),
                                                          QStringLiteral("Workload files (*.json);;All files (*)"));
        if (!path.isEmpty())
            openCampaignDialog(path);
    });
    m_exporter = new PackExporter(this);
    connect(m_exporter, &PackExporter::finished, this, &MainWindow::onExportFinished);
    m_exportAction = new QAction(QStringLiteral("&Export pack…"), this);
    m_exportAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    m_exportAction->setToolTip(QStringLiteral("Write the shown session's accepted kernels as a pack (kforge-cli export)"));
    connect(m_exportAction, &QAction::triggered, this, &MainWindow::onExportTriggered);

    auto *fit = new QAction(QStringLiteral("&Fit tree"), this);
    fit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    connect(fit, &QAction::triggered, m_tree, &TreeView::fitTree);
    auto *best = new QAction(QStringLiteral("Select &best node"), this);
    best->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
    connect(best, &QAction::triggered, this, &MainWindow::selectBestNode);

    auto *file = menuBar()->addMenu(QStringLiteral("&File"));
    file->addAction(m_openAction);
    file->addMenu(m_recentMenu);
    file->addAction(m_exportAction);
    file->addSeparator();
    file->addAction(m_workloads->openAction());
    file->addAction(m_workloads->openAfterAction());
    file->addAction(m_workloads->clearAfterAction());
    file->addSeparator();
    file->addAction(quit);
    auto *search = menuBar()->addMenu(QStringLiteral("&Search"));
    search->addAction(m_startAction);
    search->addAction(m_campaignAction);
    search->addAction(m_stopAction);
    search->addAction(m_stopNowAction);
    search->addAction(m_resumeAction);
    auto *view = menuBar()->addMenu(QStringLiteral("&View"));
    view->addAction(fit);
    view->addAction(best);
    view->addSeparator();
    view->addAction(m_inspectorDock->toggleViewAction());
    auto *node = menuBar()->addMenu(QStringLiteral("&Node"));
    node->addAction(m_inspector->acceptAction());
    node->addAction(m_inspector->rejectAction());
    auto *addCompare = new QAction(QStringLiteral("Add to &comparison"), this);
    addCompare->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_K));
    addCompare->setToolTip(QStringLiteral("Set the selected node beside the others in the Compare panel (or Ctrl-click nodes)"));
    connect(addCompare, &QAction::triggered, this, [this] {
        if (const qint64 id = m_context->selectedNode(); id && !m_context->compared().contains(id))
            m_context->setCompared(m_context->compared() + QList<qint64>{id});
    });
    auto *compareWithParent = new QAction(QStringLiteral("Compare with its pa&rent"), this);
    connect(compareWithParent, &QAction::triggered, this, [this] {
        const auto &snap = m_context->snapshot();
        const NodeRecord *n = snap ? snap->node(m_context->selectedNode()) : nullptr;
        if (n && n->parentId)
            m_context->setCompared({*n->parentId, n->id});
    });
    auto *clearCompare = new QAction(QStringLiteral("C&lear comparison"), this);
    connect(clearCompare, &QAction::triggered, this, [this] { m_context->setCompared({}); });
    auto *compareParent = new QAction(QStringLiteral("Diff against its &parent"), this);
    compareParent->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_D));
    connect(compareParent, &QAction::triggered, this, [this] { m_inspector->setDiffBase(0); });
    node->addAction(compareParent);
    node->addSeparator();
    node->addAction(addCompare);
    node->addAction(compareWithParent);
    node->addAction(clearCompare);
    view->addAction(m_compareDock->toggleViewAction());
    view->addAction(m_campaignDock->toggleViewAction());
    view->addAction(m_workloads->timelineDock()->toggleViewAction());
    view->addAction(m_workloads->tableDock()->toggleViewAction());

    auto *settingsAction = new QAction(QStringLiteral("S&ettings…"), this);
    settingsAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Comma));
    connect(settingsAction, &QAction::triggered, this, [this] { openSettingsDialog(); });
    search->addSeparator();
    search->addAction(settingsAction);

    auto *bar = addToolBar(QStringLiteral("Search"));
    bar->setObjectName(QStringLiteral("searchToolBar"));
    bar->setMovable(false);
    bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    bar->addAction(m_openAction);
    bar->addSeparator();
    bar->addAction(m_startAction);
    bar->addAction(m_stopAction);
    bar->addAction(m_resumeAction);
    bar->addSeparator();
    bar->addWidget(m_progress);
}

void MainWindow::updateActions()
{
    const bool running = m_search->isRunning();
    m_openAction->setEnabled(!running);
    m_startAction->setEnabled(!running);
    m_campaignAction->setEnabled(!running);
    m_stopAction->setEnabled(running && !m_search->stopRequested());
    m_stopNowAction->setEnabled(running);
    m_resumeAction->setEnabled(canResume());
    m_exportAction->setEnabled(!running && m_context->hasSession() && !m_exporter->isRunning());
}

QString MainWindow::progressText() const
{
    const auto &p = m_lastProgress;
    if (!m_search->isRunning() && m_livePath.isEmpty())
        return QStringLiteral("No search running");
    const double elapsed = m_search->isRunning() && m_elapsed.isValid() ? m_elapsed.elapsed() / 1000.0 : p.elapsedSeconds;
    QString text = QStringLiteral("evaluated %1 · running %2 · failed %3 · accepted %4")
                       .arg(p.evaluated)
                       .arg(p.running)
                       .arg(p.failed)
                       .arg(p.accepted);
    if (p.bestNode)
        text += QStringLiteral(" · best %1x (#%2)").arg(p.bestSpeedup, 0, 'f', 2).arg(p.bestNode);
    text += QStringLiteral(" · %1").arg(duration(elapsed));
    if (!p.stopReason.empty())
        text += QStringLiteral(" · %1").arg(QString::fromStdString(p.stopReason));
    return text;
}

void MainWindow::updateProgress()
{
    m_progress->setText(progressText());
}

QString MainWindow::newLiveSessionPath()
{
    const auto stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss-zzz"));
    return QDir::temp().filePath(QStringLiteral("kforge-demo-%1.kforge").arg(stamp));
}

QString MainWindow::openSession(const QString &path)
{
    if (m_search->isRunning())
        return QStringLiteral("A search is running; stop it before opening another session.");
    QEventLoop loop;
    QString result;
    bool started = false; // open() first answers an earlier open of the same file as dropped
    auto answer = [&](const QString &p, const QString &error) {
        if (started && p == path) {
            result = error;
            loop.quit();
        }
    };
    const auto finished = connect(m_context, &SessionContext::openFinished, &loop, answer);
    const auto dropped = connect(m_context, &SessionContext::openDropped, &loop, [&](const QString &p) {
        answer(p, QStringLiteral("another session was shown before %1 was read").arg(p));
    });
    m_context->open(path);
    started = true;
    loop.exec();
    disconnect(finished);
    disconnect(dropped);
    return result;
}

void MainWindow::onOpenStarted(const QString &path)
{
    m_openBusy->show();
    statusBar()->showMessage(QStringLiteral("Opening %1…").arg(QFileInfo(path).fileName()));
    if (!m_context->hasSession())
        m_tree->setPlaceholder(QStringLiteral("Opening %1…").arg(path));
}

// The session is shown (or could not be read): follow the file, remember it, say so.
void MainWindow::onOpenFinished(const QString &path, const QString &error)
{
    m_openBusy->hide();
    const bool person = std::exchange(m_reportOpenErrorsFor, QString()) == path;
    if (!error.isEmpty()) {
        statusBar()->showMessage(QStringLiteral("Cannot open %1: %2").arg(QFileInfo(path).fileName(), error));
        if (!m_context->hasSession())
            m_tree->setPlaceholder(QString());
        if (person)
            offerUpgradeOrReport(path, error);
        return;
    }
    const SnapshotPtr snap = m_context->snapshot();
    m_livePath.clear();
    m_liveSession = 0;
    m_lastProgress = {};
    m_watcher->watch(path, snap->session().id);
    m_tree->setPlaceholder(QString());
    // The settings file is written on its own turn of the event loop, not with the new tree's.
    QTimer::singleShot(1, this, [this, file = QFileInfo(path).absoluteFilePath()] { addRecent(file); });
    selectBestNode();
    setWindowTitle(QStringLiteral("%1 — kforge").arg(QFileInfo(path).fileName()));
    m_pathLabel->setText(path);
    statusBar()->showMessage(QStringLiteral("Opened %1: session \"%2\", %3 nodes")
                                 .arg(QFileInfo(path).fileName(), QString::fromStdString(snap->session().name))
                                 .arg(snap->nodes().size()));
    updateProgress();
}

void MainWindow::onOpenTriggered()
{
    const QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Open kforge session"), QString(),
                                                      QStringLiteral("kforge sessions (*.kforge);;All files (*)"));
    if (!path.isEmpty())
        openSessionInteractively(path);
}

void MainWindow::openSessionInteractively(const QString &path)
{
    if (m_search->isRunning()) {
        reportOpenError(path, QStringLiteral("A search is running; stop it before opening another session."));
        return;
    }
    m_reportOpenErrorsFor = path;
    m_context->open(path); // answered in onOpenFinished()
}

void MainWindow::offerUpgradeOrReport(const QString &path, const QString &error)
{
    int version = -1;
    try {
        version = SessionStore::fileSchemaVersion(path.toStdString());
    } catch (const std::exception &) {
    }
    if (version > 0 && version < SessionStore::currentSchemaVersion()) {
        auto *box = new QMessageBox(QMessageBox::Question, QStringLiteral("Upgrade session?"),
                                    QStringLiteral("%1\n\nUpgrade the file in place and open it? Older kforge builds "
                                                   "cannot read it afterwards.")
                                        .arg(error),
                                    QMessageBox::Cancel, this);
        auto *upgrade = box->addButton(QStringLiteral("Upgrade and open"), QMessageBox::AcceptRole);
        box->setAttribute(Qt::WA_DeleteOnClose);
        connect(box, &QMessageBox::finished, this, [this, box, upgrade, path] {
            if (box->clickedButton() == upgrade)
                if (const QString e = upgradeAndOpen(path); !e.isEmpty())
                    reportOpenError(path, e);
        });
        box->open();
        return;
    }
    reportOpenError(path, error);
}

QString MainWindow::upgradeAndOpen(const QString &path)
{
    try {
        SessionStore store(path.toStdString()); // migrates on open
    } catch (const std::exception &e) {
        return QString::fromStdString(e.what());
    }
    return openSession(path);
}

void MainWindow::reportOpenError(const QString &path, const QString &error)
{
    statusBar()->showMessage(QStringLiteral("Cannot open %1: %2").arg(QFileInfo(path).fileName(), error));
    if (!m_context->hasSession())
        m_tree->setPlaceholder(QStringLiteral("Cannot open %1\n\n%2\n\nOpen another session (Ctrl+O) or start a demo search (Ctrl+R).")
                                   .arg(path, error));
    m_lastError = error;
    auto *box = new QMessageBox(QMessageBox::Warning, QStringLiteral("Cannot open session"), error, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

QStringList MainWindow::recentSessions() const
{
    return QSettings().value(QStringLiteral("recentSessions")).toStringList();
}

void MainWindow::addRecent(const QString &path)
{
    QStringList list = recentSessions();
    list.removeAll(path);
    list.prepend(path);
    while (list.size() > 10)
        list.removeLast();
    QSettings().setValue(QStringLiteral("recentSessions"), list);
}

void MainWindow::fillRecentMenu()
{
    m_recentMenu->clear();
    const auto list = recentSessions();
    for (const QString &path : list) {
        auto *a = m_recentMenu->addAction(QFileInfo(path).fileName());
        a->setToolTip(path);
        a->setStatusTip(path);
        a->setEnabled(QFileInfo::exists(path));
        connect(a, &QAction::triggered, this, [this, path] { openSessionInteractively(path); });
    }
    if (list.isEmpty())
        m_recentMenu->addAction(QStringLiteral("No recent sessions"))->setEnabled(false);
}

// One line for the session shown: its state, the node budget spent, its workers and device, and
// when it should end at the rate nodes have been finishing.
QString MainWindow::sessionStatusText() const
{
    const auto &snap = m_context->snapshot();
    if (!snap)
        return {};
    const auto &info = snap->session();
    int finished = 0, running = 0;
    double last = 0;
    for (const auto &n : snap->nodes()) {
        if (!n.parentId)
            continue;
        if (n.status == "running")
            ++running;
        else
            ++finished;
        if (n.finishedAt)
            last = std::max(last, *n.finishedAt);
    }
    const int budget = sessionOption(info, "nodes");
    const int workers = sessionOption(info, "workers");
    const bool live = m_search->isRunning() || info.status == "running";
    QStringList parts;
    parts << QString::fromStdString(info.status);
    parts << (budget > 0 ? QStringLiteral("%1 of %2 nodes").arg(finished).arg(budget) : QStringLiteral("%1 nodes").arg(finished));
    if (running)
        parts << QStringLiteral("%1 running").arg(running);
    if (workers > 0)
        parts << QStringLiteral("%1 worker%2").arg(workers).arg(workers == 1 ? QString() : QStringLiteral("s"));
    parts << QStringLiteral("device: %1").arg(QString::fromStdString(info.backend.empty() ? std::string("?") : info.backend));
    if (live && budget > finished && finished > 0 && last > info.createdAt) {
        const double perNode = (last - info.createdAt) / finished;
        parts << QStringLiteral("ETA %1").arg(duration(perNode * (budget - finished)));
    }
    return parts.join(QStringLiteral(" · "));
}

void MainWindow::updateSessionStatus()
{
    m_sessionStatus->setText(sessionStatusText());
    const auto &snap = m_context->snapshot();
    const int budget = snap ? sessionOption(snap->session(), "nodes") : 0;
    m_budget->setVisible(budget > 0);
    if (budget > 0) {
        int finished = 0;
        for (const auto &n : snap->nodes())
            finished += n.parentId && n.status != "running";
        m_budget->setRange(0, budget);
        m_budget->setValue(std::min(finished, budget));
        m_budget->setFormat(QStringLiteral("%v / %m nodes"));
    }
}

void MainWindow::saveLayout()
{
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
}

void MainWindow::restoreLayout()
{
    QSettings settings;
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
}

void MainWindow::setSearchSettings(const SearchSettings &settings, bool save)
{
    m_settings = settings;
    if (save)
        m_settings.save();
    m_startAction->setToolTip(QStringLiteral("Search %1 kernels for the demo workload's softmax with the %2 proposer "
                                             "(%3 nodes, %4 worker(s))")
                                  .arg(m_settings.backend.toUpper(), m_settings.proposer.label())
                                  .arg(m_settings.nodes)
                                  .arg(m_settings.workers));
}

void MainWindow::setDemoSettings(int maxNodes, int workers, const QString &workerCommand)
{
    SearchSettings s = m_settings;
    s.nodes = maxNodes;
    s.workers = workers;
    s.workerCommand = workerCommand;
    setSearchSettings(s, false);
}

SettingsDialog *MainWindow::openSettingsDialog()
{
    auto *dialog = new SettingsDialog(m_settings, this, m_search->keyStore());
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        setSearchSettings(dialog->settings(), true);
        statusBar()->showMessage(QStringLiteral("Settings saved; the next search uses them."), 6000);
    });
    dialog->open();
    return dialog;
}

bool MainWindow::startDemoSearch()
{
    auto request = SearchRequest::demo(m_settings.nodes, m_settings.workers);
    request.workerCommand = m_settings.workerCommand;
    request.backend = m_settings.backend;
    request.proposer = m_settings.proposer.choice();
    return startSearch(request);
}

CampaignDialog *MainWindow::openCampaignDialog(const QString &workloadPath)
{
    const auto choice = m_settings.proposer.choice();
    auto *dialog = new CampaignDialog(workloadPath, m_settings.workerCommand, m_settings.backend, choice.isLlm(), m_settings.nodes, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        auto request = dialog->request();
        request.workerCommand = m_settings.workerCommand;
        request.workers = m_settings.workers;
        request.proposer = m_settings.proposer.choice();
        if (!startSearch(request))
            statusBar()->showMessage(QStringLiteral("A search is running; the campaign did not start."), 8000);
    });
    dialog->open();
    return dialog;
}

bool MainWindow::startSearch(SearchRequest request)
{
    if (request.sessionPath.isEmpty())
        request.sessionPath = newLiveSessionPath();
    if (!m_search->start(request))
        return false;
    m_lastError.clear();
    m_lastProgress = {};
    m_pending.clear();
    m_livePath.clear();
    m_liveSession = 0;
    m_elapsed.start();
    m_tick.start();
    updateActions();
    updateProgress();
    statusBar()->showMessage(QStringLiteral("Starting %1 worker(s)…").arg(request.workers));
    m_pathLabel->setText(request.sessionPath);
    return true;
}

void MainWindow::stopSearch()
{
    if (!m_search->isRunning())
        return;
    m_search->stop();
    updateActions();
    statusBar()->showMessage(QStringLiteral("Stopping: waiting for the evaluations in flight…"));
}

void MainWindow::stopSearchNow()
{
    if (!m_search->isRunning())
        return;
    m_search->stop(true);
    updateActions();
    statusBar()->showMessage(QStringLiteral("Stopping now: the nodes in flight are marked interrupted…"));
}

bool MainWindow::canResume() const
{
    const auto &snap = m_context->snapshot();
    if (m_search->isRunning() || !snap || snap->path().empty())
        return false;
    if (snap->session().status == "stopped")
        return true;
    for (const auto &n : snap->nodes())
        if (n.status == "running" || n.status == "interrupted")
            return true;
    return false;
}

bool MainWindow::resumeSearch(bool evenIfMarkedRunning)
{
    if (!canResume()) {
        m_lastError = QStringLiteral("the shown session is finished, or a search is running");
        return false;
    }
    const auto &snap = m_context->snapshot();
    if (snap->session().status == "running" && !evenIfMarkedRunning) {
        m_lastError = QStringLiteral("the file says its search is still running (another kforge may be writing it)");
        return false;
    }
    const QString path = QString::fromStdString(snap->path());
    SearchRequest request;
    try {
        request = SearchRequest::resumeOf(path);
        const SessionStore store(path.toStdString(), SessionStore::Mode::ReadOnly);
        if (store.sessions().back().id != snap->session().id)
            throw Error("a resume goes on with the last search in " + path.toStdString() + ", which is not the one shown");
    } catch (const std::exception &e) {
        m_lastError = QString::fromStdString(e.what());
        return false;
    }
    request.workerCommand = m_settings.workerCommand; // this machine's worker, not the one the search first used
    if (!startSearch(request))
        return false;
    statusBar()->showMessage(QStringLiteral("Resuming %1 up to %2 nodes…").arg(QFileInfo(path).fileName()).arg(request.options.maxNodes));
    return true;
}

void MainWindow::onExportTriggered()
{
    const QString dir = QFileDialog::getExistingDirectory(this, QStringLiteral("Export the pack to an empty folder"));
    if (!dir.isEmpty())
        exportPack(dir);
}

bool MainWindow::exportPack(const QString &outDir, const QString &cliPath)
{
    const auto &snap = m_context->snapshot();
    if (!snap || snap->path().empty() || m_search->isRunning())
        return false;
    if (!m_exporter->start(QString::fromStdString(snap->path()), outDir, cliPath.isEmpty() ? defaultCliPath() : cliPath))
        return false;
    updateActions();
    statusBar()->showMessage(QStringLiteral("Exporting a pack to %1 (compiling the accepted kernels)…").arg(outDir));
    return true;
}

void MainWindow::onExportFinished(const PackExportResult &result)
{
    m_lastExport = result;
    updateActions();
    statusBar()->showMessage(result.ok ? QStringLiteral("Wrote the pack %1: %2 kernel(s)").arg(result.outDir).arg(result.included.size())
                                       : QStringLiteral("Export failed: ") + result.error,
                             15000);
    auto *box = new QMessageBox(result.ok ? QMessageBox::Information : QMessageBox::Warning,
                                result.ok ? QStringLiteral("Pack exported") : QStringLiteral("Cannot export the pack"), result.text(),
                                QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    if (!m_closing)
        box->open();
}

void MainWindow::onSessionCreated(const QString &path, const SessionInfo &info)
{
    m_watcher->stop(); // this window's own search reports its nodes directly
    m_tree->setPlaceholder(QString());
    m_livePath = path;
    m_liveSession = info.id;
    // The row exists, so a read-only connection sees the session and its operator card.
    SnapshotPtr snap;
    try {
        SessionStore store(path.toStdString(), SessionStore::Mode::ReadOnly);
        snap = std::make_shared<const SessionSnapshot>(SessionSnapshot::load(store, info.id));
    } catch (const std::exception &) {
        snap = std::make_shared<const SessionSnapshot>(path.toStdString(), info, std::vector<OperatorRecord>{},
                                                       std::vector<NodeRecord>{});
    }
    m_context->load(snap);
    setWindowTitle(QStringLiteral("%1 — kforge (searching)").arg(QFileInfo(path).fileName()));
    statusBar()->showMessage(QStringLiteral("Searching; writing %1").arg(path));
}

void MainWindow::queueNode(const NodeRecord &node)
{
    m_pending.push_back(node);
    if (!m_applyTimer.isActive())
        m_applyTimer.start();
}

void MainWindow::applyPendingNodes()
{
    m_applyTimer.stop();
    if (m_pending.empty())
        return;
    if (!m_context->isShowing(m_livePath, m_liveSession)) {
        m_pending.clear(); // the user is looking at another session: these are not for it
        return;
    }
    auto snap = *m_context->snapshot();
    std::set<int64_t> finished;
    for (const auto &n : m_pending) {
        snap = snap.withNode(n);
        if (n.status != "running")
            finished.insert(n.id);
    }
    m_pending.clear();
    if (!finished.empty()) {
        // Reports carry neither timing samples nor the roofline floor; the hover card's median and
        // roofline fraction come from the file, which already holds these nodes' verdicts.
        try {
            SessionStore store(m_livePath.toStdString(), SessionStore::Mode::ReadOnly);
            std::vector<NodeTiming> timings;
            for (const auto &t : store.candidateTimings(m_liveSession))
                if (finished.count(t.nodeId))
                    timings.push_back(t);
            snap = snap.withTimings(timings);
            for (const auto &n : store.nodes(m_liveSession, *finished.begin() - 1))
                if (finished.count(n.id) && n.status != "running")
                    snap = snap.withNode(n);
        } catch (const std::exception &) {
            // the file is busy: the next burst's nodes still get theirs
        }
    }
    m_context->update(std::make_shared<const SessionSnapshot>(std::move(snap)));
}

void MainWindow::onFinished(const SearchProgress &progress)
{
    applyPendingNodes();
    if (m_context->isShowing(m_livePath, m_liveSession)) {
        // The file has the last word: the session's status (what Resume looks at), and the nodes a stop
        // now marked interrupted without reporting them.
        try {
            SessionStore store(m_livePath.toStdString(), SessionStore::Mode::ReadOnly);
            m_context->update(std::make_shared<const SessionSnapshot>(SessionSnapshot::load(store, m_liveSession)));
        } catch (const std::exception &) {
            // the tree keeps them as running; the file is right and a reopen shows it
        }
    }
    m_lastProgress = progress;
    m_tick.stop();
    updateActions();
    updateProgress();
    if (!m_livePath.isEmpty())
        setWindowTitle(QStringLiteral("%1 — kforge").arg(QFileInfo(m_livePath).fileName()));
    if (m_lastError.isEmpty())
        statusBar()->showMessage(QStringLiteral("Search finished (%1); session saved in %2")
                                     .arg(QString::fromStdString(progress.stopReason), m_livePath));
    if (m_context->selectedNode() == 0)
        selectBestNode();
    emit searchFinished();
    if (m_closing)
        close();
}

bool MainWindow::applyFilter(const QString &status, const QString &templateId, bool hide)
{
    bool ok = true;
    auto choose = [&ok](QComboBox *box, const QString &value) {
        const int i = value.isEmpty() ? 0 : box->findData(value);
        ok = ok && i >= 0;
        box->setCurrentIndex(std::max(0, i));
    };
    choose(m_filterBar->statusBox(), status);
    choose(m_filterBar->templateBox(), templateId);
    m_filterBar->hideBox()->setChecked(hide);
    return ok;
}

void MainWindow::selectBestNode()
{
    if (const auto &snap = m_context->snapshot(); snap && snap->bestNodeId())
        m_context->select(snap->bestNodeId());
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    if (m_search->isRunning()) {
        // Let the evaluations in flight finish and the session be marked stopped, then close.
        m_closing = true;
        stopSearch();
        event->ignore();
        return;
    }
    saveLayout();
    QMainWindow::closeEvent(event);
}

void MainWindow::showEvent(QShowEvent *event)
{
    QMainWindow::showEvent(event);
    if (!m_restored) { // docks only know the window's width once shown
        m_restored = true;
        resizeDocks({m_inspectorDock}, {width() * 42 / 100}, Qt::Horizontal);
        restoreLayout();
    }
}

} // namespace kforge::ui
