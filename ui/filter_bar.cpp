#include "ui/filter_bar.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>
#include <set>

#include "ui/session_context.h"
#include "ui/status_style.h"

namespace kforge::ui {

namespace {
// Refills a combo box with "any" plus the values, keeping the current choice when it is still there.
void fill(QComboBox *box, const QString &any, const std::vector<std::pair<QString, QString>> &items)
{
    const QString current = box->currentData().toString();
    box->clear();
    box->addItem(any, QString());
    for (const auto &[label, value] : items)
        box->addItem(label, value);
    const int i = box->findData(current);
    box->setCurrentIndex(i < 0 ? 0 : i);
}
} // namespace

FilterBar::FilterBar(SessionContext *context, QWidget *parent)
    : QWidget(parent), m_context(context), m_status(new QComboBox(this)), m_template(new QComboBox(this)),
      m_proposer(new QComboBox(this)), m_hide(new QCheckBox(QStringLiteral("Hide others"), this)), m_count(new QLabel(this))
{
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(6, 3, 6, 3);
    layout->addWidget(new QLabel(QStringLiteral("Filter:"), this));
    m_status->setObjectName(QStringLiteral("filterStatus"));
    m_template->setObjectName(QStringLiteral("filterTemplate"));
    m_proposer->setObjectName(QStringLiteral("filterProposer"));
    m_template->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_hide->setToolTip(QStringLiteral("Hide the nodes the filter passes over instead of dimming them; "
                                      "the nodes above a kept node stay, dimmed, so it can be reached"));
    for (auto *box : {m_status, m_template, m_proposer}) {
        layout->addWidget(box);
        connect(box, &QComboBox::currentIndexChanged, this, &FilterBar::emitChanged);
    }
    layout->addWidget(m_hide);
    connect(m_hide, &QCheckBox::toggled, this, &FilterBar::emitChanged);
    auto *reset = new QToolButton(this);
    reset->setText(QStringLiteral("Clear"));
    connect(reset, &QToolButton::clicked, this, &FilterBar::clear);
    layout->addWidget(reset);
    layout->addWidget(m_count);
    layout->addStretch(1);

    connect(context, &SessionContext::sessionLoaded, this, &FilterBar::refill);
    connect(context, &SessionContext::nodesChanged, this, &FilterBar::refill);
    connect(context, &SessionContext::sessionClosed, this, &FilterBar::refill);
    refill();
}

NodeFilter FilterBar::filter() const
{
    NodeFilter f;
    if (const QString s = m_status->currentData().toString(); !s.isEmpty())
        f.statuses.insert(s.toStdString());
    f.templateId = m_template->currentData().toString().toStdString();
    f.proposer = m_proposer->currentData().toString().toStdString();
    f.hide = m_hide->isChecked();
    return f;
}

void FilterBar::clear()
{
    m_filling = true;
    for (auto *box : {m_status, m_template, m_proposer})
        box->setCurrentIndex(0);
    m_hide->setChecked(false);
    m_filling = false;
    emitChanged();
}

void FilterBar::refill()
{
    const NodeFilter before = filter();
    m_filling = true;
    const auto &snap = m_context->snapshot();
    std::vector<std::pair<QString, QString>> statuses, templates, proposers;
    for (const auto &s : legendStatuses())
        statuses.push_back({statusStyle(s).label, QString::fromStdString(s)});
    statuses.push_back({statusStyle("error").label, QStringLiteral("error")});
    if (snap) {
        for (const auto &t : snap->templateIds())
            templates.push_back({QString::fromStdString(t), QString::fromStdString(t)});
        std::set<std::string> seen;
        for (const auto &n : snap->nodes())
            seen.insert(proposerOf(n, snap->session().proposer));
        for (const auto &p : seen)
            proposers.push_back({QString::fromStdString(p), QString::fromStdString(p)});
    }
    fill(m_status, QStringLiteral("Any status"), statuses);
    fill(m_template, QStringLiteral("Any template"), templates);
    fill(m_proposer, QStringLiteral("Any proposer"), proposers);
    m_filling = false;
    const NodeFilter after = filter();
    if (after.statuses != before.statuses || after.templateId != before.templateId || after.proposer != before.proposer)
        emitChanged(); // a chosen value left the session
    else
        updateCount();
}

void FilterBar::emitChanged()
{
    if (m_filling)
        return;
    updateCount();
    emit filterChanged(filter());
}

void FilterBar::updateCount()
{
    const auto &snap = m_context->snapshot();
    const NodeFilter f = filter();
    if (!snap || !f.active()) {
        m_count->clear();
        return;
    }
    int n = 0;
    for (const auto &node : snap->nodes())
        n += f.matches(node, snap->session().proposer);
    m_count->setText(QStringLiteral("%1 of %2 nodes").arg(n).arg(snap->nodes().size()));
}

} // namespace kforge::ui
