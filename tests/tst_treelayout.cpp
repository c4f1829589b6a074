// The family tree's geometry: leaves left to right in depth-first order, parents centred over their
// children, no two nodes at one depth closer than a column. Trees are printed one node a line so a
// failing comparison shows the whole layout.
#include <QtTest>
#include <algorithm>
#include <map>
#include <random>

#include "ui/tree_layout.h"

using kforge::ui::layoutTree;
using kforge::ui::TreeEdge;
using kforge::ui::TreeLayout;

namespace {

// "1 2:1 3:1 4:2" -> node 1 is a root, 2 and 3 are children of 1, 4 of 2.
std::vector<TreeEdge> parse(const QString &spec)
{
    std::vector<TreeEdge> edges;
    for (const auto &tok : spec.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        const auto parts = tok.split(QLatin1Char(':'));
        TreeEdge e{parts[0].toLongLong(), std::nullopt};
        if (parts.size() > 1)
            e.parentId = parts[1].toLongLong();
        edges.push_back(e);
    }
    return edges;
}

QStringList print(const TreeLayout &l)
{
    QStringList out;
    for (const auto &n : l.nodes)
        out << QStringLiteral("%1 d%2 x%3").arg(n.id).arg(n.depth).arg(n.x);
    return out;
}

// Shaped like a search: each new node hangs off a random earlier one, biased to recent ones.
std::vector<TreeEdge> randomTree(int count, unsigned seed)
{
    std::mt19937 rng(seed);
    std::vector<TreeEdge> edges{{1, std::nullopt}};
    for (int i = 2; i <= count; ++i) {
        std::uniform_int_distribution<int> pick(std::max(1, i - 12), i - 1);
        edges.push_back({i, pick(rng)});
    }
    return edges;
}

std::vector<TreeEdge> chain(int count)
{
    std::vector<TreeEdge> edges{{1, std::nullopt}};
    for (int i = 2; i <= count; ++i)
        edges.push_back({i, i - 1});
    return edges;
}

std::vector<TreeEdge> fanOut(int children)
{
    std::vector<TreeEdge> edges{{1, std::nullopt}};
    for (int i = 2; i <= children + 1; ++i)
        edges.push_back({i, 1});
    return edges;
}

} // namespace

Q_DECLARE_METATYPE(std::vector<TreeEdge>)

class TestTreeLayout : public QObject {
    Q_OBJECT
private slots:
    void layout_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QStringList>("expected");
        QTest::addColumn<double>("width");
        QTest::addColumn<int>("levels");

