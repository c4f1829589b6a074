#pragma once
// Follows a session file that another process writes (a `kforge-cli search --session F` running
// beside the window). A QFileSystemWatcher on the file and its -wal, and a slow poll for what the
// watcher misses (a -wal created later, file systems without notifications), notice a change by size
// and time; the file is then read on a pool thread into a new immutable snapshot, and the context is
// updated on the GUI thread, selection kept. One read runs at a time; changes during it ask for one
// more. A read whose file is no longer shown is dropped.
#include <QDateTime>
#include <QFileSystemWatcher>
#include <QObject>
#include <QPointer>
#include <QTimer>

namespace kforge::ui {

class SessionContext;

class SessionWatcher : public QObject {
    Q_OBJECT
public:
    explicit SessionWatcher(SessionContext *context, QObject *parent = nullptr);

    void watch(const QString &path, qint64 sessionId);
    void stop();
    bool isWatching() const { return !m_path.isEmpty(); }
    int reloads() const { return m_reloads; }
    void setPollInterval(int ms) { m_poll.setInterval(ms); }

signals:
    void reloaded(int nodes);
    void reloadFailed(const QString &message); // the old snapshot stays

private:
    struct Stamp {
        qint64 size = -1, walSize = -1;
        QDateTime modified, walModified;
        bool operator==(const Stamp &) const = default;
    };
    Stamp stamp() const;
    void check();
    void reload();
    void rewatch();

    QPointer<SessionContext> m_context;
    QFileSystemWatcher m_files;
    QTimer m_poll;
    QTimer m_settle; // a commit touches the file and its -wal several times: read once after them
    QString m_path;
    qint64 m_session = 0;
    Stamp m_seen;
    quint64 m_job = 0;
    bool m_inFlight = false;
    bool m_again = false;
    int m_reloads = 0;
};

} // namespace kforge::ui
