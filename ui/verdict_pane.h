#pragma once
// The guard's verdict on one candidate: status and reasons, one row per verification trial, and the
// candidate's timing next to the baseline measured in the same run.
#include <QWidget>

class QLabel;
class QTableWidget;

namespace kforge {
struct NodeDetail;
struct NodeRecord;
} // namespace kforge

namespace kforge::ui {

class TimingPlot;

class VerdictPane : public QWidget {
    Q_OBJECT
public:
    explicit VerdictPane(QWidget *parent = nullptr);

    void showDetail(const NodeDetail &detail);
    // For nodes without a stored verdict (the baseline, a node still running): what the record says.
    void showRecord(const NodeRecord &node, const QString &note);
    void clear();

    QString statusText() const;
    QString reasonsText() const; // the guard's reasons and the harness's notes
    int trialCount() const;
    QTableWidget *trialTable() const { return m_trials; }
    QTableWidget *timingTable() const { return m_timing; }
    TimingPlot *timingPlot() const { return m_plot; }

private:
    QLabel *m_status;
    QLabel *m_reasons;
    QTableWidget *m_trials;
    QTableWidget *m_timing;
    TimingPlot *m_plot;
};

} // namespace kforge::ui
