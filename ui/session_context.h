#pragma once
// The hub panels observe: which session is shown, its latest snapshot and the selected node. Panels
// never talk to each other; they react to these signals and report user choices back through
// select(). Everything here runs on the GUI thread.
#include <QFuture>
#include <QList>
#include <QObject>
#include <optional>

#include "ui/session_snapshot.h"

namespace kforge::ui {

// What a read of a session file on a pool thread hands back: a snapshot, or why there is none.
struct SnapshotRead {
    SnapshotPtr snapshot;
    QString error;
};
// SessionSnapshot::read() on a pool thread. The open and the live reload both read this way.
QFuture<SnapshotRead> readSnapshotAsync(const QString &path, std::optional<qint64> sessionId = {});

class SessionContext : public QObject {
    Q_OBJECT
public:
    explicit SessionContext(QObject *parent = nullptr);

    // Reads the file's first session on a pool thread, so the window stays responsive, then load()s
    // it. Every open() is answered once: openFinished() with an empty error once the session is shown,
    // or with the reason (the file untouched); or openDropped() when a later open(), load() or close()
    // came first, and its read, when it returns, is dropped. The answer never comes before open()
    // returns (openDropped() for an earlier open does, from inside it).
    void open(const QString &path);
    bool isOpening() const { return !m_opening.isEmpty(); }
    QString openingPath() const { return m_opening; }

    // A different session is shown: panels drop what they had. Clears the selection.
    void load(SnapshotPtr snapshot);
    // The same session with more or changed nodes (a live search).
    void update(SnapshotPtr snapshot);
    void close();

    bool hasSession() const { return m_snapshot != nullptr; }
    const SnapshotPtr &snapshot() const { return m_snapshot; }
    QString sessionPath() const;
    // True when the snapshot belongs to this file and session; live updates for anything else are stale.
    bool isShowing(const QString &path, qint64 sessionId) const;

    qint64 selectedNode() const { return m_selected; } // 0: none
    void select(qint64 nodeId);

    // A person accepts or rejects a node: written to the file through the core store (actor "user"),
    // then shown in a new snapshot. Returns an empty string, or why it could not be written (the
    // file read-only, the node not in it); nothing changes then.
    QString decide(qint64 nodeId, const QString &decision, const QString &reason);

    // The nodes set side by side for comparison (Ctrl-click in the tree, Node > Compare), in the order
    // they were added; ids not in the session are ignored. Cleared when another session is shown.
    const QList<qint64> &compared() const { return m_compared; }
    void setCompared(const QList<qint64> &ids);
    void toggleCompared(qint64 nodeId);

signals:
    void openStarted(const QString &path);
    void openFinished(const QString &path, const QString &error);
    void openDropped(const QString &path);
    void sessionLoaded();
    void sessionClosed();
    void nodesChanged();
    void selectionChanged(qint64 nodeId);
    void decisionRecorded(qint64 nodeId); // after nodesChanged() has shown it
    void comparedChanged(const QList<qint64> &ids);

private:
    void supersedeOpen();

    SnapshotPtr m_snapshot;
    quint64 m_openJob = 0; // a read whose job is no longer this one is stale
    QString m_opening;
    qint64 m_selected = 0;
    QList<qint64> m_compared;
};

} // namespace kforge::ui
