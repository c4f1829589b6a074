#pragma once
// The verdict's timings as a picture: every sample of the candidate and of the baseline as a dot on
// its own row, each row's p25-p75 box with its median, and the roofline floor as a dashed line, on
// one axis in microseconds. The geometry lives in timing_plot_geometry.h; this only paints it.
#include <QWidget>
#include <string>
#include <vector>

namespace kforge::ui {

class TimingPlot : public QWidget {
    Q_OBJECT
public:
    explicit TimingPlot(QWidget *parent = nullptr);

    // status picks the candidate's colour (the tree's for that status).
    void setTimings(std::vector<double> candidateUs, std::vector<double> baselineUs, double floorUs, const std::string &status);
    void clear();

    int candidateCount() const { return int(m_candidate.size()); }
    int baselineCount() const { return int(m_baseline.size()); }
    double floorUs() const { return m_floorUs; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    int topPx() const;

    std::vector<double> m_candidate, m_baseline;
    double m_floorUs = 0;
    std::string m_status;
};

} // namespace kforge::ui
