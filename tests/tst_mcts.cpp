// Tree statistics and selection, as tables: progressive widening, skipping nodes in flight, repairs
// of failed nodes bounded, and the guard's speed decision. The template proposer's informed expansion
// on hand-built spaces: coordinate moves, no point twice, the template switch rule.
#include <QtTest>

#include <cmath>
#include <set>

#include "proposers/template_moves.h"
#include "proposers/template_proposer.h"
#include "search/policy_replay.h"

#include "protocol/verdict.h"
#include "search/campaign.h"
#include "search/mcts.h"
#include "search/search_value.h"
#include "search/selection_scores.h"

using namespace kforge;

namespace {

// A hand-built tree: one entry per node after the root, in id order, "parent:reward" (a correct
// result), "parent:reward:f" (a failure), "parent:reward:x" (correct, and the proposer had nothing
// more from it) or "parent:flight" (still in flight).
MctsTree buildTree(const QStringList &nodes)
{
    MctsTree t;
    for (const auto &spec : nodes) {
        const auto f = spec.split(QLatin1Char(':'));
        const int c = t.addChild(f[0].toInt());
        if (f[1] == QLatin1String("flight"))
            continue;
        const bool failed = f.size() > 2 && f[2] == QLatin1String("f");
        t.complete(c, f[1].toDouble(), failed);
        if (f.size() > 2 && f[2] == QLatin1String("x"))
            t.markExhausted(c);
    }
    return t;
}

QStringList specs(std::initializer_list<const char *> v)
{
    QStringList out;
    for (const char *x : v)
        out << QString::fromLatin1(x);
    return out;
}

// A hand-built template of the family "hand": parameters p0, p1, ... with `sizes[k]` ordered values
// 0..sizes[k]-1; `seed` its seed point (empty: none).
KernelTemplate handTemplate(const std::string &id, const QList<int> &sizes, const QList<int> &seed = {})
{
    KernelTemplate t;
    t.id = id;
    t.family = "hand";
    t.backend = "cpu";
    for (int k = 0; k < sizes.size(); ++k)
        for (int v = 0; v < sizes[k]; ++v)
            t.space["p" + std::to_string(k)].push_back(v);
    t.render = [](const nlohmann::json &, const OperatorCard &) { return std::string("// a hand-built point"); };
    if (!seed.isEmpty())
        t.seed = [seed](const OperatorCard &) {
            nlohmann::json p = nlohmann::json::object();
            for (int k = 0; k < seed.size(); ++k)
                p["p" + std::to_string(k)] = seed[k];
            return p;
        };
    return t;
}

OperatorCard handCard()
{
    OperatorCard c;
    c.key = "hand";
    c.family = "hand";
    return c;
}

nlohmann::json point(const QList<int> &idx)
{
    nlohmann::json p = nlohmann::json::object();
    for (int k = 0; k < idx.size(); ++k)
        p["p" + std::to_string(k)] = idx[k];
    return p;
}

// "2,1=0.5": a point and its speedup (0: failed).
std::pair<nlohmann::json, double> measured(const QString &spec)
{
    const auto parts = spec.split(QLatin1Char('='));
    QList<int> idx;
    for (const auto &v : parts[0].split(QLatin1Char(',')))
        idx << v.toInt();
    return {point(idx), parts.size() > 1 ? parts[1].toDouble() : 0.0};
}

NodeRecord result(int64_t id, int64_t parent, const std::string &templateId, const nlohmann::json &params, double speedup)
{
    NodeRecord n;
    n.id = id;
    n.parentId = parent;
    n.templateId = templateId;
    n.params = params;
    n.speedup = speedup;
    n.status = speedup > 0 ? "accepted" : "incorrect";
    return n;
}

} // namespace

class TestMcts : public QObject {
    Q_OBJECT
    // The columns expectMove reads.
    static void moveColumns()
    {
        QTest::addColumn<QStringList>("evidence");
        QTest::addColumn<QString>("origin");
        QTest::addColumn<QString>("move");
        QTest::addColumn<QString>("rank");
    }

    // The move a data row asks for (evidence, origin, move, rank) from its origin on template t: the
    // best move, valid and not yet seen.
    void expectMove(const KernelTemplate &t)
    {
        QFETCH(QStringList, evidence);
        QFETCH(QString, origin);
        QFETCH(QString, move);
        QFETCH(QString, rank);
        moves::Evidence e;
        for (const auto &spec : evidence) {
            const auto [p, s] = measured(spec);
            e.measure(t.id, p, s > 0 ? s : -1.0);
        }
        const auto o = measured(origin).first;
        e.measure(t.id, o, 1.0);
        std::mt19937_64 rng(11);
        const auto m = moves::bestMove({moves::Origin{&t, o, 1.0, 1}}, handCard(), e, rng);
        QVERIFY(m);
        QCOMPARE(QString::fromStdString(m->parameter + "=" + m->to.dump()), move);
        QCOMPARE(QString::fromLatin1(moves::rankName(m->rank)), rank);
        QVERIFY(!t.valid || t.valid(m->params, handCard()));
        QVERIFY(!e.isSeen(t.id, m->params));
    }

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

