#pragma once
// The hub the profiler panels observe, beside the SessionContext: the workload shown, optionally a
// second profile of it run with a pack, and the card selected (in the table or by a click on the
// timeline). Files are read on a pool thread; a read whose job is no longer the latest is dropped.
#include <QObject>
#include <QString>
#include <vector>

#include "ui/workload_profile.h"

namespace kforge::ui {

class WorkloadContext : public QObject {
    Q_OBJECT
public:
    explicit WorkloadContext(QObject *parent = nullptr);

    // The workload to show; drops any second profile and the selection. Answered by profileLoaded()
    // or openFailed() (what was shown stays).
    void open(const QString &path);
    // A second profile of the same workload, run with a pack: shown under the first on one time axis.
    void openAfter(const QString &path);
    void clearAfter();
    void setProfiles(ProfilePtr before, ProfilePtr after = nullptr); // already read (tests, the bench)
    bool isReading() const { return m_reading > 0; }

    const ProfilePtr &profile() const { return m_before; }
    const ProfilePtr &after() const { return m_after; }
    const ProfileComparison *comparison() const { return m_after ? &m_comparison : nullptr; }

    // The selected card's key ("" for none) and its call pattern's signature ("" when it has none).
    const QString &selectedCard() const { return m_card; }
    const std::string &selectedSignature() const { return m_signature; }
    void selectCard(const QString &key);
    // The card of the call pattern that `call` of the shown (before) or after profile belongs to.
    QString cardOfCall(bool inAfter, size_t call) const;

signals:
    void profileLoaded();      // the shown workload changed (and the second profile with it)
    void comparisonChanged();  // a second profile was added or removed
    void openFailed(const QString &path, const QString &error);
    void cardSelected(const QString &key);

private:
    void read(const QString &path, bool after);

    ProfilePtr m_before, m_after;
    ProfileComparison m_comparison;
    QString m_card;
    std::string m_signature;
    quint64 m_job = 0, m_afterJob = 0;
    int m_reading = 0;
};

} // namespace kforge::ui
