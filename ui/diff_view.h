#pragma once
// Two read-only code views side by side showing DiffRows: removed lines tinted red on the left, added
// ones green on the right, modified pairs tinted on both sides with the changed characters boxed, and
// padding rows greyed so equal lines stay level. The views scroll together, vertically and
// horizontally; line numbers are each source's own, not the row's.
#include <QWidget>

#include "ui/diff_rows.h"

class QLabel;
class QsciScintilla;

namespace kforge::ui {

class DiffView : public QWidget {
    Q_OBJECT
public:
    explicit DiffView(QWidget *parent = nullptr);

    void setRows(const DiffRows &rows, const QString &leftTitle, const QString &rightTitle);
    void showMessage(const QString &text); // nothing to compare (no node, no base)

    QsciScintilla *left() const { return m_left; }
    QsciScintilla *right() const { return m_right; }
    const DiffRows &rows() const { return m_rows; }
    QString summary() const;

private:
    void fill(QsciScintilla *view, bool leftSide);

    QLabel *m_leftTitle;
    QLabel *m_rightTitle;
    QsciScintilla *m_left;
    QsciScintilla *m_right;
    QLabel *m_summary;
    DiffRows m_rows;
};

} // namespace kforge::ui