    // The scores a selection reports: which node grows a child, and when UCT picked it among its
    // siblings, its parent's visits, mean reward, exploration term, UCT value and the runner-up's UCT.
    void selectionScores_data()
    {
        QTest::addColumn<QStringList>("tree");
        QTest::addColumn<double>("c");
        QTest::addColumn<double>("alpha"); // widenK is 2: with alpha 0 every node has two children
        QTest::addColumn<int>("node");
        QTest::addColumn<bool>("viaUct");
        QTest::addColumn<int>("depth");
        QTest::addColumn<int>("parentVisits");
        QTest::addColumn<double>("mean");
        QTest::addColumn<double>("uct");
        QTest::addColumn<double>("runnerUp"); // NaN: none
        QTest::addColumn<int>("allowed");
        const double none = std::nan("");
        const QStringList empty;
        QTest::newRow("an empty root widens") << empty << 0.7 << 0.5 << 0 << false << 0 << 0 << 0.0 << 0.0 << none << 2;
        QTest::newRow("root with room widens") << QStringList{QStringLiteral("0:0.5")} << 0.7 << 0.5 << 0 << false << 0 << 0 << 0.0 << 0.0
                                               << none << 2;
        // Root full (2 of 2): a (1.0) beats the failed b (-1.0): UCT = mean + 0.5 sqrt(ln 3 / 1).
        QTest::newRow("better child by uct") << QStringList{QStringLiteral("0:1.0"), QStringLiteral("0:-1.0:f")} << 0.5 << 0.0 << 1 << true << 1
                                             << 2 << 1.0 << 1.0 + 0.5 * std::sqrt(std::log(3.0)) << -1.0 + 0.5 * std::sqrt(std::log(3.0))
                                             << 2;
        // Exploration outweighs mean: a (mean 0.2, 3 visits) against b (0.1, 1 visit) at c = 1.
        QTest::newRow("exploration wins") << QStringList{QStringLiteral("0:0.2"), QStringLiteral("0:0.1"), QStringLiteral("1:0.2"),
                                                         QStringLiteral("1:0.2")}
                                          << 1.0 << 0.0 << 2 << true << 1 << 4 << 0.1 << 0.1 + std::sqrt(std::log(5.0))
                                          << 0.2 + std::sqrt(std::log(5.0) / 3) << 2;
        // Two levels down: a (mean 0.5) over b, then a1 (0.9) over a2 (0.1) under a's 3 visits.
        QTest::newRow("descends two levels") << QStringList{QStringLiteral("0:0.5"), QStringLiteral("0:0.0"), QStringLiteral("1:0.9"),
                                                            QStringLiteral("1:0.1")}
                                             << 0.1 << 0.0 << 3 << true << 2 << 3 << 0.9 << 0.9 + 0.1 * std::sqrt(std::log(4.0))
                                             << 0.1 + 0.1 * std::sqrt(std::log(4.0)) << 2;
        QTest::newRow("a sibling in flight is no runner-up") << QStringList{QStringLiteral("0:0.5"), QStringLiteral("0:flight")} << 0.7 << 0.0
                                                             << 1 << true << 1 << 1 << 0.5 << 0.5 + 0.7 * std::sqrt(std::log(2.0)) << none
                                                             << 2;
        // A failed child of a full root gets at most maxRepairs (2) children: both allowed at 1 visit.
        QTest::newRow("failed node is repaired") << QStringList{QStringLiteral("0:-1.0:f"), QStringLiteral("0:-1.0:f")} << 0.0 << 0.0 << 1
                                                 << true << 1 << 2 << -1.0 << -1.0 << -1.0 << 2;
    }

    void selectionScores()
    {
        QFETCH(QStringList, tree);
        QFETCH(double, c);
        QFETCH(double, alpha);
        QFETCH(int, node);
        QFETCH(bool, viaUct);
        QFETCH(int, depth);
        QFETCH(int, parentVisits);
        QFETCH(double, mean);
        QFETCH(double, uct);
        QFETCH(double, runnerUp);
        QFETCH(int, allowed);
        const auto t = buildTree(tree);
        MctsParams p;
        p.exploration = c;
        p.widenAlpha = alpha;
        const auto s = t.selectScored(p);
        QVERIFY(s.has_value());
        QCOMPARE(s->node, node);
        QCOMPARE(t.select(p).value_or(-1), node);
        QCOMPARE(s->viaUct, viaUct);
        QCOMPARE(s->depth, depth);
        QCOMPARE(s->allowed, allowed);
        QCOMPARE(s->children, int(t.node(node).children.size()));
        QCOMPARE(s->visits, t.node(node).visits);
        if (!viaUct)
            return;
        QCOMPARE(s->parentVisits, parentVisits);
        QVERIFY(std::abs(s->mean - mean) < 1e-12);
        QVERIFY2(std::abs(s->uct - uct) < 1e-12, qPrintable(QString::number(s->uct)));
        QVERIFY(std::abs(s->explorationTerm - (uct - mean)) < 1e-12);
        QCOMPARE(s->runnerUpUct.has_value(), !std::isnan(runnerUp));
        if (s->runnerUpUct)
            QVERIFY2(std::abs(*s->runnerUpUct - runnerUp) < 1e-12, qPrintable(QString::number(*s->runnerUpUct)));
    }

