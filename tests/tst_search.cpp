// The search end to end with real workers: the tree grows, every node is stored and finished with a
// decision, and a candidate that kills its worker is marked on its node while the search goes on.
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "ops/workload.h"
#include "pool/worker_pool.h"
#include "proposers/list_proposer.h"
#include "proposers/template_proposer.h"
#include "search/mcts.h"
#include "search/resume.h"
#include "search/search_engine.h"
#include "store/session_store.h"
#include "test_support.h"
#include "util/error.h"

using namespace kforge;

namespace {

struct Recorder : SearchObserver {
    int added = 0, finished = 0, progressed = 0;
    void nodeAdded(const NodeRecord &) override { ++added; }
    void nodeFinished(const NodeRecord &) override { ++finished; }
    void progress(const SearchProgress &) override { ++progressed; }
};

} // namespace

class TestSearch : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;

private slots:
    void templateSearchGrowsATree()
    {
        const auto file = m_dir.filePath(QStringLiteral("search.kforge")).toStdString();
        const auto card = demoWorkload(64, 512).operators.front();
        SessionStore store(file);
        const auto sid = store.createSession({0, "t", "demo-attention", "cpu", "templates", "running", {}, 0});
        const auto op = store.addOperator(sid, card);
        WorkerPool pool({test::workerCommand(), 2});
        pool.start();
        TemplateProposer proposer("cpu");
        SearchOptions so;
        so.maxNodes = 8;
        so.eval.benchSamples = 5;
        so.eval.warmup = 1;
        SearchEngine engine(store, pool, proposer, so);
        Recorder rec;
        const auto prog = engine.run(sid, op, card, &rec);

        QCOMPARE(prog.evaluated, 8);
        QCOMPARE(prog.running, 0);
        QCOMPARE(prog.stopReason, std::string("node budget spent"));
        QCOMPARE(rec.added, 9); // the baseline root and 8 candidates
        QCOMPARE(rec.finished, 8);

        SessionStore reader(file, SessionStore::Mode::ReadOnly);
        const auto nodes = reader.nodes(sid);
        QCOMPARE(nodes.size(), size_t(9));
        QCOMPARE(nodes[0].status, std::string("baseline"));
        QVERIFY(!nodes[0].parentId);
        std::set<std::string> points;
        int deeper = 0;
        for (size_t i = 1; i < nodes.size(); ++i) {
            const auto &n = nodes[i];
            QVERIFY(n.parentId.has_value());
            QVERIFY2(n.status != "running", n.summary.c_str());
            QVERIFY(n.templateId.rfind("cpu.softmax.", 0) == 0);
            points.insert(n.templateId + n.params.dump());
            if (*n.parentId != nodes[0].id)
                ++deeper;
            const auto d = reader.nodeDetail(n.id);
            QVERIFY(d && !d->candidate.source.empty());
            QCOMPARE(d->decisions.size(), size_t(1));
            QCOMPARE(d->decisions[0].actor, std::string("guard"));
            QCOMPARE(d->decisions[0].decision, std::string(n.status == "accepted" ? "accept" : "reject"));
        }
        QCOMPARE(points.size(), size_t(8)); // no point proposed twice
        QVERIFY2(deeper > 0, "the search never expanded beyond the root");
        QCOMPARE(prog.bestSpeedup > 0, prog.failed < prog.evaluated);

        // On the CPU the search ranks by candidate time (search/search_value.h): every correct node's
        // reward is the log of one baseline time, a correct node's own (speedup x candidate median),
        // over its candidate's median, not of its own evaluation's ratio.
        std::map<int64_t, double> median;
        for (const auto &t : reader.candidateTimings(sid))
            median[t.nodeId] = t.candidate.median;
        // (A reward at its clamp says nothing of the time; the reference node may be one: a slow first kernel.)
        std::vector<double> impliedBaseline, ownBaseline;
        for (size_t i = 1; i < nodes.size(); ++i)
            if (isCorrectStatus(nodes[i].status)) {
                QVERIFY(median[nodes[i].id] > 0);
                ownBaseline.push_back(nodes[i].speedup * median[nodes[i].id]);
                if (nodes[i].reward > kSlowestCorrectReward && nodes[i].reward < 2.0)
                    impliedBaseline.push_back(std::exp(nodes[i].reward) * median[nodes[i].id]);
            }
        QVERIFY2(impliedBaseline.size() >= 2, "fewer than two correct nodes to compare");
        for (double b : impliedBaseline)
            QVERIFY2(std::abs(b / impliedBaseline.front() - 1) < 1e-9, "the rewards do not share one baseline time");
        QVERIFY(std::any_of(ownBaseline.begin(), ownBaseline.end(), [&](double b) { return std::abs(b / impliedBaseline.front() - 1) < 1e-9; }));
    }

    // A search stopped after 3 nodes and a node left in flight (as a killed search leaves it) go on in a
    // second run on the same session: the tree is rebuilt, the interrupted node is evaluated under its
    // own id, no point is proposed twice, the budget counts what was there, and nothing stays running.
    void resumeGoesOnWithNoNodeLostOrDuplicated()
    {
        const auto file = m_dir.filePath(QStringLiteral("resume.kforge")).toStdString();
        const auto card = demoWorkload(64, 512).operators.front();
        int64_t sid = 0, op = 0, leftInFlight = 0;
        SearchOptions so;
        so.eval.benchSamples = 5;
        so.eval.warmup = 1;
        {
            SessionStore store(file);
            sid = store.createSession({0, "t", "demo-attention", "cpu", "templates", "running", {}, 0});
            op = store.addOperator(sid, card);
            WorkerPool pool({test::workerCommand(), 1});
            pool.start();
            TemplateProposer proposer("cpu");
            so.maxNodes = 3;
            SearchEngine engine(store, pool, proposer, so);
            QCOMPARE(engine.run(sid, op, card).evaluated, 3);
            // What a search killed mid-evaluation leaves: one more child, stored and never finished.
            const auto nodes = store.nodes(sid);
            TemplateProposer other("cpu");
            for (const auto &n : nodes)
                other.known(n);
            std::mt19937_64 rng(99);
            auto p = other.propose(card, nullptr, rng);
            QVERIFY(p.has_value());
            NodeRecord n;
            n.sessionId = sid;
            n.operatorId = op;
            n.parentId = nodes.front().id;
            n.expansion = "improve";
            n.templateId = p->templateId;
            n.params = p->params;
            n.summary = "left in flight";
            leftInFlight = store.addNode(n, p->candidate);
            // And one that had finished but is marked interrupted (as by hand): evaluated again, its rows replaced.
            store.setNodeStatus(nodes[1].id, "interrupted");
        }
        QVERIFY(!QFile::exists(QString::fromStdString(file + "-wal")) || QFileInfo(QString::fromStdString(file + "-wal")).size() == 0);
        SessionStore store(file);
        WorkerPool pool({test::workerCommand(), 1});
        pool.start();
        TemplateProposer proposer("cpu");
        so.maxNodes = 7;
        SearchEngine engine(store, pool, proposer, so);
        const auto prog = engine.run(sid, op, card);
        QCOMPARE(prog.evaluated, 5); // the two unfinished ones and three new ones: 7 in all
        const auto nodes = store.nodes(sid);
        QCOMPARE(nodes.size(), size_t(8));
        std::set<std::string> points;
        int roots = 0;
        for (const auto &nd : nodes) {
            QVERIFY2(nd.status != "running" && nd.status != "interrupted", nd.summary.c_str());
            roots += !nd.parentId;
            if (nd.parentId)
                points.insert(nd.templateId + nd.params.dump());
        }
        QCOMPARE(roots, 1);
        QCOMPARE(points.size(), size_t(7));
        const auto leftover = std::find_if(nodes.begin(), nodes.end(), [&](const NodeRecord &x) { return x.id == leftInFlight; });
        QVERIFY(leftover != nodes.end()); // kept its id, and was evaluated (not running, checked above)
        QVERIFY(leftover->finishedAt.has_value());
    }

    // Diverse roots: with one child per node, the root would have a single child; with roots 3 its first
    // three children are the three softmax templates' seeds, each stored with the rule that made it.
    void diverseRootsTryEveryTemplateFirst_data()
    {
        QTest::addColumn<int>("roots");
        QTest::addColumn<int>("rootChildren");
        QTest::addColumn<int>("templates");
        QTest::newRow("off") << 0 << 1 << 1;
        QTest::newRow("three roots") << 3 << 3 << 3;
    }

    void diverseRootsTryEveryTemplateFirst()
    {
        QFETCH(int, roots);
        QFETCH(int, rootChildren);
        QFETCH(int, templates);
        const auto file = m_dir.filePath(QStringLiteral("roots-%1.kforge").arg(roots)).toStdString();
        const auto card = demoWorkload(16, 128).operators.front();
        SessionStore store(file);
        const auto sid = store.createSession({0, "t", "demo-attention", "cpu", "templates", "running", {}, 0});
        const auto op = store.addOperator(sid, card);
        WorkerPool pool({test::workerCommand(), 1});
        pool.start();
        TemplateProposer proposer("cpu");
        SearchOptions so;
        so.maxNodes = 3;
        so.eval.benchSamples = 3;
        so.eval.warmup = 1;
        so.mcts.widenK = 1;
        so.mcts.widenAlpha = 0; // one child per node
        so.roots = roots;
        SearchEngine engine(store, pool, proposer, so);
        QCOMPARE(engine.run(sid, op, card).evaluated, 3);
        const auto nodes = store.nodes(sid);
        std::set<std::string> rootTemplates;
        int children = 0;
        for (const auto &n : nodes)
            if (n.parentId == nodes.front().id) {
                ++children;
                rootTemplates.insert(n.templateId);
                QCOMPARE(n.selection.value("rule", ""), std::string(roots ? "diverse_root" : "widening"));
            }
        QCOMPARE(children, rootChildren);
        QCOMPARE(int(rootTemplates.size()), templates);
    }

    // Dead ends through the engine: two failing children of the root, below a working sibling, are
    // stored as pruned with the reason; the working one is not. A loaded machine can time the working
    // kernel far slower than ATen (0.73x, 0.376x, 0.347x and 0.311x in CI runs), so the margin is below
    // what a correct kernel's reward keeps over a failure's (kSlowestCorrectReward against -1): being
    // correct is enough, whatever the timing.
    void deadEndsAreStoredAsPruned()
    {
        const auto file = m_dir.filePath(QStringLiteral("pruned.kforge")).toStdString();
        const auto card = demoWorkload(256, 4096).operators.front();
        const auto &lib = TemplateLibrary::builtin();
        const auto *vector = lib.find("cpu.softmax.vector");
        QVERIFY(vector && vector->seed);
        Proposal fast = TemplateProposer("cpu").render(*vector, vector->seed(card), card);
        Proposal overflow{"overflow", nlohmann::json::object(), test::cpuKernel("naive_overflow.cpp"), "no max subtraction"};
        Proposal broken{"broken", nlohmann::json::object(), test::cpuKernel("compile_error.cpp"), "does not compile"};
        ListProposer proposer({fast, overflow, broken});
        SessionStore store(file);
        const auto sid = store.createSession({0, "t", "demo-attention", "cpu", "list", "running", {}, 0});
        const auto op = store.addOperator(sid, card);
        WorkerPool pool({test::workerCommand(), 1});
        pool.start();
        SearchOptions so;
        so.maxNodes = 3;
        so.eval.benchSamples = 5;
        so.eval.warmup = 1;
        so.mcts.pruneMinVisits = 1;
        so.mcts.pruneMargin = 0.05;
        so.reverifyBest = false;
        SearchEngine engine(store, pool, proposer, so);
        QCOMPARE(engine.run(sid, op, card).evaluated, 3);
        std::map<std::string, NodeRecord> byTemplate;
        for (const auto &n : store.nodes(sid))
            byTemplate[n.templateId] = n;
        QVERIFY2(isCorrectStatus(byTemplate["cpu.softmax.vector"].status), byTemplate["cpu.softmax.vector"].summary.c_str());
        // Above a failure's reward by more than the margin, at any speedup.
        QVERIFY2(byTemplate["cpu.softmax.vector"].reward > rewardFor(false, 0) + so.mcts.pruneMargin, byTemplate["cpu.softmax.vector"].summary.c_str());
        QVERIFY(byTemplate["cpu.softmax.vector"].pruned.empty());
        for (const char *dead : {"overflow", "broken"}) {
            const auto &n = byTemplate[dead];
            QVERIFY2(!isCorrectStatus(n.status), n.summary.c_str());
            QVERIFY2(n.pruned.rfind("dead end: ", 0) == 0, n.pruned.c_str());
            QVERIFY2(n.pruned.find("below sibling #" + std::to_string(byTemplate["cpu.softmax.vector"].id)) != std::string::npos, n.pruned.c_str());
        }
    }

    // What a resume reads off a session (search/resume.h): a campaign's steps from its stored plan, in
    // the plan's order, each with the candidates it has and those left in flight; a single search as one
    // step of its node budget; plans that cannot be followed are refused by name.
    void resumeReadsEveryStepOfACampaign_data()
    {
        QTest::addColumn<QString>("plan");    // the session's campaign_plan as JSON, "none" for a single search
        QTest::addColumn<bool>("flagged");    // options.campaign
        QTest::addColumn<QString>("expected"); // "key:nodes:made:unfinished:done ..." or "error: TEXT"
        const auto softmax = makeSoftmaxCard(32, 256).key, relu = makeCard("relu", {{"rows", 32}, {"cols", 256}}).key;
        const auto plan = [&](int a, int b) {
            return QString::fromStdString(nlohmann::json::array({{{"key", relu}, {"nodes", a}}, {{"key", softmax}, {"nodes", b}}}).dump());
        };
        // The session holds softmax with 3 candidates (one running, one interrupted) and relu with 2 finished.
        QTest::newRow("a campaign, the first operator done") << plan(2, 4) << true
                                                             << QString::fromStdString(relu + ":2:2:0:1 " + softmax + ":4:3:2:0");
        QTest::newRow("a campaign whose plan grew") << plan(3, 3) << true << QString::fromStdString(relu + ":3:2:0:0 " + softmax + ":3:3:2:0");
        QTest::newRow("a single search") << QStringLiteral("none") << false << QString::fromStdString(softmax + ":6:3:2:0");
        QTest::newRow("a plan naming an operator not held")
            << QStringLiteral(R"([{"key":"nope","nodes":2}])") << true << QStringLiteral("error: plans operator 'nope', which the session does not hold");
        QTest::newRow("a plan that is not a list") << QStringLiteral(R"({"key":"x"})") << true << QStringLiteral("error: is not a list of operators and nodes");
        QTest::newRow("a step without nodes") << QString::fromStdString(R"([{"key":")" + relu + R"("}])") << true
                                              << QStringLiteral("error: is not a list of operators and nodes");
        QTest::newRow("an empty plan") << QStringLiteral("[]") << true << QStringLiteral("error: plans no operator");
        QTest::newRow("a campaign without its plan") << QStringLiteral("none") << true << QStringLiteral("error: was written without its plan");
    }

    void resumeReadsEveryStepOfACampaign()
    {
        QFETCH(QString, plan);
        QFETCH(bool, flagged);
        QFETCH(QString, expected);
        const auto file = m_dir.filePath(QStringLiteral("steps-%1.kforge").arg(QString::fromUtf8(QTest::currentDataTag()).replace(QLatin1Char(' '), QLatin1Char('-')))).toStdString();
        std::filesystem::remove(file);
        SearchOptions so;
        so.maxNodes = 6;
        auto options = resumeOptions(so, 1, "templates", "", 0);
        if (plan != QStringLiteral("none"))
            options["campaign_plan"] = nlohmann::json::parse(plan.toStdString());
        if (flagged)
            options["campaign"] = true;
        SessionStore store(file);
        const auto sid = store.createSession({0, "t", "demo", "cpu", "templates", "running", options, 0});
        const auto softmax = store.addOperator(sid, makeSoftmaxCard(32, 256));
        const auto relu = store.addOperator(sid, makeCard("relu", {{"rows", 32}, {"cols", 256}}));
        Verdict finished;
        finished.status = VerdictStatus::NotFaster;
        const auto grow = [&](int64_t op, const std::vector<std::string> &statuses) {
            NodeRecord root;
            root.sessionId = sid;
            root.operatorId = op;
            root.status = "baseline";
            const auto rootId = store.addNode(root, Candidate{"reference", "", nlohmann::json::object()});
            for (size_t i = 0; i < statuses.size(); ++i) {
                NodeRecord n = root;
                n.parentId = rootId;
                n.status = "running";
                n.params = {{"i", i}};
                const auto id = store.addNode(n, Candidate{"cpu", "// " + std::to_string(i), nlohmann::json::object()});
                if (statuses[i] == "finished")
                    store.finishNode(id, finished, 0);
                else if (statuses[i] != "running")
                    store.setNodeStatus(id, statuses[i]);
            }
        };
        grow(softmax, {"finished", "running", "interrupted"});
        grow(relu, {"finished", "finished"});
        if (expected.startsWith(QStringLiteral("error: "))) {
            try {
                lastSearch(store);
                QFAIL("a plan that cannot be followed was read");
            } catch (const Error &e) {
                QVERIFY2(QString::fromUtf8(e.what()).contains(expected.mid(7)), e.what());
            }
            return;
        }
        const auto was = lastSearch(store);
        QCOMPARE(was.campaign, flagged);
        QString got;
        for (const auto &st : was.steps)
            got += QStringLiteral("%1%2:%3:%4:%5:%6").arg(got.isEmpty() ? QString() : QStringLiteral(" "), QString::fromStdString(st.op.card.key)).arg(st.nodes).arg(st.made)
                       .arg(st.unfinished).arg(int(st.done()));
        QCOMPARE(got, expected);
        QCOMPARE(was.op.id, was.steps.front().op.id);
    }

    void crashingCandidateIsMarkedOnItsNode()
    {
        const auto file = m_dir.filePath(QStringLiteral("crash.kforge")).toStdString();
        const auto card = makeSoftmaxCard(32, 256);
        SessionStore store(file);
        const auto sid = store.createSession({0, "t", "demo", "cpu", "list", "running", {}, 0});
        const auto op = store.addOperator(sid, card);
        WorkerPool pool({test::workerCommand(), 1});
        pool.start();
        std::vector<Proposal> list;
        for (const char *k : {"crash.cpp", "good_softmax.cpp"}) {
            Proposal p;
            p.templateId = k;
            p.candidate = test::cpuKernel(k);
            list.push_back(p);
        }
        ListProposer proposer(list);
        SearchOptions so;
        so.maxNodes = 5;
        so.eval.benchSamples = 3;
        SearchEngine engine(store, pool, proposer, so);
        const auto prog = engine.run(sid, op, card);
        QCOMPARE(prog.evaluated, 2);
        QCOMPARE(prog.stopReason, std::string("search space exhausted"));
        const auto nodes = store.nodes(sid);
        QCOMPARE(nodes.size(), size_t(3));
        QCOMPARE(nodes[1].status, std::string("crashed"));
        QVERIFY(nodes[1].reasons.front().message.find("SIGSEGV (11)") != std::string::npos);
        QVERIFY(nodes[2].status == "accepted" || nodes[2].status == "not_faster");
        // The crash happened in the candidate's sandbox: the worker itself lived on.
        QCOMPARE(pool.restarts(), 0);
    }
};

QTEST_GUILESS_MAIN(TestSearch)
#include "tst_search.moc"
