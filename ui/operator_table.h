#pragma once
// The operator table: the workload's cards ranked by time, with calls, share of the runtime, headroom
// to the roofline and what the open session found for each. Selecting a row selects the card in the
// WorkloadContext (the timeline outlines its calls); a double click selects the card's best node in
// the session. The rows come from operatorRows() (workload_profile.h); the model only shows them.
#include <QAbstractTableModel>
#include <QPointer>
#include <QWidget>
#include <vector>

#include "ui/workload_profile.h"

class QLabel;
class QTableView;

namespace kforge::ui {

class SessionContext;
class WorkloadContext;

enum class OperatorColumn { Operator, Shape, Calls, Total, Share, WithPack, Headroom, Search, Count };

class OperatorTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    using QAbstractTableModel::QAbstractTableModel;
    void setRows(std::vector<OperatorRow> rows);
    const std::vector<OperatorRow> &rows() const { return m_rows; }
    int rowOfKey(const QString &key) const; // -1 when absent

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<OperatorRow> m_rows;
};

class OperatorTable : public QWidget {
    Q_OBJECT
public:
    OperatorTable(WorkloadContext *workload, SessionContext *session, QWidget *parent = nullptr);
    OperatorTableModel *model() const { return m_model; }
    QTableView *view() const { return m_view; }
    QString noteText() const;

private:
    void refresh();
    void showSelection(const QString &key);

    QPointer<WorkloadContext> m_workload;
    QPointer<SessionContext> m_session;
    OperatorTableModel *m_model;
    QTableView *m_view;
    QLabel *m_note;
};

} // namespace kforge::ui