    // Best backup: a subtree with one great node and a failed child ranks by the great one.
    void bestBackupRanksByTheBestReward()
    {
        const auto t = buildTree(specs({"0:0.9", "0:0.3", "1:-1:f"}));
        MctsParams p;
        p.exploration = 0.1;
        p.widenAlpha = 0;
        QCOMPARE(t.select(p).value_or(-1), 2); // mean: node 1 is at -0.05
        p.bestBackup = true;
        const auto s = t.selectScored(p);
        QCOMPARE(s->node, 1);
        QCOMPARE(s->mean, 0.9);
    }

    // The sentence the CLI and the inspector show, from the stored JSON.
    void selectionExplained()
    {
        MctsParams p;
        p.exploration = 0.5;
        p.widenAlpha = 0;
        const auto t = buildTree({QStringLiteral("0:1.0"), QStringLiteral("0:-1.0:f")});
        const auto j = selectionJson(*t.selectScored(p), p, 42, 7);
        QCOMPARE(j.value("rule", ""), std::string("uct"));
        QCOMPARE(j.value("parent_visits", 0), 2);
        QCOMPARE(QString::fromStdString(explainSelection(j)),
                 QStringLiteral("Chosen because #42 won UCT 1.52 = mean reward 1 + exploration 0.524 (c 0.5, 2 visits of the baseline) "
                                "over the runner-up's -0.476, and #42 may grow a new child (0 of the 2 progressive widening allows at "
                                "1 visit)."));
        const auto root = selectionJson(*MctsTree().selectScored(p), p, 7, 0);
        QCOMPARE(QString::fromStdString(explainSelection(root)),
                 QStringLiteral("Chosen because the baseline may grow a new child (0 of the 2 progressive widening allows at 0 visits)."));
        QCOMPARE(explainSelection(nlohmann::json::object()), std::string());
        QCOMPARE(explainSelection(ruleJson("warm_start", "a lesson goes first")), std::string("Chosen because a lesson goes first."));
        // What the proposer made is said after why the parent was chosen.
        auto made = ruleJson("warm_start", "a lesson goes first");
        made["made"] = "move unroll from 4 to 8 (improving) from node 3 (1.20x)";
        QCOMPARE(explainSelection(made),
                 std::string("Chosen because a lesson goes first. Made: move unroll from 4 to 8 (improving) from node 3 (1.20x)."));
        QCOMPARE(explainSelection(nlohmann::json{{"made", "x"}}), std::string("Made: x."));
        QCOMPARE(explainSelection(nlohmann::json{{"made", 3}}), std::string());
    }

    // Dead-end pruning: "node<sibling" for each subtree pruned, the sibling whose best reward it
    // fell far below.
    void pruning_data()
    {
        QTest::addColumn<QStringList>("tree");
        QTest::addColumn<double>("margin");
        QTest::addColumn<int>("minVisits");
        QTest::addColumn<QStringList>("pruned");
        const auto failedBranch = specs({"0:0.7", "0:-1:f", "2:-1:f", "2:-1:f"});
        QTest::newRow("failed subtree far below its sibling") << failedBranch << 1.0 << 3 << specs({"2<1"});
        QTest::newRow("margin 0 never prunes") << failedBranch << 0.0 << 3 << QStringList();
        QTest::newRow("too few evaluations to judge") << specs({"0:0.7", "0:-1:f"}) << 1.0 << 3 << QStringList();
        QTest::newRow("a live leaf keeps it") << specs({"0:0.7", "0:-0.5", "2:-1:f", "2:-0.6"}) << 1.0 << 3 << QStringList();
        QTest::newRow("close to its sibling") << specs({"0:0.2", "0:-0.5", "2:-1:f", "2:-1:f"}) << 1.0 << 3 << QStringList();
        QTest::newRow("a node in flight keeps it") << specs({"0:0.7", "0:-1:f", "2:-1:f", "2:-1:f", "2:flight"}) << 1.0 << 3 << QStringList();
        QTest::newRow("an exhausted leaf is a dead end") << specs({"0:0.7", "0:-0.5:x"}) << 1.0 << 1 << specs({"2<1"});
        QTest::newRow("pruned deep, not above") << specs({"0:0.9", "0:0.5", "2:0.5", "2:-1:f", "4:-1:f", "4:-1:f"}) << 1.0 << 3
                                                << specs({"4<3"});
        QTest::newRow("no sibling, nothing to compare") << specs({"0:-1:f", "1:-1:f", "1:-1:f"}) << 1.0 << 3 << QStringList();
    }

