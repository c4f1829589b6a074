#include "ui/session_watcher.h"

#include <QFileInfo>

#include "ui/session_context.h"

namespace kforge::ui {

SessionWatcher::SessionWatcher(SessionContext *context, QObject *parent) : QObject(parent), m_context(context)
{
    m_poll.setInterval(1000);
    connect(&m_poll, &QTimer::timeout, this, &SessionWatcher::check);
    m_settle.setSingleShot(true);
    m_settle.setInterval(60);
    connect(&m_settle, &QTimer::timeout, this, &SessionWatcher::check);
    connect(&m_files, &QFileSystemWatcher::fileChanged, this, [this] { m_settle.start(); });
}

void SessionWatcher::watch(const QString &path, qint64 sessionId)
{
    stop();
    m_path = path;
    m_session = sessionId;
    m_seen = stamp();
    rewatch();
    m_poll.start();
}

void SessionWatcher::stop()
{
    ++m_job; // a read in flight is now stale
    m_path.clear();
    m_session = 0;
    m_poll.stop();
    m_settle.stop();
    if (!m_files.files().isEmpty())
        m_files.removePaths(m_files.files());
}

SessionWatcher::Stamp SessionWatcher::stamp() const
{
    const QFileInfo db(m_path), wal(m_path + QStringLiteral("-wal"));
    return {db.exists() ? db.size() : -1, wal.exists() ? wal.size() : -1, db.lastModified(), wal.lastModified()};
}

// The watcher drops a path when the file is replaced, and cannot watch a -wal before it exists.
void SessionWatcher::rewatch()
{
    for (const QString &f : {m_path, m_path + QStringLiteral("-wal")})
        if (!m_files.files().contains(f) && QFileInfo::exists(f))
            m_files.addPath(f);
}

void SessionWatcher::check()
{
    if (m_path.isEmpty())
        return;
    rewatch();
    const Stamp now = stamp();
    if (now == m_seen)
        return;
    m_seen = now;
    reload();
}

void SessionWatcher::reload()
{
    if (m_inFlight) {
        m_again = true;
        return;
    }
    m_inFlight = true;
    m_again = false;
    const quint64 job = m_job;
    const QString path = m_path;
    const qint64 session = m_session;
    readSnapshotAsync(path, session).then(this, [this, job, path, session](const SnapshotRead &loaded) {
        m_inFlight = false;
        if (job != m_job || !m_context || !m_context->isShowing(path, session))
            return; // another file is shown now
        if (loaded.snapshot) {
            ++m_reloads;
            m_context->update(loaded.snapshot);
            emit reloaded(int(loaded.snapshot->nodes().size()));
        } else {
            emit reloadFailed(loaded.error);
        }
        if (m_again)
            reload();
    });
}

} // namespace kforge::ui
