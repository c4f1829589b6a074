#include "ui/theme.h"

#include <Qsci/qscilexer.h>
#include <Qsci/qsciscintilla.h>
#include <QApplication>
#include <QStyle>
#include <QStyleFactory>
#include <algorithm>

namespace kforge::ui {

bool isDark(const QPalette &palette)
{
    return palette.color(QPalette::Window).lightness() < 128;
}

Theme theme(const QPalette &palette)
{
    Theme t;
    const bool dark = isDark(palette);
    t.ink = palette.color(QPalette::WindowText);
    if (dark) {
        t.canvas = palette.color(QPalette::Base);
        t.mutedInk = QColor(0xa8, 0xa8, 0xa8);
        t.panel = QColor(0x3a, 0x3c, 0x40);
        t.panelBorder = QColor(0x5a, 0x5c, 0x60);
        t.edge = QColor(0x80, 0x84, 0x8a);
        t.good = QColor(0x6c, 0xd0, 0x7c);
        t.bad = QColor(0xff, 0x7a, 0x7a);
        t.removed = QColor(0x5a, 0x26, 0x2a);
        t.added = QColor(0x22, 0x4a, 0x2c);
        t.modified = QColor(0x4a, 0x40, 0x1e);
        t.padding = QColor(0x36, 0x36, 0x3a);
        t.changedChars = QColor(0x9a, 0x62, 0x00, 230); // dark amber: the light text on it stays readable
        t.keyword2 = QColor(0xd0, 0x9c, 0xf0);
    } else {
        t.canvas = QColor(0xfa, 0xfa, 0xf8);
        t.mutedInk = QColor(0x60, 0x60, 0x60);
        t.panel = QColor(0xf0, 0xf0, 0xec);
        t.panelBorder = QColor(0xd0, 0xd0, 0xd0);
        t.edge = QColor(0xa0, 0xa0, 0xa0);
        t.good = QColor(0x1d, 0x7a, 0x30);
        t.bad = QColor(0xc0, 0x20, 0x20);
        t.removed = QColor(0xfd, 0xe2, 0xe2);
        t.added = QColor(0xdf, 0xf5, 0xe1);
        t.modified = QColor(0xfb, 0xf1, 0xd0);
        t.padding = QColor(0xee, 0xee, 0xee);
        t.changedChars = QColor(0xe0, 0x9a, 0x20, 110);
        t.keyword2 = QColor(0x80, 0x30, 0xa0);
    }
    return t;
}

Theme theme()
{
    return theme(QApplication::palette());
}

QString htmlColour(const QColor &colour)
{
    return colour.name(QColor::HexRgb);
}

void applyTheme(QsciScintilla *view)
{
    const QPalette pal = view->palette();
    const Theme t = theme(pal);
    const bool dark = isDark(pal);
    const QColor paper = dark ? pal.color(QPalette::Base) : QColor(Qt::white);
    if (auto *lexer = view->lexer()) {
        lexer->setDefaultPaper(paper);
        lexer->setPaper(paper); // every style
        lexer->setDefaultColor(dark ? t.ink : QColor(Qt::black));
        for (int style = 0; style < 128; ++style) {
            if (lexer->description(style).isEmpty())
                continue;
            QColor c = lexer->defaultColor(style);
            if (dark) // the same hue, light on dark
                c = QColor::fromHsl(c.hslHue(), c.hslSaturation(), std::max(150, 255 - c.lightness()));
            lexer->setColor(c, style);
        }
    }
    view->setPaper(paper);
    view->setColor(dark ? t.ink : QColor(Qt::black));
    view->setMarginsBackgroundColor(dark ? t.panel : QColor(0xf0, 0xf0, 0xf0));
    view->setMarginsForegroundColor(t.mutedInk);
    view->setCaretForegroundColor(t.ink);
    view->setSelectionBackgroundColor(pal.color(QPalette::Highlight));
    view->setSelectionForegroundColor(pal.color(QPalette::HighlightedText));
}

QPalette darkPalette()
{
    QPalette p;
    const QColor window(0x2b, 0x2d, 0x30), base(0x1e, 0x1f, 0x22), text(0xe6, 0xe6, 0xe6), muted(0x80, 0x80, 0x80);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x26, 0x28, 0x2b));
    p.setColor(QPalette::ToolTipBase, QColor(0x3a, 0x3c, 0x40));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, muted);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(0x35, 0x37, 0x3b));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, QColor(0xff, 0x6b, 0x6b));
    p.setColor(QPalette::Link, QColor(0x6c, 0xb4, 0xff));
    p.setColor(QPalette::LinkVisited, QColor(0xb4, 0x96, 0xff));
    p.setColor(QPalette::Highlight, QColor(0x2f, 0x6f, 0xc4));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Light, QColor(0x45, 0x47, 0x4b));
    p.setColor(QPalette::Midlight, QColor(0x3a, 0x3c, 0x40));
    p.setColor(QPalette::Mid, QColor(0x25, 0x26, 0x29));
    p.setColor(QPalette::Dark, QColor(0x18, 0x19, 0x1b));
    p.setColor(QPalette::Shadow, Qt::black);
    for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, muted);
    return p;
}

QString applyPaletteChoice(QApplication &app, const QString &choice)
{
    if (choice.isEmpty() || choice == QLatin1String("system"))
        return {};
    if (choice != QLatin1String("light") && choice != QLatin1String("dark"))
        return QStringLiteral("the palette is system, light or dark, not '%1'").arg(choice);
    app.setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    app.setPalette(choice == QLatin1String("dark") ? darkPalette() : app.style()->standardPalette());
    return {};
}

} // namespace kforge::ui
