#include "ui/workload_context.h"

#include <QtConcurrent/QtConcurrentRun>

namespace kforge::ui {

namespace {
struct ProfileRead {
    ProfilePtr profile;
    QString error;
};
} // namespace

WorkloadContext::WorkloadContext(QObject *parent) : QObject(parent) {}

void WorkloadContext::open(const QString &path)
{
    read(path, false);
}

void WorkloadContext::openAfter(const QString &path)
{
    if (!m_before) {
        emit openFailed(path, QStringLiteral("open the workload's own profile first (File > Open Workload), then the one run with a pack"));
        return;
    }
    read(path, true);
}

void WorkloadContext::read(const QString &path, bool after)
{
    const quint64 job = after ? ++m_afterJob : ++m_job;
    if (!after)
        ++m_afterJob; // a second profile still being read belonged to the workload shown until now
    ++m_reading;
    QtConcurrent::run([path]() -> ProfileRead {
        try {
            return {WorkloadProfile::read(path.toStdString()), {}};
        } catch (const std::exception &e) {
            return {nullptr, QString::fromStdString(e.what())};
        }
    }).then(this, [this, job, after, path](const ProfileRead &r) {
        --m_reading;
        if (job != (after ? m_afterJob : m_job))
            return; // another file was opened meanwhile
        if (!r.profile) {
            emit openFailed(path, r.error);
            return;
        }
        if (after) {
            if (r.profile->file().name != m_before->file().name && r.profile->file().model.path != m_before->file().model.path) {
                emit openFailed(path, QStringLiteral("%1 profiles workload '%2', not '%3' shown now")
                                          .arg(path, QString::fromStdString(r.profile->file().name),
                                               QString::fromStdString(m_before->file().name)));
                return;
            }
            m_after = r.profile;
            m_comparison = compareProfiles(*m_before, *m_after);
            emit comparisonChanged();
        } else {
            setProfiles(r.profile);
        }
    });
}

void WorkloadContext::setProfiles(ProfilePtr before, ProfilePtr after)
{
    m_before = std::move(before);
    m_after = m_before ? std::move(after) : nullptr;
    m_comparison = m_after ? compareProfiles(*m_before, *m_after) : ProfileComparison();
    m_card.clear();
    m_signature.clear();
    emit profileLoaded();
    emit cardSelected(m_card);
}

void WorkloadContext::clearAfter()
{
    ++m_afterJob;
    if (!m_after)
        return;
    m_after.reset();
    m_comparison = {};
    emit comparisonChanged();
}

void WorkloadContext::selectCard(const QString &key)
{
    if (key == m_card)
        return;
    std::string signature;
    if (!key.isEmpty()) {
        if (!m_before)
            return;
        const auto &cards = m_before->file().cards;
        auto it = std::find_if(cards.begin(), cards.end(), [&](const OperatorCard &c) { return c.key == key.toStdString(); });
        if (it == cards.end())
            return; // not in this workload: a stale click
        const long g = m_before->groupOfCard(size_t(it - cards.begin()));
        if (g >= 0)
            signature = m_before->groups()[size_t(g)].signature;
    }
    m_card = key;
    m_signature = signature;
    emit cardSelected(m_card);
}

QString WorkloadContext::cardOfCall(bool inAfter, size_t call) const
{
    const ProfilePtr &p = inAfter ? m_after : m_before;
    if (!p || !m_before || call >= p->timeline().size())
        return {};
    long g = p->groupOfCall(call);
    if (g < 0)
        return {};
    if (inAfter) // the same pattern in the shown profile
        g = m_before->groupOfSignature(p->groups()[size_t(g)].signature);
    const long card = g >= 0 ? m_before->cardOfGroup(size_t(g)) : -1;
    return card >= 0 ? QString::fromStdString(m_before->file().cards[size_t(card)].key) : QString();
}

} // namespace kforge::ui
