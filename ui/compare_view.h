#pragma once
// The Compare panel: the nodes in SessionContext::compared() as a table (compare_model.h), and the
// diff of the first two below it. Details are read through the panel's own read-only connection when
// the set changes or a compared node's status does; the diff is computed on a pool thread, and a result for an older set is dropped.
#include <QPointer>
#include <QWidget>
#include <memory>

namespace kforge {
class SessionStore;
}

class QLabel;
class QTableView;

namespace kforge::ui {

class CompareModel;
class DiffView;
class SessionContext;

class CompareView : public QWidget {
    Q_OBJECT
public:
    explicit CompareView(SessionContext *context, QWidget *parent = nullptr);
    ~CompareView() override;

    CompareModel *model() const { return m_model; }
    QTableView *table() const { return m_table; }
    DiffView *diffView() const { return m_diff; }
    QString statusText() const;

signals:
    void diffShown(); // the first two compared nodes' diff is on screen

private:
    void reload();
    QString shownState() const;

    QPointer<SessionContext> m_context;
    CompareModel *m_model;
    QTableView *m_table;
    DiffView *m_diff;
    QLabel *m_status;
    std::unique_ptr<SessionStore> m_store;
    QString m_storePath;
    quint64 m_job = 0;
    QString m_shownState;
};

} // namespace kforge::ui
