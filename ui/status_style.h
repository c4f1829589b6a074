#pragma once
// How each node status looks, shared by the tree, its legend and the inspector so they agree.
#include <QColor>
#include <QString>
#include <string>
#include <vector>

namespace kforge::ui {

struct StatusStyle {
    QColor fill;
    QColor text; // readable on fill
    QString label;
};

// For "baseline", "running" and every VerdictStatus name; unknown names get a neutral grey.
StatusStyle statusStyle(const std::string &status);
// The statuses in the order the legend lists them.
const std::vector<std::string> &legendStatuses();

// "1.12x", or "" when there is no speedup to show (running, failed, baseline).
QString speedupText(const std::string &status, double speedup);

} // namespace kforge::ui
