#include "ui/session_context.h"

#include <QtConcurrent/QtConcurrentRun>
#include <utility>

#include "store/session_store.h"

namespace kforge::ui {

QFuture<SnapshotRead> readSnapshotAsync(const QString &path, std::optional<qint64> sessionId)
{
    return QtConcurrent::run([path, sessionId]() -> SnapshotRead {
        try {
            return {SessionSnapshot::read(path.toStdString(), sessionId), {}};
        } catch (const std::exception &e) {
            return {nullptr, QString::fromStdString(e.what())};
        }
    });
}

SessionContext::SessionContext(QObject *parent) : QObject(parent) {}

void SessionContext::open(const QString &path)
{
    supersedeOpen();
    const quint64 job = m_openJob;
    m_opening = path;
    emit openStarted(path);
    readSnapshotAsync(path).then(this, [this, job, path](const SnapshotRead &read) {
        // A read that ended before then() was attached runs this at once, inside open(): post the
        // answer, so that open() never answers before it returns.
        QMetaObject::invokeMethod(
            this,
            [this, job, path, read] {
                if (job != m_openJob)
                    return; // another file was opened, or a search shown, meanwhile
                m_opening.clear();
                if (read.snapshot)
                    load(read.snapshot);
                emit openFinished(path, read.error);
            },
            Qt::QueuedConnection);
    });
}

void SessionContext::supersedeOpen()
{
    ++m_openJob;
    if (m_opening.isEmpty())
        return;
    emit openDropped(std::exchange(m_opening, QString()));
}

void SessionContext::load(SnapshotPtr snapshot)
{
    supersedeOpen();
    m_snapshot = std::move(snapshot);
    m_selected = 0;
    const bool hadCompared = !m_compared.isEmpty();
    m_compared.clear();
    emit sessionLoaded();
    if (hadCompared)
        emit comparedChanged(m_compared);
    emit selectionChanged(0);
}

void SessionContext::update(SnapshotPtr snapshot)
{
    m_snapshot = std::move(snapshot);
    emit nodesChanged();
}

void SessionContext::close()
{
    supersedeOpen();
    if (!m_snapshot)
        return;
    m_snapshot.reset();
    m_selected = 0;
    emit selectionChanged(0);
    emit sessionClosed();
    if (!m_compared.isEmpty()) {
        m_compared.clear();
        emit comparedChanged(m_compared);
    }
}

QString SessionContext::sessionPath() const
{
    return m_snapshot ? QString::fromStdString(m_snapshot->path()) : QString();
}

bool SessionContext::isShowing(const QString &path, qint64 sessionId) const
{
    return m_snapshot && m_snapshot->session().id == sessionId && sessionPath() == path;
}

void SessionContext::select(qint64 nodeId)
{
    if (nodeId == m_selected)
        return;
    if (nodeId != 0 && (!m_snapshot || !m_snapshot->node(nodeId)))
        return; // not in this session: a stale click
    m_selected = nodeId;
    emit selectionChanged(nodeId);
}

void SessionContext::setCompared(const QList<qint64> &ids)
{
    QList<qint64> kept;
    for (qint64 id : ids)
        if (m_snapshot && m_snapshot->node(id) && !kept.contains(id))
            kept.append(id);
    if (kept == m_compared)
        return;
    m_compared = kept;
    emit comparedChanged(m_compared);
}

void SessionContext::toggleCompared(qint64 nodeId)
{
    QList<qint64> ids = m_compared;
    if (!ids.removeOne(nodeId))
        ids.append(nodeId);
    setCompared(ids);
}

QString SessionContext::decide(qint64 nodeId, const QString &decision, const QString &reason)
{
    if (!m_snapshot || !m_snapshot->node(nodeId))
        return QStringLiteral("node #%1 is not in the session shown").arg(nodeId);
    DecisionRecord rec;
    try {
        // Its own short-lived connection: the window otherwise only reads. A search writing the same
        // file in another process holds the lock for one small transaction at a time.
        SessionStore store(m_snapshot->path());
        rec.id = store.addDecision(nodeId, decision.toStdString(), "user", reason.toStdString());
    } catch (const std::exception &e) {
        return QString::fromStdString(e.what());
    }
    rec.nodeId = nodeId;
    rec.decision = decision.toStdString();
    rec.actor = "user";
    rec.reason = reason.toStdString();
    rec.createdAt = nowSeconds();
    update(std::make_shared<const SessionSnapshot>(m_snapshot->withDecision(rec)));
    emit decisionRecorded(nodeId);
    return {};
}

} // namespace kforge::ui