    void pruning()
    {
        QFETCH(QStringList, tree);
        QFETCH(double, margin);
        QFETCH(int, minVisits);
        QFETCH(QStringList, pruned);
        auto t = buildTree(tree);
        MctsParams p;
        p.pruneMargin = margin;
        p.pruneMinVisits = minVisits;
        QStringList got;
        for (const auto &cut : t.prune(p)) {
            got << QStringLiteral("%1<%2").arg(cut.node).arg(cut.sibling);
            QVERIFY(t.node(cut.node).pruned);
            QVERIFY(cut.siblingBest - cut.best >= margin);
        }
        QCOMPARE(got, pruned);
        QVERIFY(t.prune(p).empty()); // once: a pruned subtree is not reported again
    }

    // A failed child that UCT's exploration would pick is passed over once pruned.
    void selectionPassesOverPrunedSubtrees()
    {
        auto t = buildTree(specs({"0:0.7", "0:-1:f", "1:0.7", "1:0.7"}));
        MctsParams p;
        p.exploration = 4;
        p.widenAlpha = 0;
        p.pruneMinVisits = 1;
        QCOMPARE(t.select(p).value_or(-1), 2);
        QCOMPARE(t.prune(p).size(), size_t(1));
        QCOMPARE(t.select(p).value_or(-1), 3);
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
        QTest::newRow("clamped slow, above a failure") << true << 0.01 << kSlowestCorrectReward;
    }

    void reward()
    {
        QFETCH(bool, correct);
        QFETCH(double, speedup);
        QFETCH(double, reward);
        QCOMPARE(rewardFor(correct, speedup), reward);
    }

    // What the search ranks by (search/search_value.h): evaluations as "speedup:candidate median" in
    // order, and the values expected. By candidate time the first correct one sets the baseline time.
    void searchValue_data()
    {
        QTest::addColumn<bool>("byTime");
        QTest::addColumn<QStringList>("evaluations");
        QTest::addColumn<QList<double>>("values");
        QTest::newRow("ratio: each its own") << false << QStringList{QStringLiteral("2:50"), QStringLiteral("1.5:40")} << QList<double>{2.0, 1.5};
        QTest::newRow("time: one baseline") << true << QStringList{QStringLiteral("2:50"), QStringLiteral("1.5:40"), QStringLiteral("3:100")} << QList<double>{2.0, 2.5, 1.0};
        QTest::newRow("time: a failure sets nothing") << true << QStringList{QStringLiteral("0:0"), QStringLiteral("1.5:40"), QStringLiteral("2:50")} << QList<double>{0.0, 1.5, 1.2};
        QTest::newRow("time: no median, its speedup") << true << QStringList{QStringLiteral("2:0"), QStringLiteral("1.5:40"), QStringLiteral("2:0")} << QList<double>{2.0, 1.5, 2.0};
    }

