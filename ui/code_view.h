#pragma once
// The read-only code viewer every panel uses: QScintilla with the C++ lexer (CUDA sources are C++ to
// it), a fixed-width font in every style and line numbers in the margin.
class QWidget;
class QsciScintilla;

namespace kforge::ui {

QsciScintilla *makeCodeView(QWidget *parent);

} // namespace kforge::ui
