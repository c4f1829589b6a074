#include "ui/status_style.h"

namespace kforge::ui {

StatusStyle statusStyle(const std::string &s)
{
    // Colours picked to stay apart for common colour-vision deficiencies where possible; the legend
    // and the inspector always name the status too.
    const QColor white(Qt::white), dark(0x20, 0x20, 0x20);
    if (s == "baseline")
        return {QColor(0x1f, 0x1f, 0x1f), white, QStringLiteral("baseline")};
    if (s == "running")
        return {QColor(0xc4, 0xc4, 0xc4), dark, QStringLiteral("running")};
    if (s == "accepted")
        return {QColor(0x2e, 0x9e, 0x44), white, QStringLiteral("accepted")};
    if (s == "not_faster")
        return {QColor(0x2a, 0x8f, 0xa8), white, QStringLiteral("not faster")};
    if (s == "incorrect")
        return {QColor(0xd6, 0x3c, 0x3c), white, QStringLiteral("incorrect")};
    if (s == "compile_error")
        return {QColor(0xf0, 0x8c, 0x1e), dark, QStringLiteral("compile error")};
    if (s == "suspect")
        return {QColor(0xe3, 0x77, 0xc2), dark, QStringLiteral("suspect")};
    if (s == "crashed")
        return {QColor(0x7b, 0x3f, 0xb0), white, QStringLiteral("crashed")};
    if (s == "timeout")
        return {QColor(0x8b, 0x1a, 0x1a), white, QStringLiteral("timeout")};
    if (s == "error")
        return {QColor(0x5a, 0x5a, 0x5a), white, QStringLiteral("error")};
    return {QColor(0x99, 0x99, 0x99), dark, QString::fromStdString(s)};
}

const std::vector<std::string> &legendStatuses()
{
    static const std::vector<std::string> order{"baseline", "running",   "accepted", "not_faster", "incorrect",
                                                "compile_error", "suspect", "crashed", "timeout"};
    return order;
}

QString speedupText(const std::string &status, double speedup)
{
    if (status == "accepted" || status == "not_faster" || status == "suspect")
        return QString::number(speedup, 'f', 2) + QLatin1Char('x');
    return {};
}

} // namespace kforge::ui
