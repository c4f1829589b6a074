#include "ui/session_context.h"

namespace kforge::ui {

SessionContext::SessionContext(QObject *parent) : QObject(parent) {}

void SessionContext::load(SnapshotPtr snapshot)
{
    m_snapshot = std::move(snapshot);
    m_selected = 0;
    emit sessionLoaded();
    emit selectionChanged(0);
}

void SessionContext::update(SnapshotPtr snapshot)
{
    m_snapshot = std::move(snapshot);
    emit nodesChanged();
}

void SessionContext::close()
{
    if (!m_snapshot)
        return;
    m_snapshot.reset();
    m_selected = 0;
    emit selectionChanged(0);
    emit sessionClosed();
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

} // namespace kforge::ui
