// Tree statistics and selection, as tables: progressive widening, skipping nodes in flight, repairs
// of failed nodes bounded, and the guard's speed decision.
#include <QtTest>

#include <cmath>

#include "protocol/verdict.h"
#include "search/campaign.h"
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

    // Campaign plans: inputs "key:workloadMs:floorMs[:x]" (x: not searchable), budget, expected
    // "key=nodes" in plan order (largest savable time first).
    void campaignPlan_data()
    {
        QTest::addColumn<QStringList>("inputs");
        QTest::addColumn<int>("budget");
        QTest::addColumn<QStringList>("expected");
        QTest::addColumn<double>("bound");
        const auto l = [](std::initializer_list<const char *> v) {
            QStringList out;
            for (const char *x : v)
                out << QString::fromLatin1(x);
            return out;
        };
        // 100 ms workload: softmax can save 30, norm 10, relu is at its roofline, mm has no floor.
        QTest::newRow("by savable time") << l({"softmax:40:10", "norm:20:10", "relu:10:9.95"}) << 12 << l({"softmax=8", "norm=4", "relu=0"})
                                         << 100.0 / 60.0;
        QTest::newRow("minimum first, then shares") << l({"a:50:0", "b:2:1", "c:1:0.5"}) << 10 << l({"a=6", "b=2", "c=2"}) << 100.0 / 48.5;
        QTest::newRow("budget smaller than the minimums") << l({"a:50:0", "b:20:0", "c:10:0"}) << 3 << l({"a=2", "b=1", "c=0"}) << 100.0 / 30.0;
        QTest::newRow("no roofline counts all its time") << l({"mm:30:-1", "softmax:20:10"}) << 6 << l({"mm=4", "softmax=2"}) << 100.0 / 60.0;
        QTest::newRow("not searchable gets none") << l({"a:60:10:x", "b:20:10"}) << 5 << l({"b=5", "a=0"}) << 100.0 / 90.0;
        QTest::newRow("nothing to win") << l({"a:10:10", "b:5:5"}) << 8 << l({"a=0", "b=0"}) << 1.0;
    }

    void campaignPlan()
    {
        QFETCH(QStringList, inputs);
        QFETCH(int, budget);
        QFETCH(QStringList, expected);
        QFETCH(double, bound);
        std::vector<CampaignInput> in;
        for (const auto &s : inputs) {
            const auto f = s.split(QLatin1Char(':'));
            CampaignInput c;
            c.key = f[0].toStdString();
            c.workloadMs = f[1].toDouble();
            c.floorMs = f[2].toDouble();
            c.searchable = f.size() < 4;
            in.push_back(c);
        }
        const auto plan = planCampaign(in, budget, 100.0);
        QStringList got;
        int total = 0;
        for (const auto &it : plan.items) {
            got << QStringLiteral("%1=%2").arg(QString::fromStdString(it.key)).arg(it.nodes);
            total += it.nodes;
        }
        QCOMPARE(got, expected);
        QVERIFY(total <= budget);
        QCOMPARE(plan.nodes, total);
        QVERIFY2(std::abs(amdahlBound(plan) - bound) < 1e-9, qPrintable(QString::number(amdahlBound(plan))));
    }

    void amdahlOfMeasuredSpeedups()
    {
        const auto plan = planCampaign({{"softmax", 40, 10, true, {}}, {"norm", 20, 10, true, {}}}, 10, 100.0);
        // softmax 2x faster saves 20 ms, norm 1.0x saves nothing, a slower one is not counted: 100/80.
        QCOMPARE(amdahlSpeedup(plan, {{"softmax", 2.0}, {"norm", 1.0}}), 1.25);
        QCOMPARE(amdahlSpeedup(plan, {{"softmax", 0.5}}), 1.0);
    }
};

QTEST_GUILESS_MAIN(TestMcts)
#include "tst_mcts.moc"