    void searchValue()
    {
        QFETCH(bool, byTime);
        QFETCH(QStringList, evaluations);
        QFETCH(QList<double>, values);
        SearchValue v(byTime);
        for (int i = 0; i < evaluations.size(); ++i) {
            const auto parts = evaluations[i].split(QLatin1Char(':'));
            QVERIFY(std::abs(v.of(parts[0].toDouble(), parts[1].toDouble()) - values[i]) < 1e-12);
        }
        QCOMPARE(ranksByCandidateTime("cpu"), true);
        QCOMPARE(ranksByCandidateTime("cuda"), false);
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

    // A separable space, each parameter unimodal along its order: from the seed, or from the middle of
    // each parameter's values, the search (tree and proposer as the engine runs them) evaluates the best
    // point within 1 + sum(values - 1) evaluations, whatever the replay's seed, and never a point twice.
    void coordinateMovesReachTheOptimum_data()
    {
        QTest::addColumn<QList<int>>("sizes");
        QTest::addColumn<QList<int>>("optimum");
        QTest::addColumn<QList<int>>("seed");
        QTest::newRow("corner, from the middle") << QList<int>{5, 4, 3} << QList<int>{0, 0, 0} << QList<int>{};
        QTest::newRow("far corner, from the middle") << QList<int>{5, 4, 3} << QList<int>{4, 3, 2} << QList<int>{};
        QTest::newRow("middle, from a corner seed") << QList<int>{5, 4, 3} << QList<int>{2, 1, 1} << QList<int>{0, 0, 0};
        QTest::newRow("far corner, from a corner seed") << QList<int>{5, 4, 3} << QList<int>{4, 3, 2} << QList<int>{0, 0, 0};
        QTest::newRow("four parameters") << QList<int>{6, 5, 4, 3} << QList<int>{5, 0, 3, 1} << QList<int>{};
        QTest::newRow("two long lines") << QList<int>{8, 8} << QList<int>{7, 0} << QList<int>{3, 4};
        QTest::newRow("one parameter") << QList<int>{10} << QList<int>{9} << QList<int>{};
    }

    void coordinateMovesReachTheOptimum()
    {
        QFETCH(QList<int>, sizes);
        QFETCH(QList<int>, optimum);
        QFETCH(QList<int>, seed);
        TemplateLibrary lib;
        lib.add(handTemplate("hand.sep", sizes, seed));
        const Measure measure = [&](const std::string &, const nlohmann::json &p) -> std::optional<double> {
            double s = 1;
            for (int k = 0; k < sizes.size(); ++k)
                s /= 1.0 + 0.3 * (k + 1) * std::abs(p.at("p" + std::to_string(k)).get<int>() - optimum[k]);
            return s;
        };
        int bound = 1;
        for (int n : sizes)
            bound += n - 1;
        for (uint64_t rs = 1; rs <= 5; ++rs) {
            TemplateProposer proposer("cpu", lib);
            const auto steps = replaySearch(proposer, handCard(), MctsParams{}, rs, 1000, measure,
                                            [](const ReplayStep &s) { return s.speedup >= 1.0; });
            QVERIFY(!steps.empty());
            QCOMPARE(steps.back().params, point(optimum));
            QVERIFY2(int(steps.size()) <= bound, qPrintable(QStringLiteral("%1 evaluations, bound %2, replay seed %3: last move %4")
                                                               .arg(steps.size()).arg(bound).arg(rs).arg(QString::fromStdString(steps.back().rationale))));
            std::set<std::string> points;
            for (const auto &st : steps)
                QVERIFY(points.insert(st.params.dump()).second);
            if (!seed.isEmpty())
                QCOMPARE(steps.front().params, point(seed));
        }
    }

    // Two templates with invalid points (p0 + p1 == 3) and failing ones (p0 == 1): the search proposes
    // every valid point once and only once, then has nothing left from the root or from any node.
    void noPointProposedTwice()
    {
        TemplateLibrary lib;
        for (const char *id : {"hand.a", "hand.b"}) {
            auto t = handTemplate(id, {4, 3}, std::string(id) == "hand.a" ? QList<int>{0, 0} : QList<int>{});
            t.valid = [](const nlohmann::json &p, const OperatorCard &) { return p.at("p0").get<int>() + p.at("p1").get<int>() != 3; };
            lib.add(std::move(t));
        }
        const Measure measure = [](const std::string &id, const nlohmann::json &p) -> std::optional<double> {
            if (p.at("p0").get<int>() + p.at("p1").get<int>() == 3)
                return std::nullopt; // an invalid point proposed: replaySearch throws
            return p.at("p0").get<int>() == 1 ? 0.0 : (id == "hand.a" ? 1.0 : 2.0) + 0.1 * p.at("p1").get<int>();
        };
        const int valid = 2 * (4 * 3 - 3);
        TemplateProposer proposer("cpu", lib);
        std::vector<ReplayStep> steps;
        try {
            steps = replaySearch(proposer, handCard(), MctsParams{}, 7, 1000, measure);
        } catch (const std::exception &e) {
            QFAIL(e.what());
        }
        QCOMPARE(int(steps.size()), valid);
        std::set<std::string> points;
        for (const auto &st : steps)
            QVERIFY2(points.insert(st.templateId + st.params.dump()).second, st.rationale.c_str());
        std::mt19937_64 rng(1);
        QVERIFY(!proposer.propose(handCard(), nullptr, rng));
        const auto node = result(steps.front().node, 0, steps.front().templateId, steps.front().params, steps.front().speedup);
        QVERIFY(!proposer.propose(handCard(), &node, rng));
    }

    // A lesson made at another shape is re-made by the template proposer: its point when valid here,
    // else the valid point nearest it; a lesson of another family's or of no known template is not
    // its to make. The point counts as proposed, so the search never makes it again; with a lesson,
    // a replay starts there and the template's own start is not made.
    void lessonPointsAreAdapted_data()
    {
        QTest::addColumn<QString>("templateId");
        QTest::addColumn<QString>("lesson"); // the lesson's point as JSON
        QTest::addColumn<QString>("made");   // the point proposed, "" for none
        QTest::newRow("valid here") << QStringLiteral("hand.a") << QStringLiteral(R"({"p0":3,"p1":2})") << QStringLiteral(R"({"p0":3,"p1":2})");
        QTest::newRow("invalid here (p0 + p1 == 3): the nearest valid") << QStringLiteral("hand.a") << QStringLiteral(R"({"p0":3,"p1":0})") << QStringLiteral(R"({"p0":2,"p1":0})");
        QTest::newRow("a value the list lacks: the seed's") << QStringLiteral("hand.a") << QStringLiteral(R"({"p0":1,"p1":7})") << QStringLiteral(R"({"p0":1,"p1":0})");
        QTest::newRow("a parameter the template lost") << QStringLiteral("hand.a") << QStringLiteral(R"({"p0":3,"p1":2,"old":1})") << QStringLiteral(R"({"p0":3,"p1":2})");
        QTest::newRow("a parameter the template gained: the seed's") << QStringLiteral("hand.a") << QStringLiteral(R"({"p0":2})") << QStringLiteral(R"({"p0":2,"p1":0})");
        QTest::newRow("gained, and the seed's value invalid there") << QStringLiteral("hand.a") << QStringLiteral(R"({"p0":3})") << QStringLiteral(R"({"p0":2,"p1":0})");
        QTest::newRow("another family's template") << QStringLiteral("hand.other") << QStringLiteral(R"({"p0":3,"p1":2})") << QStringLiteral("");
        QTest::newRow("no such template (an llm lesson)") << QStringLiteral("llm") << QStringLiteral(R"({"rationale":"x"})") << QStringLiteral("");
        QTest::newRow("a point that is no object") << QStringLiteral("hand.a") << QStringLiteral("[1,2]") << QStringLiteral("");
    }

    void lessonPointsAreAdapted()
    {
        QFETCH(QString, templateId);
        QFETCH(QString, lesson);
        QFETCH(QString, made);
        TemplateLibrary lib;
        auto a = handTemplate("hand.a", {4, 3}, {0, 0});
        a.valid = [](const nlohmann::json &p, const OperatorCard &) { return p.at("p0").get<int>() + p.at("p1").get<int>() != 3; };
        lib.add(std::move(a));
        auto other = handTemplate("hand.other", {4, 3});
        other.family = "elsewhere";
        lib.add(std::move(other));
        TemplateProposer proposer("cpu", lib);
        std::mt19937_64 rng(5);
        const auto p = proposer.adapt(handCard(), templateId.toStdString(), nlohmann::json::parse(lesson.toStdString()), rng);
        QCOMPARE(p.has_value(), !made.isEmpty());
        if (!p)
            return;
        QCOMPARE(p->templateId, std::string("hand.a"));
        QCOMPARE(p->params, nlohmann::json::parse(made.toStdString()));
        QVERIFY2(p->rationale.find("another shape") != std::string::npos, p->rationale.c_str());
        QCOMPARE(p->candidate.source, std::string("// a hand-built point"));
        // Proposed once: the same lesson again is made elsewhere, never twice.
        const auto again = proposer.adapt(handCard(), templateId.toStdString(), nlohmann::json::parse(lesson.toStdString()), rng);
        QVERIFY(!again || again->params != p->params);

        // A replay with the lesson makes hand.a's own start (its seed) first and the lesson second, as a
        // search does with a lesson of another shape; neither is made twice.
        TemplateProposer fresh("cpu", lib);
        const Measure measure = [](const std::string &, const nlohmann::json &q) -> std::optional<double> {
            return 1.0 + q.at("p0").get<int>() + 0.1 * q.at("p1").get<int>();
        };
        const auto steps = replaySearch(fresh, handCard(), MctsParams{}, 1, 4, measure, {},
                                        ReplayLesson{templateId.toStdString(), nlohmann::json::parse(lesson.toStdString())});
        QCOMPARE(int(steps.size()), 4);
        QCOMPARE(steps[0].params, point({0, 0}));
        QVERIFY2(steps[0].rationale.find("expert starting point") != std::string::npos, steps[0].rationale.c_str());
        QCOMPARE(steps[1].params, p->params);
        QCOMPARE(steps[1].parent, 0);
        std::set<std::string> points;
        for (const auto &st : steps)
            QVERIFY2(points.insert(st.params.dump()).second, st.rationale.c_str());
    }

    // From the root, every template's start comes first, seeded templates before the others (which
    // start at the middle of their values); then moves from the best point so far.
    void everyTemplateStartsFirst()
    {
        TemplateLibrary lib;
        lib.add(handTemplate("hand.plain", {5, 3}));
        lib.add(handTemplate("hand.seeded", {5, 3}, {4, 0}));
        TemplateProposer proposer("cpu", lib);
        std::mt19937_64 rng(3);
        const auto first = proposer.propose(handCard(), nullptr, rng);
        QVERIFY(first);
        QCOMPARE(first->templateId, std::string("hand.seeded"));
        QCOMPARE(first->params, point({4, 0}));
        const auto second = proposer.propose(handCard(), nullptr, rng);
        QVERIFY(second);
        QCOMPARE(second->templateId, std::string("hand.plain"));
        QCOMPARE(second->params, point({2, 1}));
        proposer.finished(result(1, 0, "hand.seeded", point({4, 0}), 0.5));
        proposer.finished(result(2, 0, "hand.plain", point({2, 1}), 1.5));
        const auto third = proposer.propose(handCard(), nullptr, rng);
        QVERIFY(third);
        QCOMPARE(third->templateId, std::string("hand.plain")); // a move from the best so far
        QVERIFY2(third->rationale.find("from the best so far") != std::string::npos, third->rationale.c_str());
    }

    // A template's further expert starts come after its seed and before any move, from the root and
    // from a node alike, each once, invalid ones skipped; from the root not while another template is
    // clearly ahead.
    void furtherStartsComeBeforeMoves_data()
    {
        QTest::addColumn<bool>("fromRoot");
        QTest::addColumn<double>("otherBest"); // 0: no other template
        QTest::addColumn<bool>("expectStart");
        QTest::newRow("from a node") << false << 0.0 << true;
        QTest::newRow("from the root") << true << 0.0 << true;
        QTest::newRow("from the root, another close") << true << 0.8 << true;
        QTest::newRow("from the root, another clearly ahead") << true << 3.0 << false;
    }

    void furtherStartsComeBeforeMoves()
    {
        QFETCH(bool, fromRoot);
        QFETCH(double, otherBest);
        QFETCH(bool, expectStart);
        TemplateLibrary lib;
        auto a = handTemplate("hand.a", {5, 3}, {0, 0});
        a.valid = [](const nlohmann::json &p, const OperatorCard &) { return p.at("p1").get<int>() != 1; };
        a.moreStarts = [](const OperatorCard &) {
            return std::vector<ExpertStart>{{point({4, 1}), "invalid here"}, {point({4, 2}), "the far corner"}, {point({0, 0}), "the seed again"}};
        };
        lib.add(std::move(a));
        if (otherBest > 0)
            lib.add(handTemplate("hand.b", {2}, {1}));
        TemplateProposer proposer("cpu", lib);
        std::mt19937_64 rng(7);
        std::vector<Proposal> made;
        for (int i = 0; i < (otherBest > 0 ? 2 : 1); ++i) {
            const auto p = proposer.propose(handCard(), nullptr, rng);
            QVERIFY(p);
            made.push_back(*p);
        }
        QCOMPARE(made[0].templateId, std::string("hand.a"));
        QCOMPARE(made[0].params, point({0, 0}));
        proposer.finished(result(1, 0, "hand.a", point({0, 0}), 1.0));
        if (otherBest > 0)
            proposer.finished(result(2, 0, "hand.b", point({1}), otherBest));
        const NodeRecord seedNode = result(1, 0, "hand.a", point({0, 0}), 1.0);
        const auto second = proposer.propose(handCard(), fromRoot ? nullptr : &seedNode, rng);
        QVERIFY(second);
        if (!expectStart) {
            QVERIFY2(second->rationale.find("another expert start") == std::string::npos, second->rationale.c_str());
            return;
        }
        QCOMPARE(second->templateId, std::string("hand.a"));
        QCOMPARE(second->params, point({4, 2}));
        QVERIFY2(second->rationale.find("another expert start for hand.a: the far corner") != std::string::npos, second->rationale.c_str());
        proposer.finished(result(3, fromRoot ? 0 : 1, "hand.a", point({4, 2}), 0.9));
        const auto third = proposer.propose(handCard(), fromRoot ? nullptr : &seedNode, rng); // the seed is made: moves now
        QVERIFY(third);
        QVERIFY2(third->rationale.find("move ") != std::string::npos, third->rationale.c_str());
        QVERIFY(third->params != point({4, 2}) && third->params != point({0, 0}));
    }

    // A template switches only when its best is clearly behind another's (under half of it) once it has
    // two results; otherwise a node's children stay in its template.
    void templateSwitchRule_data()
    {
        QTest::addColumn<QStringList>("a"); // results of hand.a, "p0=speedup" (0: failed)
        QTest::addColumn<QStringList>("b");
        QTest::addColumn<QString>("expected"); // the template of the proposal from a's last node
        QTest::newRow("clearly behind") << QStringList{QStringLiteral("2=0.2"), QStringLiteral("3=0.3")} << QStringList{QStringLiteral("2=1.0")}
                                        << QStringLiteral("hand.b");
        QTest::newRow("close behind") << QStringList{QStringLiteral("2=0.6"), QStringLiteral("3=0.7")} << QStringList{QStringLiteral("2=1.0")}
                                      << QStringLiteral("hand.a");
        QTest::newRow("behind on its start alone") << QStringList{QStringLiteral("2=0.2")} << QStringList{QStringLiteral("2=1.0")}
                                                   << QStringLiteral("hand.a");
        QTest::newRow("failed twice") << QStringList{QStringLiteral("2=0"), QStringLiteral("3=0")} << QStringList{QStringLiteral("2=1.0")}
                                      << QStringLiteral("hand.b");
        QTest::newRow("the other failed") << QStringList{QStringLiteral("2=0.2"), QStringLiteral("3=0.3")} << QStringList{QStringLiteral("2=0")}
                                          << QStringLiteral("hand.a");
        QTest::newRow("ahead") << QStringList{QStringLiteral("2=2.0"), QStringLiteral("3=2.5")} << QStringList{QStringLiteral("2=1.0")}
                               << QStringLiteral("hand.a");
    }

    void templateSwitchRule()
    {
        QFETCH(QStringList, a);
        QFETCH(QStringList, b);
        QFETCH(QString, expected);
        TemplateLibrary lib;
        lib.add(handTemplate("hand.a", {6}));
        lib.add(handTemplate("hand.b", {6}));
        TemplateProposer proposer("cpu", lib);
        int64_t id = 0, parent = 0;
        NodeRecord last;
        for (const auto &spec : a) { // a chain under the root: each a child of the one before
            const auto [p, s] = measured(spec);
            last = result(++id, parent, "hand.a", p, s);
            proposer.known(last);
            parent = id;
        }
        for (const auto &spec : b) {
            const auto [p, s] = measured(spec);
            proposer.known(result(++id, 0, "hand.b", p, s));
        }
        std::mt19937_64 rng(5);
        const auto next = proposer.propose(handCard(), &last, rng);
        QVERIFY(next);
        QCOMPARE(QString::fromStdString(next->templateId), expected);
        QCOMPARE(next->rationale.rfind("switch template", 0) == 0, expected != QLatin1String("hand.a"));
    }

    // One move from an origin, ranked by what was measured: "p0,p1=speedup" points, the origin (1.0x),
    // and the move expected ("p1=2") with its rank.
    void movesFollowTheMeasurements_data()
    {
        moveColumns();
        QTest::newRow("nothing measured: towards more values") << QStringList{} << QStringLiteral("1,1") << QStringLiteral("p0=2")
                                                               << QStringLiteral("unexplored");
        QTest::newRow("came down from p0 = 3: go on") << QStringList{QStringLiteral("3,1=0.5")} << QStringLiteral("2,1") << QStringLiteral("p0=1")
                                                      << QStringLiteral("improving");
        QTest::newRow("a local best on p0: try p1") << QStringList{QStringLiteral("1,0=0.5"), QStringLiteral("3,0=0.5")} << QStringLiteral("2,0")
                                                    << QStringLiteral("p1=1") << QStringLiteral("unexplored");
        // On the line p1 = 0, p0 = 1 and p0 = 3 did worse than p0 = 2: from (2, 2) they are values tried
        // elsewhere, and the new value of p1 comes first.
        QTest::newRow("values tried elsewhere come after new ones")
            << QStringList{QStringLiteral("1,0=0.5"), QStringLiteral("2,0=0.8"), QStringLiteral("3,0=0.5")} << QStringLiteral("2,2")
            << QStringLiteral("p1=1") << QStringLiteral("unexplored");
        // p0 = 1 did better than p0 = 2 on the line p1 = 0 (both below the origin, whose line is better):
        // not tried elsewhere; p0 = 3 did worse there, and is.
        QTest::newRow("worse than the origin is not worse than its value")
            << QStringList{QStringLiteral("1,0=0.5"), QStringLiteral("2,0=0.4"), QStringLiteral("3,0=0.3")} << QStringLiteral("2,2")
            << QStringLiteral("p0=1") << QStringLiteral("unexplored");
        QTest::newRow("every neighbour worse: the two least bad together")
            << QStringList{QStringLiteral("0,1=0.5"), QStringLiteral("2,1=0.7"), QStringLiteral("1,0=0.6"), QStringLiteral("1,2=0.4")}
            << QStringLiteral("1,1") << QStringLiteral("p0 and p1=[2,0]") << QStringLiteral("two changes together, each worse alone");
        QTest::newRow("neighbours and their pair worse: beyond the worse one")
            << QStringList{QStringLiteral("0,1=0.5"), QStringLiteral("2,1=0.5"), QStringLiteral("1,0=0.5"), QStringLiteral("1,2=0.5"),
                           QStringLiteral("0,0=0.5")}
            << QStringLiteral("1,1") << QStringLiteral("p0=3") << QStringLiteral("beyond a worse point");
        QTest::newRow("failures count as worse") << QStringList{QStringLiteral("0,1=0"), QStringLiteral("2,1=0"), QStringLiteral("1,0=0"),
                                                                QStringLiteral("1,2=0")}
                                                 << QStringLiteral("1,1") << QStringLiteral("p0=3") << QStringLiteral("beyond a worse point");
    }

    void movesFollowTheMeasurements() { expectMove(handTemplate("hand.m", {5, 3})); }

    // p0 + p1 <= 4, as a block size and rows per block share one budget: a line that ends at the rule
    // goes on with the nearest change of the other parameter.
    void movesRepairACoupledRule_data()
    {
        moveColumns();
        QTest::newRow("the line rises past the rule: the other parameter steps back")
            << QStringList{QStringLiteral("1,2=0.5")} << QStringLiteral("2,2") << QStringLiteral("p0 and p1=[3,1]") << QStringLiteral("improving");
        QTest::newRow("the nearest repair was seen: the next one")
            << QStringList{QStringLiteral("1,2=0.5"), QStringLiteral("3,1=0.6")} << QStringLiteral("2,2") << QStringLiteral("p0 and p1=[3,0]")
            << QStringLiteral("improving");
        QTest::newRow("a plain move of the same rank comes first")
            << QStringList{QStringLiteral("2,1=0.5")} << QStringLiteral("2,2") << QStringLiteral("p0=1") << QStringLiteral("unexplored");
    }

    void movesRepairACoupledRule()
    {
        auto t = handTemplate("hand.coupled", {5, 3});
        t.valid = [](const nlohmann::json &p, const OperatorCard &) { return p["p0"].get<int>() + p["p1"].get<int>() <= 4; };
        expectMove(t);
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
