#include "ui/operator_table.h"

#include <QFont>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

#include "ui/session_context.h"
#include "ui/theme.h"
#include "ui/workload_context.h"

namespace kforge::ui {

namespace {
QString text(const std::string &s)
{
    return QString::fromStdString(s);
}
} // namespace

void OperatorTableModel::setRows(std::vector<OperatorRow> rows)
{
    beginResetModel();
    m_rows = std::move(rows);
    endResetModel();
}

int OperatorTableModel::rowOfKey(const QString &key) const
{
    for (size_t i = 0; i < m_rows.size(); ++i)
        if (text(m_rows[i].key) == key)
            return int(i);
    return -1;
}

int OperatorTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int OperatorTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(OperatorColumn::Count);
}

QVariant OperatorTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    static const char *names[] = {"Operator", "Shape", "Calls", "Total", "Share", "With pack", "Headroom", "Search"};
    return section >= 0 && section < int(OperatorColumn::Count) ? QVariant(QString::fromLatin1(names[section])) : QVariant();
}

QVariant OperatorTableModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= int(m_rows.size()) || index.column() >= int(OperatorColumn::Count))
        return {};
    const auto &r = m_rows[size_t(index.row())];
    const auto col = OperatorColumn(index.column());
    if (role == Qt::UserRole) // the card key, for selection
        return text(r.key);
    if (role == Qt::TextAlignmentRole)
        return col == OperatorColumn::Calls || col == OperatorColumn::Total || col == OperatorColumn::Share || col == OperatorColumn::Headroom
                       || col == OperatorColumn::WithPack
                   ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter))
                   : QVariant();
    if (role == Qt::ForegroundRole && col == OperatorColumn::WithPack && r.changed) // as the timeline marks it
        return QColor(r.afterUs < r.totalUs ? theme().good : theme().bad);
    if (role == Qt::FontRole && col == OperatorColumn::WithPack && r.changed) {
        QFont bold;
        bold.setBold(true);
        return bold;
    }
    if (role == Qt::ToolTipRole) {
        if (col == OperatorColumn::WithPack)
            return r.afterUs < 0 ? QStringLiteral("Open the profile run with a pack (File > Open workload profile with a pack)")
                   : r.changed   ? QStringLiteral("Changed by more than 5% of itself and 0.1% of the profile: %1 before, %2 with the pack")
                                     .arg(text(formatDuration(r.totalUs)), text(formatDuration(r.afterUs)))
                                 : QStringLiteral("Within the noise: %1 before, %2 with the pack")
                                     .arg(text(formatDuration(r.totalUs)), text(formatDuration(r.afterUs)));
        if (col == OperatorColumn::Headroom)
            return r.headroom > 0 ? QStringLiteral("A call takes %1x the least time its bytes need at the session's copy rate").arg(r.headroom, 0, 'f', 1)
                                  : QStringLiteral("Unknown: open a session searched on the device this workload ran on; its roofline floors give "
                                                   "the copy rate");
        return QStringLiteral("%1 (card %2)").arg(text(r.op), text(r.key));
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (col) {
    case OperatorColumn::Operator: return text(r.op);
    case OperatorColumn::Shape: return text(r.shapes);
    case OperatorColumn::Calls: return QString::number(r.calls);
    case OperatorColumn::Total: return text(formatDuration(r.totalUs));
    case OperatorColumn::Share: return QStringLiteral("%1%").arg(100.0 * r.share, 0, 'f', 1);
    case OperatorColumn::WithPack:
        return r.afterUs < 0 ? QStringLiteral("—")
                             : QStringLiteral("%1 (%2x)").arg(text(formatDuration(r.afterUs))).arg(r.afterUs > 0 ? r.totalUs / r.afterUs : 0.0, 0, 'f', 2);
    case OperatorColumn::Headroom: return r.headroom > 0 ? QStringLiteral("%1x").arg(r.headroom, 0, 'f', r.headroom < 10 ? 1 : 0) : QStringLiteral("—");
    case OperatorColumn::Search: return text(r.search);
    case OperatorColumn::Count: break;
    }
    return {};
}

OperatorTable::OperatorTable(WorkloadContext *workload, SessionContext *session, QWidget *parent)
    : QWidget(parent), m_workload(workload), m_session(session), m_model(new OperatorTableModel(this)), m_view(new QTableView(this)),
      m_note(new QLabel(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_note);
    m_note->setWordWrap(true);
    m_note->setContentsMargins(6, 2, 6, 2);
    m_view->setModel(m_model);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->verticalHeader()->hide();
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->setWordWrap(false);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex &current) {
        if (m_workload)
            m_workload->selectCard(current.isValid() ? current.data(Qt::UserRole).toString() : QString());
    });
    connect(m_view, &QTableView::doubleClicked, this, [this](const QModelIndex &index) {
        const auto &rows = m_model->rows();
        if (m_session && index.isValid() && size_t(index.row()) < rows.size() && rows[size_t(index.row())].bestNode)
            m_session->select(rows[size_t(index.row())].bestNode);
    });
    connect(workload, &WorkloadContext::profileLoaded, this, &OperatorTable::refresh);
    connect(workload, &WorkloadContext::comparisonChanged, this, &OperatorTable::refresh);
    connect(workload, &WorkloadContext::cardSelected, this, &OperatorTable::showSelection);
    connect(session, &SessionContext::sessionLoaded, this, &OperatorTable::refresh);
    connect(session, &SessionContext::nodesChanged, this, &OperatorTable::refresh);
    connect(session, &SessionContext::sessionClosed, this, &OperatorTable::refresh);
    refresh();
}

void OperatorTable::refresh()
{
    const ProfilePtr profile = m_workload ? m_workload->profile() : nullptr;
    const SessionSnapshot *snap = m_session && m_session->snapshot() ? m_session->snapshot().get() : nullptr;
    m_model->setRows(profile ? operatorRows(*profile, snap, m_workload->comparison()) : std::vector<OperatorRow>{});
    m_view->resizeColumnsToContents();
    if (m_workload)
        showSelection(m_workload->selectedCard());
    m_note->setText(noteText());
}

QString OperatorTable::noteText() const
{
    const ProfilePtr profile = m_workload ? m_workload->profile() : nullptr;
    if (!profile)
        return QStringLiteral("Open a profiled workload (File > Open Workload) to rank its operators.");
    const auto &f = profile->file();
    QString note = QStringLiteral("%1: %2 cards from %3 call patterns, %4 at top level")
                       .arg(text(f.name))
                       .arg(f.cards.size())
                       .arg(profile->groups().size())
                       .arg(text(formatDuration(profile->topLevelUs())));
    if (!f.skipped.empty())
        note += QStringLiteral("; %1 patterns have no card").arg(f.skipped.size());
    note += m_session && m_session->snapshot() ? QStringLiteral(". Search status from %1.").arg(text(m_session->snapshot()->session().name))
                                               : QStringLiteral(". Open a session to see what its search found for each card.");
    return note;
}

void OperatorTable::showSelection(const QString &key)
{
    const int row = m_model->rowOfKey(key);
    auto *sel = m_view->selectionModel();
    const QModelIndex current = sel->currentIndex();
    if (row < 0) {
        if (key.isEmpty())
            sel->clearSelection();
        return;
    }
    if (current.isValid() && current.row() == row)
        return;
    sel->setCurrentIndex(m_model->index(row, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    m_view->scrollTo(m_model->index(row, 0));
}

} // namespace kforge::ui
