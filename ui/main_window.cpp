#include "ui/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QSplitter>
#include <QStatusBar>
#include <QStyle>
#include <QToolBar>

#include "store/session_store.h"
#include "ui/node_inspector.h"
#include "ui/session_context.h"
#include "ui/session_snapshot.h"
#include "ui/status_style.h"
#include "ui/tree_view.h"

namespace kforge::ui {

namespace {
QString duration(double seconds)
{
    const int s = int(seconds);
    return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}
} // namespace

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent), m_context(new SessionContext(this)), m_search(new SearchController(this)),
      m_tree(new TreeView(m_context, this)), m_inspector(new NodeInspector(m_context, this)),
      m_split(new QSplitter(Qt::Horizontal, this)), m_progress(new QLabel(this)), m_pathLabel(new QLabel(this))
{
    setWindowTitle(QStringLiteral("kforge"));
    m_split->addWidget(m_tree);
    m_split->addWidget(m_inspector);
    m_split->setStretchFactor(0, 3);
    m_split->setStretchFactor(1, 2);
    m_split->setChildrenCollapsible(false);
    setCentralWidget(m_split);

    createActions();
    m_progress->setContentsMargins(12, 0, 12, 0);
    m_pathLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    statusBar()->addPermanentWidget(m_pathLabel);

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
    connect(m_context, &SessionContext::selectionChanged, this, [this](qint64 id) {
        if (id)
            statusBar()->showMessage(QStringLiteral("Selected node #%1").arg(id), 4000);
    });

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
    auto *quit = new QAction(QStringLiteral("&Quit"), this);
    quit->setShortcut(QKeySequence::Quit);
    connect(quit, &QAction::triggered, this, &QWidget::close);

    m_startAction = new QAction(style->standardIcon(QStyle::SP_MediaPlay), QStringLiteral("Start &demo search"), this);
    m_startAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    m_startAction->setToolTip(QStringLiteral("Search CPU kernels for the demo workload's softmax with the offline templates"));
    connect(m_startAction, &QAction::triggered, this, [this] { startDemoSearch(); });
    m_stopAction = new QAction(style->standardIcon(QStyle::SP_MediaStop), QStringLiteral("&Stop search"), this);
    m_stopAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Period));
    connect(m_stopAction, &QAction::triggered, this, &MainWindow::stopSearch);

    auto *fit = new QAction(QStringLiteral("&Fit tree"), this);
    fit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    connect(fit, &QAction::triggered, m_tree, &TreeView::fitTree);
    auto *best = new QAction(QStringLiteral("Select &best node"), this);
    best->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
    connect(best, &QAction::triggered, this, &MainWindow::selectBestNode);

    auto *file = menuBar()->addMenu(QStringLiteral("&File"));
    file->addAction(m_openAction);
    file->addSeparator();
    file->addAction(quit);
    auto *search = menuBar()->addMenu(QStringLiteral("&Search"));
    search->addAction(m_startAction);
    search->addAction(m_stopAction);
    auto *view = menuBar()->addMenu(QStringLiteral("&View"));
    view->addAction(fit);
    view->addAction(best);

    auto *bar = addToolBar(QStringLiteral("Search"));
    bar->setObjectName(QStringLiteral("searchToolBar"));
    bar->setMovable(false);
    bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    bar->addAction(m_openAction);
    bar->addSeparator();
    bar->addAction(m_startAction);
    bar->addAction(m_stopAction);
    bar->addSeparator();
    bar->addWidget(m_progress);
}

void MainWindow::updateActions()
{
    const bool running = m_search->isRunning();
    m_openAction->setEnabled(!running);
    m_startAction->setEnabled(!running);
    m_stopAction->setEnabled(running && !m_search->stopRequested());
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
    SnapshotPtr snap;
    try {
        SessionStore store(path.toStdString(), SessionStore::Mode::ReadOnly);
        snap = std::make_shared<const SessionSnapshot>(SessionSnapshot::load(store));
    } catch (const std::exception &e) {
        return QString::fromStdString(e.what());
    }
    m_livePath.clear();
    m_liveSession = 0;
    m_lastProgress = {};
    m_context->load(snap);
    selectBestNode();
    setWindowTitle(QStringLiteral("%1 — kforge").arg(QFileInfo(path).fileName()));
    m_pathLabel->setText(path);
    statusBar()->showMessage(QStringLiteral("Opened %1: session \"%2\", %3 nodes")
                                 .arg(QFileInfo(path).fileName(), QString::fromStdString(snap->session().name))
                                 .arg(snap->nodes().size()));
    updateProgress();
    return {};
}

void MainWindow::onOpenTriggered()
{
    const QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Open kforge session"), QString(),
                                                      QStringLiteral("kforge sessions (*.kforge);;All files (*)"));
    if (path.isEmpty())
        return;
    const QString error = openSession(path);
    if (!error.isEmpty())
        QMessageBox::warning(this, QStringLiteral("Cannot open session"), error);
}

void MainWindow::setDemoSettings(int maxNodes, int workers, const QString &workerCommand)
{
    m_demoNodes = maxNodes;
    m_demoWorkers = workers;
    m_workerCommand = workerCommand;
}

bool MainWindow::startDemoSearch()
{
    auto request = SearchRequest::demo(m_demoNodes, m_demoWorkers);
    request.workerCommand = m_workerCommand;
    return startSearch(request);
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

void MainWindow::onSessionCreated(const QString &path, const SessionInfo &info)
{
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
    for (const auto &n : m_pending)
        snap = snap.withNode(n);
    m_pending.clear();
    m_context->update(std::make_shared<const SessionSnapshot>(std::move(snap)));
}

void MainWindow::onFinished(const SearchProgress &progress)
{
    applyPendingNodes();
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
    QMainWindow::closeEvent(event);
}

void MainWindow::showEvent(QShowEvent *event)
{
    QMainWindow::showEvent(event);
    if (!m_sized) { // the splitter only knows its width once shown
        m_sized = true;
        const int w = m_split->width();
        m_split->setSizes({w * 58 / 100, w * 42 / 100});
    }
}

} // namespace kforge::ui
