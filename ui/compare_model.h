#pragma once
// The comparison table: one row per compared node, the columns of compare_rows.h. Display text is
// compareCell(); SortRole carries the number behind a cell so a proxy can sort numerically; the
// fastest median is bold.
#include <QAbstractTableModel>
#include <vector>

#include "ui/compare_rows.h"

namespace kforge::ui {

class CompareModel : public QAbstractTableModel {
    Q_OBJECT
public:
    static constexpr int SortRole = Qt::UserRole + 1;
    static constexpr int NodeIdRole = Qt::UserRole + 2;

    explicit CompareModel(QObject *parent = nullptr);

    void setRows(std::vector<CompareRow> rows);
    const std::vector<CompareRow> &rows() const { return m_rows; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<CompareRow> m_rows;
    long long m_fastest = 0; // node id with the lowest median, 0: none timed
};

} // namespace kforge::ui
