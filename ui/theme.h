#pragma once
// Colours that follow the application's palette. The tree, the timeline, the code and diff views, the
// verdict and the inspector draw with these instead of fixed light-theme values, so that a dark system
// palette (or kforge --palette dark) stays readable. Status colours (status_style.h) are the same on
// both: they are fills with their own text colour.
#include <QColor>
#include <QPalette>
#include <QString>

class QApplication;
class QsciScintilla;

namespace kforge::ui {

bool isDark(const QPalette &palette);

struct Theme {
    QColor canvas;       // the tree's and the timeline's background
    QColor ink;          // text and lines drawn on the canvas
    QColor mutedInk;     // secondary text: ticks, placeholders
    QColor panel;        // the legend's box, lane headers, the ruler
    QColor panelBorder;
    QColor edge;         // the tree's edges
    QColor good, bad;    // text for what passed (accepted) and what failed (rejected, errors)
    QColor removed, added, modified, padding, changedChars; // diff line backgrounds and changed characters
    QColor keyword2;     // CUDA's own words in the code view
};
Theme theme(const QPalette &palette);
Theme theme(); // of the application's palette
QString htmlColour(const QColor &colour); // "#rrggbb", for rich text

// The code views' paper, text, margins and every lexer style from the palette: on a dark palette each
// style keeps its hue with its lightness turned over.
void applyTheme(QsciScintilla *view);

// "system" (the platform's palette, the default), "light" or "dark"; anything else is an error naming
// the choices. Sets the Fusion style for light and dark, so every widget draws with the palette.
QString applyPaletteChoice(QApplication &app, const QString &choice);
QPalette darkPalette();

} // namespace kforge::ui