        QTest::newRow("empty") << QString() << QStringList{} << 0.0 << 0;
        QTest::newRow("single node") << QStringLiteral("1") << QStringList{QStringLiteral("1 d0 x0")} << 1.0 << 1;
        QTest::newRow("chain") << QStringLiteral("1 2:1 3:2")
                               << QStringList{QStringLiteral("1 d0 x0"), QStringLiteral("2 d1 x0"), QStringLiteral("3 d2 x0")}
                               << 1.0 << 3;
        QTest::newRow("two children") << QStringLiteral("1 2:1 3:1")
                                      << QStringList{QStringLiteral("1 d0 x0.5"), QStringLiteral("2 d1 x0"), QStringLiteral("3 d1 x1")}
                                      << 2.0 << 2;
        QTest::newRow("wide fan-out")
            << QStringLiteral("1 2:1 3:1 4:1 5:1 6:1")
            << QStringList{QStringLiteral("1 d0 x2"), QStringLiteral("2 d1 x0"), QStringLiteral("3 d1 x1"),
                           QStringLiteral("4 d1 x2"), QStringLiteral("5 d1 x3"), QStringLiteral("6 d1 x4")}
            << 5.0 << 2;
        // 2 has three children, 3 none: 2 sits over the middle one, the root between 2 and 3.
        QTest::newRow("unbalanced")
            << QStringLiteral("1 2:1 3:1 4:2 5:2 6:2")
            << QStringList{QStringLiteral("1 d0 x2"), QStringLiteral("2 d1 x1"), QStringLiteral("3 d1 x3"),
                           QStringLiteral("4 d2 x0"), QStringLiteral("5 d2 x1"), QStringLiteral("6 d2 x2")}
            << 4.0 << 3;
        // Leaves follow depth-first order, not id order: 5 (under 2) comes before 3.
        QTest::newRow("depth-first leaf order")
            << QStringLiteral("1 2:1 3:1 4:2 5:2")
            << QStringList{QStringLiteral("1 d0 x1.25"), QStringLiteral("2 d1 x0.5"), QStringLiteral("3 d1 x2"),
                           QStringLiteral("4 d2 x0"), QStringLiteral("5 d2 x1")}
            << 3.0 << 3;
        QTest::newRow("children in input order")
            << QStringLiteral("1 3:1 2:1")
            << QStringList{QStringLiteral("1 d0 x0.5"), QStringLiteral("3 d1 x0"), QStringLiteral("2 d1 x1")} << 2.0 << 2;
        QTest::newRow("two roots side by side")
            << QStringLiteral("1 2:1 10 11:10 12:10")
            << QStringList{QStringLiteral("1 d0 x0"), QStringLiteral("2 d1 x0"), QStringLiteral("10 d0 x1.5"),
                           QStringLiteral("11 d1 x1"), QStringLiteral("12 d1 x2")}
            << 3.0 << 2;
        QTest::newRow("unknown parent is a root")
            << QStringLiteral("5:99 6:5") << QStringList{QStringLiteral("5 d0 x0"), QStringLiteral("6 d1 x0")} << 1.0 << 2;
        QTest::newRow("duplicate id keeps the first entry")
            << QStringLiteral("1 2:1 2:2 3:1")
            << QStringList{QStringLiteral("1 d0 x0.5"), QStringLiteral("2 d1 x0"), QStringLiteral("3 d1 x1")} << 2.0 << 2;
        QTest::newRow("cycle is broken, nothing dropped")
            << QStringLiteral("1 2:3 3:2")
            << QStringList{QStringLiteral("1 d0 x0"), QStringLiteral("2 d0 x1"), QStringLiteral("3 d1 x1")} << 2.0 << 2;
    }

    void layout()
    {
        QFETCH(QString, spec);
        QFETCH(QStringList, expected);
        QFETCH(double, width);
        QFETCH(int, levels);
        const auto l = layoutTree(parse(spec));
        QCOMPARE(print(l), expected);
        QCOMPARE(l.width, width);
        QCOMPARE(l.levels, levels);
    }

    void properties_data()
    {
        QTest::addColumn<std::vector<TreeEdge>>("edges");
        QTest::newRow("fan-out 60") << fanOut(60);
        QTest::newRow("chain 5000 (no recursion)") << chain(5000);
        QTest::newRow("search-like 40") << randomTree(40, 1);
        QTest::newRow("search-like 300") << randomTree(300, 7);
        QTest::newRow("search-like 2000") << randomTree(2000, 42);
    }

    // Holds for every tree: the invariants the view relies on.
    void properties()
    {
        QFETCH(std::vector<TreeEdge>, edges);
        const auto l = layoutTree(edges);
        QCOMPARE(l.nodes.size(), edges.size());
        QCOMPARE(print(layoutTree(edges)), print(l)); // deterministic

        std::map<int64_t, std::vector<int64_t>> children;
        for (const auto &e : edges)
            if (e.parentId)
                children[*e.parentId].push_back(e.id);

        std::map<int, std::vector<double>> byDepth;
        int leaves = 0;
        for (const auto &n : l.nodes) {
            byDepth[n.depth].push_back(n.x);
            const auto &kids = children[n.id];
            if (kids.empty()) {
                ++leaves;
                continue;
            }
            const auto *first = l.find(kids.front());
            const auto *last = l.find(kids.back());
            QVERIFY(first && last);
            for (auto k : kids)
                QCOMPARE(l.find(k)->depth, n.depth + 1);
            if (n.x != (first->x + last->x) / 2)
                QFAIL(qPrintable(QStringLiteral("node %1 at x%2 is not centred over %3..%4").arg(n.id).arg(n.x).arg(first->x).arg(last->x)));
        }
        QCOMPARE(l.width, double(leaves));

        for (auto &[depth, xs] : byDepth) {
            std::sort(xs.begin(), xs.end());
            for (size_t i = 1; i < xs.size(); ++i)
                if (xs[i] - xs[i - 1] < 1.0)
                    QFAIL(qPrintable(QStringLiteral("depth %1: nodes at x%2 and x%3 overlap").arg(depth).arg(xs[i - 1]).arg(xs[i])));
        }
    }

    void leavesTakeConsecutiveColumnsInDepthFirstOrder()
    {
        const auto edges = randomTree(120, 3);
        const auto l = layoutTree(edges);
        std::map<int64_t, std::vector<int64_t>> children;
        for (const auto &e : edges)
            if (e.parentId)
                children[*e.parentId].push_back(e.id);
        QStringList order, columns;
        std::vector<int64_t> stack{1};
        int column = 0;
        while (!stack.empty()) {
            const auto id = stack.back();
            stack.pop_back();
            const auto &kids = children[id];
            if (kids.empty()) {
                order << QStringLiteral("%1@%2").arg(id).arg(column++);
                columns << QStringLiteral("%1@%2").arg(id).arg(l.find(id)->x);
            }
            for (auto it = kids.rbegin(); it != kids.rend(); ++it)
                stack.push_back(*it);
        }
        QCOMPARE(columns, order);
    }
};

QTEST_APPLESS_MAIN(TestTreeLayout)
#include "tst_treelayout.moc"
