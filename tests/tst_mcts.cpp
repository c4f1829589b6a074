// Tree statistics and selection, as tables: progressive widening, skipping nodes in flight, repairs
// of failed nodes bounded, and the guard's speed decision.
#include <QtTest>

#include "protocol/verdict.h"
#include "search/mcts.h"

using namespace kforge;

class TestMcts : public QObject {
    Q_OBJECT
private slots:
    void rootExpandsFirst()
    {
        MctsTree t;
        MctsParams p;
        QCOMPARE(t.select(p).value_or(-1), 0);
    }

    void widening_data()
    {
        QTest::addColumn<int>("visits");
        QTest::addColumn<int>("allowed");
        QTest::newRow("unvisited") << 0 << 2;
        QTest::newRow("3 visits") << 3 << 4;
        QTest::newRow("8 visits") << 8 << 6;
        QTest::newRow("24 visits") << 24 << 10;
    }

    void widening()
    {
        QFETCH(int, visits);
        QFETCH(int, allowed);
        MctsTree t;
        MctsParams p; // k = 2, alpha = 0.5
        for (int i = 0; i < visits; ++i) {
            const int c = t.addChild(0);
            t.complete(c, 0.1, false);
        }
        QCOMPARE(t.allowedChildren(0, p), allowed);
    }

    void inFlightNodesAreNotSelected()
    {
        MctsTree t;
        MctsParams p;
        p.widenK = 1;
        p.widenAlpha = 0; // exactly one child per node
        const int a = t.addChild(0);
        // The root is full and its only child is in flight: nothing to do until it returns.
        QVERIFY(!t.select(p).has_value());
        t.complete(a, 0.5, false);
        QCOMPARE(t.select(p).value_or(-1), a);
    }

    void prefersTheBetterSubtree()
    {
        MctsTree t;
        MctsParams p;
        p.widenK = 2;
        p.widenAlpha = 0; // two children per node
        p.exploration = 0.1;
        const int good = t.addChild(0), bad = t.addChild(0);
        t.complete(good, 1.0, false);
        t.complete(bad, -1.0, true);
        QCOMPARE(t.select(p).value_or(-1), good);
    }

    void failedNodesGetBoundedRepairs()
    {
        MctsTree t;
        MctsParams p;
        p.maxRepairs = 1;
        const int f = t.addChild(0);
        t.complete(f, -1.0, true);
        QCOMPARE(t.allowedChildren(f, p), 1);
        const int repair = t.addChild(f);
        t.complete(repair, -1.0, true);
        QCOMPARE(t.allowedChildren(f, p), 1);
        QCOMPARE(int(t.node(f).children.size()), 1);
        QCOMPARE(t.node(0).visits, 2);
    }

    void exhaustedNodesStopGrowing()
    {
        MctsTree t;
        MctsParams p;
        t.markExhausted(0);
        QVERIFY(!t.select(p).has_value());
    }

    void reward_data()
    {
        QTest::addColumn<bool>("correct");
        QTest::addColumn<double>("speedup");
        QTest::addColumn<double>("reward");
        QTest::newRow("failed") << false << 3.0 << -1.0;
        QTest::newRow("equal to baseline") << true << 1.0 << 0.0;
        QTest::newRow("twice as fast") << true << 2.0 << std::log(2.0);
        QTest::newRow("clamped fast") << true << 100.0 << 2.0;
        QTest::newRow("clamped slow") << true << 0.01 << -1.0;
    }

    void reward()
    {
        QFETCH(bool, correct);
        QFETCH(double, speedup);
        QFETCH(double, reward);
        QCOMPARE(rewardFor(correct, speedup), reward);
    }
};

QTEST_GUILESS_MAIN(TestMcts)
#include "tst_mcts.moc"
