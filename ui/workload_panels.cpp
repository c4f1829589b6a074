#include "ui/workload_panels.h"

#include <QAction>
#include <QDockWidget>
#include <QEventLoop>
#include <QFileDialog>
#include <QFileInfo>
#include <QMainWindow>
#include <QMessageBox>
#include <utility>

#include "ui/operator_table.h"
#include "ui/timeline_view.h"
#include "ui/workload_context.h"

namespace kforge::ui {

WorkloadPanels::WorkloadPanels(QMainWindow *window, SessionContext *session)
    : QObject(window), m_window(window), m_context(new WorkloadContext(this)), m_timeline(new TimelineView(m_context, window)),
      m_table(new OperatorTable(m_context, session, window)), m_timelineDock(new QDockWidget(QStringLiteral("Timeline"), window)),
      m_tableDock(new QDockWidget(QStringLiteral("Operators"), window)),
      m_openAction(new QAction(QStringLiteral("Open &workload…"), this)),
      m_openAfterAction(new QAction(QStringLiteral("Open workload profile &with a pack…"), this)),
      m_clearAfterAction(new QAction(QStringLiteral("Close the profile with the pack"), this))
{
    const auto features = QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable | QDockWidget::DockWidgetClosable;
    m_timelineDock->setObjectName(QStringLiteral("timelineDock"));
    m_timelineDock->setWidget(m_timeline);
    m_timelineDock->setFeatures(features);
    m_tableDock->setObjectName(QStringLiteral("operatorsDock"));
    m_tableDock->setWidget(m_table);
    m_tableDock->setFeatures(features);
    window->addDockWidget(Qt::BottomDockWidgetArea, m_timelineDock);
    window->addDockWidget(Qt::BottomDockWidgetArea, m_tableDock);
    window->splitDockWidget(m_timelineDock, m_tableDock, Qt::Vertical);
    m_timelineDock->hide();
    m_tableDock->hide();

    m_openAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    m_openAction->setToolTip(QStringLiteral("Show a profiled workload (kforge-cli profile writes its calls into the file)"));
    connect(m_openAction, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getOpenFileName(m_window, QStringLiteral("Open workload"), QString(),
                                                          QStringLiteral("kforge workloads (*.json);;All files (*)"));
        if (!path.isEmpty())
            open(path);
    });
    m_openAfterAction->setToolTip(QStringLiteral("Show a second profile of the same workload, run with a pack, under the first"));
    connect(m_openAfterAction, &QAction::triggered, this, [this] {
        // Start where kforge-cli profile --pack writes it: beside the workload shown.
        QString start;
        if (const auto &p = m_context->profile()) {
            const QString shown = QString::fromStdString(p->path());
            start = packProfileBeside(shown).isEmpty() ? QFileInfo(shown).absolutePath() : packProfileBeside(shown);
        }
        const QString path = QFileDialog::getOpenFileName(m_window, QStringLiteral("Open the profile run with a pack"), start,
                                                          QStringLiteral("kforge workloads (*.json);;All files (*)"));
        if (!path.isEmpty())
            openAfter(path);
    });
    connect(m_clearAfterAction, &QAction::triggered, m_context, &WorkloadContext::clearAfter);
    auto enable = [this] {
        m_openAfterAction->setEnabled(m_context->profile() != nullptr);
        m_clearAfterAction->setEnabled(m_context->after() != nullptr);
    };
    enable();

    connect(m_context, &WorkloadContext::profileLoaded, this, [this, enable] {
        enable();
        showDocks();
        const auto &p = m_context->profile();
        emit message(QStringLiteral("Opened workload %1: %2 calls, %3 cards")
                         .arg(QString::fromStdString(p->file().name))
                         .arg(p->file().calls.size())
                         .arg(p->file().cards.size()));
        if (!m_autoAfterFor.isEmpty() && p->path() == m_autoAfterFor.toStdString())
            openAfter(packProfileBeside(std::exchange(m_autoAfterFor, QString())));
    });
    connect(m_context, &WorkloadContext::comparisonChanged, this, [this, enable] {
        enable();
        if (const auto *c = m_context->comparison()) {
            int changed = 0;
            for (const auto &o : c->operators)
                changed += o.changed;
            emit message(QStringLiteral("With the pack: %1 → %2 at top level, %3 call pattern%4 changed")
                             .arg(QString::fromStdString(formatDuration(c->beforeUs)), QString::fromStdString(formatDuration(c->afterUs)))
                             .arg(changed)
                             .arg(changed == 1 ? QString() : QStringLiteral("s")));
        }
    });
    connect(m_context, &WorkloadContext::openFailed, this, [this](const QString &path, const QString &error) {
        emit message(QStringLiteral("Cannot open %1: %2").arg(QFileInfo(path).fileName(), error));
        if (!m_dialogs)
            return;
        auto *box = new QMessageBox(QMessageBox::Warning, QStringLiteral("Cannot open workload"), error, QMessageBox::Ok, m_window);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    });
}

void WorkloadPanels::showDocks()
{
    bool shown = false;
    for (auto *dock : {m_timelineDock, m_tableDock})
        if (dock->isHidden()) {
            dock->show();
            shown = true;
        }
    m_timelineDock->raise();
    // First shown: room for a few lanes and the ranked table; after that the person's layout stays.
    if (shown && !m_timelineDock->isFloating() && !m_tableDock->isFloating()) {
        const int h = m_window->height();
        m_window->resizeDocks({m_timelineDock, m_tableDock}, {h * 3 / 10, h * 3 / 10}, Qt::Vertical);
    }
}

QString WorkloadPanels::packProfileBeside(const QString &workloadPath)
{
    QString stem = workloadPath;
    if (stem.endsWith(QLatin1String(".with-pack.json")))
        return {}; // that is the second profile itself
    if (stem.endsWith(QLatin1String(".json")))
        stem.chop(5);
    const QString beside = stem + QStringLiteral(".with-pack.json");
    return QFileInfo(beside).isFile() ? beside : QString();
}

void WorkloadPanels::open(const QString &path)
{
    m_autoAfterFor = packProfileBeside(path).isEmpty() ? QString() : path;
    emit message(QStringLiteral("Reading workload %1…").arg(QFileInfo(path).fileName()));
    m_context->open(path);
}

void WorkloadPanels::openAfter(const QString &path)
{
    emit message(QStringLiteral("Reading the profile with the pack, %1…").arg(QFileInfo(path).fileName()));
    m_context->openAfter(path);
}

QString WorkloadPanels::openAndWait(const QString &path, bool after)
{
    QEventLoop loop;
    QString error;
    auto done = [&loop] { loop.quit(); };
    const auto ok = connect(m_context, after ? &WorkloadContext::comparisonChanged : &WorkloadContext::profileLoaded, &loop, done);
    const auto failed = connect(m_context, &WorkloadContext::openFailed, &loop, [&](const QString &, const QString &e) {
        error = e;
        loop.quit();
    });
    m_dialogs = false;
    after ? openAfter(path) : open(path);
    if (m_context->isReading())
        loop.exec();
    m_dialogs = true;
    disconnect(ok);
    disconnect(failed);
    return error;
}

} // namespace kforge::ui
