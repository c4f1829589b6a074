#include "ui/compare_model.h"

#include <QFont>

namespace kforge::ui {

CompareModel::CompareModel(QObject *parent) : QAbstractTableModel(parent) {}

void CompareModel::setRows(std::vector<CompareRow> rows)
{
    beginResetModel();
    m_rows = std::move(rows);
    m_fastest = 0;
    double best = 0;
    for (const auto &r : m_rows)
        if (r.medianUs > 0 && (best == 0 || r.medianUs < best)) {
            best = r.medianUs;
            m_fastest = r.id;
        }
    endResetModel();
}

int CompareModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int CompareModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(CompareColumn::Count);
}

QVariant CompareModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto &r = m_rows[size_t(index.row())];
    const auto column = CompareColumn(index.column());
    switch (role) {
    case Qt::DisplayRole:
        return QString::fromStdString(compareCell(r, column));
    case Qt::TextAlignmentRole:
        return column == CompareColumn::Status || column == CompareColumn::Template
                   ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                   : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::FontRole:
        if (r.id == m_fastest && column == CompareColumn::Median) {
            QFont f;
            f.setBold(true);
            return f;
        }
        return {};
    case Qt::ToolTipRole:
        if (column == CompareColumn::Registers || column == CompareColumn::Shared || column == CompareColumn::Spills)
            return r.usage ? QStringLiteral("as ptxas reported it for %1 kernel(s): the most registers and static shared "
                                            "memory of any, spill stores and loads summed")
                                 .arg(r.usage->kernels)
                           : QStringLiteral("no ptxas report in the compile log (a CPU candidate, or it did not compile)");
        if (column == CompareColumn::Roofline)
            return QStringLiteral("the roofline floor over the median time: 100% runs at the floor");
        return {};
    case SortRole:
        switch (column) {
        case CompareColumn::Node: return r.id;
        case CompareColumn::Median: return r.medianUs;
        case CompareColumn::Spread: return r.spread;
        case CompareColumn::Speedup: return r.speedup;
        case CompareColumn::Registers: return r.usage ? r.usage->registers : -1;
        case CompareColumn::Shared: return r.usage ? r.usage->sharedBytes : -1;
        case CompareColumn::Spills: return r.usage ? r.usage->spillBytes : -1;
        case CompareColumn::Roofline: return r.rooflineFraction;
        default: return QString::fromStdString(compareCell(r, column));
        }
    case NodeIdRole:
        return r.id;
    default:
        return {};
    }
}

QVariant CompareModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (role != Qt::DisplayRole || orientation != Qt::Horizontal || section < 0 || section >= int(CompareColumn::Count))
        return QAbstractTableModel::headerData(section, orientation, role);
    return QString::fromStdString(compareHeader(CompareColumn(section)));
}

} // namespace kforge::ui
