#include "ui/diff_view.h"

#include <Qsci/qsciscintilla.h>
#include <QGridLayout>
#include <QLabel>
#include <QScrollBar>

#include "ui/code_view.h"
#include "ui/theme.h"

namespace kforge::ui {

namespace {

enum Marker { RemovedLine = 1, AddedLine, ModifiedLine, PaddingLine };
constexpr int kChangedChars = 8; // indicator number; 0-7 belong to lexers
constexpr int kMarginStyle = 33;  // STYLE_LINENUMBER, so numbers look like the plain view's

void prepare(QsciScintilla *view)
{
    view->setMarginType(0, QsciScintilla::TextMargin);
    view->setMarginWidth(0, QStringLiteral("00000"));
    const Theme t = theme(view->palette());
    const std::pair<Marker, QColor> markers[] = {
        {RemovedLine, t.removed}, {AddedLine, t.added}, {ModifiedLine, t.modified}, {PaddingLine, t.padding}};
    for (const auto &[marker, colour] : markers) {
        view->markerDefine(QsciScintilla::Background, marker);
        view->setMarkerBackgroundColor(colour, marker);
    }
    view->indicatorDefine(QsciScintilla::FullBoxIndicator, kChangedChars);
    view->setIndicatorForegroundColor(t.changedChars, kChangedChars);
    view->setIndicatorDrawUnder(true, kChangedChars);
}

// Scroll bars in step: moving one moves the other. setValue() emits nothing for the value it already
// has, so the pair cannot ping-pong.
void link(QScrollBar *a, QScrollBar *b)
{
    QObject::connect(a, &QScrollBar::valueChanged, b, &QScrollBar::setValue);
    QObject::connect(b, &QScrollBar::valueChanged, a, &QScrollBar::setValue);
}

} // namespace

DiffView::DiffView(QWidget *parent)
    : QWidget(parent), m_leftTitle(new QLabel(this)), m_rightTitle(new QLabel(this)), m_left(makeCodeView(this)),
      m_right(makeCodeView(this)), m_summary(new QLabel(this))
{
    prepare(m_left);
    prepare(m_right);
    link(m_left->verticalScrollBar(), m_right->verticalScrollBar());
    link(m_left->horizontalScrollBar(), m_right->horizontalScrollBar());
    for (auto *l : {m_leftTitle, m_rightTitle, m_summary}) {
        l->setContentsMargins(4, 2, 4, 2);
        l->setTextFormat(Qt::PlainText);
    }
    auto *grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setSpacing(2);
    grid->addWidget(m_leftTitle, 0, 0);
    grid->addWidget(m_rightTitle, 0, 1);
    grid->addWidget(m_left, 1, 0);
    grid->addWidget(m_right, 1, 1);
    grid->addWidget(m_summary, 2, 0, 1, 2);
    grid->setRowStretch(1, 1);
    showMessage(QStringLiteral("Select a node to compare it with its parent."));
}

QString DiffView::summary() const
{
    return m_summary->text();
}

void DiffView::showMessage(const QString &text)
{
    m_rows = {};
    m_leftTitle->clear();
    m_rightTitle->clear();
    m_left->clear();
    m_right->clear();
    m_left->clearMarginText();
    m_right->clearMarginText();
    m_summary->setText(text);
}

void DiffView::setRows(const DiffRows &rows, const QString &leftTitle, const QString &rightTitle)
{
    m_rows = rows;
    m_leftTitle->setText(leftTitle);
    m_rightTitle->setText(rightTitle);
    fill(m_left, true);
    fill(m_right, false);
    m_summary->setText(rows.identical()
                           ? QStringLiteral("The sources are identical.")
                           : QStringLiteral("%1 %2 changed, %3 removed, %4 added")
                                 .arg(rows.modified)
                                 .arg(rows.modified == 1 ? QStringLiteral("line") : QStringLiteral("lines"))
                                 .arg(rows.removed)
                                 .arg(rows.added));
}

void DiffView::fill(QsciScintilla *view, bool leftSide)
{
    std::string text;
    for (const auto &row : m_rows.rows) {
        text += (leftSide ? row.left : row.right).text;
        text += '\n';
    }
    if (!text.empty())
        text.pop_back(); // n rows, n lines
    view->setText(QString::fromStdString(text));
    view->clearMarginText();
    view->markerDeleteAll();
    view->clearIndicatorRange(0, 0, view->lines(), 0, kChangedChars);
    for (int i = 0; i < int(m_rows.rows.size()); ++i) {
        const auto &row = m_rows.rows[size_t(i)];
        const DiffLine &line = leftSide ? row.left : row.right;
        if (!line.isPadding())
            view->setMarginText(i, QString::number(line.number), kMarginStyle);
        if (row.equal)
            continue;
        if (line.isPadding()) {
            view->markerAdd(i, PaddingLine);
        } else if ((leftSide ? row.right : row.left).isPadding()) {
            view->markerAdd(i, leftSide ? RemovedLine : AddedLine);
        } else {
            view->markerAdd(i, ModifiedLine);
            for (const auto &r : line.changed)
                view->fillIndicatorRange(i, r.start, i, r.end, kChangedChars);
        }
    }
}

} // namespace kforge::ui
