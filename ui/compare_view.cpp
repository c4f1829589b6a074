#include "ui/compare_view.h"

#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "store/session_store.h"
#include "ui/compare_model.h"
#include "ui/diff_rows.h"
#include "ui/diff_view.h"
#include "ui/session_context.h"

namespace kforge::ui {

CompareView::CompareView(SessionContext *context, QWidget *parent)
    : QWidget(parent), m_context(context), m_model(new CompareModel(this)), m_table(new QTableView(this)),
      m_diff(new DiffView(this)), m_status(new QLabel(this))
{
    auto *proxy = new QSortFilterProxyModel(this);
    proxy->setSourceModel(m_model);
    proxy->setSortRole(CompareModel::SortRole);
    m_table->setModel(proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(-1, Qt::AscendingOrder); // the order the nodes were added until a header is clicked
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 8);
    m_status->setWordWrap(true);
    m_status->setContentsMargins(6, 4, 6, 4);

    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_table);
    split->addWidget(m_diff);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_status);
    layout->addWidget(split, 1);

    // A click on a row selects that node everywhere else.
    connect(m_table, &QTableView::clicked, this, [this](const QModelIndex &index) {
        if (m_context)
            m_context->select(index.data(CompareModel::NodeIdRole).toLongLong());
    });
    connect(context, &SessionContext::comparedChanged, this, &CompareView::reload);
    connect(context, &SessionContext::sessionLoaded, this, &CompareView::reload);
    connect(context, &SessionContext::decisionRecorded, this, &CompareView::reload);
    // A live search or another writer finishing a compared node: read it again, but only then.
    connect(context, &SessionContext::nodesChanged, this, [this] {
        if (m_context && m_context->compared().size() >= 2 && shownState() != m_shownState)
            reload();
    });
    reload();
}

CompareView::~CompareView() = default;

QString CompareView::statusText() const
{
    return m_status->text();
}

// The compared nodes' statuses as the snapshot has them: what the table was last filled from.
QString CompareView::shownState() const
{
    QString state;
    const auto &snap = m_context ? m_context->snapshot() : SnapshotPtr{};
    for (qint64 id : m_context ? m_context->compared() : QList<qint64>{}) {
        const NodeRecord *n = snap ? snap->node(id) : nullptr;
        state += QStringLiteral("%1:%2;").arg(id).arg(n ? QString::fromStdString(n->status) : QString());
    }
    return state;
}

void CompareView::reload()
{
    ++m_job;
    m_shownState = shownState();
    const QList<qint64> ids = m_context ? m_context->compared() : QList<qint64>{};
    if (ids.size() < 2) {
        m_model->setRows({});
        m_table->setMinimumHeight(0);
        m_status->setText(ids.isEmpty() ? QStringLiteral("Ctrl-click two or more nodes in the tree, or use Node > Add to "
                                                         "comparison (Ctrl+K), to compare them here.")
                                        : QStringLiteral("#%1 is set aside; Ctrl-click another node to compare it with.").arg(ids.front()));
        m_diff->showMessage(QStringLiteral("The diff of the first two compared nodes appears here."));
        return;
    }
    std::vector<NodeDetail> details;
    try {
        const QString path = m_context->sessionPath();
        if (!m_store || m_storePath != path) {
            m_store = std::make_unique<SessionStore>(path.toStdString(), SessionStore::Mode::ReadOnly);
            m_storePath = path;
        }
        for (qint64 id : ids)
            if (auto d = m_store->nodeDetail(id))
                details.push_back(std::move(*d));
    } catch (const std::exception &e) {
        m_store.reset();
        m_status->setText(QStringLiteral("Cannot read the compared nodes: %1").arg(QString::fromStdString(e.what())));
        return;
    }
    m_model->setRows(compareRows(details));
    // Every compared row in sight (up to six) before the diff takes the rest.
    const int rows = std::min<int>(int(details.size()), 6);
    m_table->setMinimumHeight(m_table->horizontalHeader()->sizeHint().height() + rows * m_table->verticalHeader()->defaultSectionSize() +
                              2 * m_table->frameWidth() + 2);
    QStringList names;
    for (const auto &d : details)
        names << QStringLiteral("#%1").arg(d.node.id);
    m_status->setText(QStringLiteral("Comparing %1; the diff is %2 → %3.").arg(names.join(QStringLiteral(", ")), names.value(0), names.value(1)));
    if (details.size() < 2)
        return;

    const quint64 job = m_job;
    const QString leftTitle = QStringLiteral("#%1 %2").arg(details[0].node.id).arg(QString::fromStdString(details[0].node.templateId));
    const QString rightTitle = QStringLiteral("#%1 %2").arg(details[1].node.id).arg(QString::fromStdString(details[1].node.templateId));
    QPointer<CompareView> self(this);
    QtConcurrent::run([left = details[0].candidate.source, right = details[1].candidate.source] { return diffRows(left, right); })
        .then(this, [self, job, leftTitle, rightTitle](const DiffRows &rows) {
            if (!self || job != self->m_job)
                return; // the compared set changed while this was computed
            self->m_diff->setRows(rows, leftTitle, rightTitle);
            emit self->diffShown();
        });
}

} // namespace kforge::ui
