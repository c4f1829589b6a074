// The diff rows the side-by-side view shows, as tables: each case gives two sources and the rows it
// must produce, printed one string per row so a failing comparison reads as a diff itself.
//
// A row prints as "LEFT op RIGHT": op is '=' for equal lines, '~' for a modified pair, '<' for a
// removed line beside padding and '>' for an added one. A line prints as its number and text with the
// changed characters in brackets; padding prints as '.'.
#include <QtTest>

#include "ui/diff_rows.h"

using namespace kforge::ui;

namespace {

QString printLine(const DiffLine &line)
{
    if (line.isPadding())
        return QStringLiteral(".");
    QString text;
    int at = 0;
    for (const auto &r : line.changed) {
        text += QString::fromStdString(line.text.substr(size_t(at), size_t(r.start - at)));
        text += QLatin1Char('[') + QString::fromStdString(line.text.substr(size_t(r.start), size_t(r.end - r.start))) + QLatin1Char(']');
        at = r.end;
    }
    text += QString::fromStdString(line.text.substr(size_t(at)));
    return QString::number(line.number) + QLatin1Char(' ') + text;
}

QStringList print(const DiffRows &d)
{
    QStringList out;
    for (const auto &row : d.rows) {
        const QChar op = row.equal ? QLatin1Char('=')
                         : row.left.isPadding() ? QLatin1Char('>')
                         : row.right.isPadding() ? QLatin1Char('<')
                                                 : QLatin1Char('~');
        out << printLine(row.left) + QLatin1Char(' ') + op + QLatin1Char(' ') + printLine(row.right);
    }
    return out;
}

} // namespace

class TestDiff : public QObject {
    Q_OBJECT
private slots:
    void rows_data()
    {
        QTest::addColumn<QString>("left");
        QTest::addColumn<QString>("right");
        QTest::addColumn<QStringList>("rows");
        QTest::addColumn<QList<int>>("counts"); // removed, added, modified

        QTest::newRow("both empty") << QString() << QString() << QStringList{} << QList<int>{0, 0, 0};
        QTest::newRow("identical") << QStringLiteral("a\nb\n") << QStringLiteral("a\nb\n")
                                   << QStringList{QStringLiteral("1 a = 1 a"), QStringLiteral("2 b = 2 b")} << QList<int>{0, 0, 0};
        QTest::newRow("left empty: every line added")
            << QString() << QStringLiteral("x\ny")
            << QStringList{QStringLiteral(". > 1 x"), QStringLiteral(". > 2 y")} << QList<int>{0, 2, 0};
        QTest::newRow("right empty: every line removed")
            << QStringLiteral("x\ny\n") << QString()
            << QStringList{QStringLiteral("1 x < ."), QStringLiteral("2 y < .")} << QList<int>{2, 0, 0};
        QTest::newRow("one character changed")
            << QStringLiteral("a\n#define BLOCK 128\nc\n") << QStringLiteral("a\n#define BLOCK 256\nc\n")
            << QStringList{QStringLiteral("1 a = 1 a"), QStringLiteral("2 #define BLOCK [1]2[8] ~ 2 #define BLOCK 2[56]"),
                           QStringLiteral("3 c = 3 c")}
            << QList<int>{0, 0, 1};
        QTest::newRow("characters inserted")
            << QStringLiteral("int x = 1;") << QStringLiteral("int x = 42;")
            << QStringList{QStringLiteral("1 int x = [1]; ~ 1 int x = [42];")} << QList<int>{0, 0, 1};
        QTest::newRow("line inserted in the middle")
            << QStringLiteral("a\nc\n") << QStringLiteral("a\nb\nc\n")
            << QStringList{QStringLiteral("1 a = 1 a"), QStringLiteral(". > 2 b"), QStringLiteral("2 c = 3 c")} << QList<int>{0, 1, 0};
        QTest::newRow("line removed from the middle")
            << QStringLiteral("a\nb\nc") << QStringLiteral("a\nc")
            << QStringList{QStringLiteral("1 a = 1 a"), QStringLiteral("2 b < ."), QStringLiteral("3 c = 2 c")} << QList<int>{1, 0, 0};
        QTest::newRow("more removed than added: padding on the right")
            << QStringLiteral("a\nx1\nx2\nx3\nz") << QStringLiteral("a\ny1\nz")
            << QStringList{QStringLiteral("1 a = 1 a"), QStringLiteral("2 [x]1 ~ 2 [y]1"), QStringLiteral("3 x2 < ."),
                           QStringLiteral("4 x3 < ."), QStringLiteral("5 z = 3 z")}
            << QList<int>{2, 0, 1};
        QTest::newRow("more added than removed: padding on the left")
            << QStringLiteral("for (;;) {\n  old();\n}") << QStringLiteral("for (;;) {\n  neu();\n  more();\n}")
            << QStringList{QStringLiteral("1 for (;;) { = 1 for (;;) {"), QStringLiteral("2   [old](); ~ 2   [neu]();"),
                           QStringLiteral(". > 3   more();"), QStringLiteral("3 } = 4 }")}
            << QList<int>{0, 1, 1};
        QTest::newRow("a final newline makes no extra line")
            << QStringLiteral("a\nb") << QStringLiteral("a\nb\n")
            << QStringList{QStringLiteral("1 a = 1 a"), QStringLiteral("2 b = 2 b")} << QList<int>{0, 0, 0};
        QTest::newRow("empty lines are lines")
            << QStringLiteral("a\n\nb\n") << QStringLiteral("a\nb\n")
            << QStringList{QStringLiteral("1 a = 1 a"), QStringLiteral("2  < ."), QStringLiteral("3 b = 2 b")} << QList<int>{1, 0, 0};
        QTest::newRow("two separate changes")
            << QStringLiteral("k<4>\nsame\nsame\nlaunch(8)\n") << QStringLiteral("k<8>\nsame\nsame\nlaunch(16)\n")
            << QStringList{QStringLiteral("1 k<[4]> ~ 1 k<[8]>"), QStringLiteral("2 same = 2 same"), QStringLiteral("3 same = 3 same"),
                           QStringLiteral("4 launch([8]) ~ 4 launch([16])")}
            << QList<int>{0, 0, 2};
    }

    void rows()
    {
        QFETCH(QString, left);
        QFETCH(QString, right);
        QFETCH(QStringList, rows);
        QFETCH(QList<int>, counts);
        const auto d = diffRows(left.toStdString(), right.toStdString());
        QCOMPARE(print(d), rows);
        QCOMPARE((QList<int>{d.removed, d.added, d.modified}), counts);
        QCOMPARE(d.identical(), counts == (QList<int>{0, 0, 0}));
    }

    // Every row carries the source text it stands for: reading one side's non-padding rows back in
    // order gives that source again, so the views can never show a line twice or drop one.
    void sidesReassembleTheSources()
    {
        const std::string a = "__global__ void k(float *x) {\n  int i = threadIdx.x;\n  x[i] *= 2;\n}\n";
        const std::string b = "__global__ void k(float *__restrict__ x, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                              "  if (i < n)\n    x[i] *= 2;\n}\n";
        const auto d = diffRows(a, b);
        std::string left, right;
        for (const auto &row : d.rows) {
            if (!row.left.isPadding())
                left += row.left.text + '\n';
            if (!row.right.isPadding())
                right += row.right.text + '\n';
        }
        QCOMPARE(QString::fromStdString(left), QString::fromStdString(a));
        QCOMPARE(QString::fromStdString(right), QString::fromStdString(b));
    }
};

QTEST_MAIN(TestDiff)
#include "tst_diff.moc"
