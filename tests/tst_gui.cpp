// The GUI over real session files: a stored session is drawn node for node and its nodes inspect
// correctly; a file that is not a session is refused without being changed; a live search through
// the real worker grows the tree on screen and can be stopped.
#include <Qsci/qsciscintilla.h>
#include <QAbstractItemModelTester>
#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QSpinBox>
#include <QStatusBar>
#include <QTableView>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QLineEdit>
#include <QProcess>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QtTest>
#include <atomic>
#include <sqlite3.h>
#include <thread>

#include "ops/operator_card.h"
#include "store/session_store.h"
#include "stall_meter.h"
#include "test_support.h"
#include "ui/compare_model.h"
#include "ui/compare_rows.h"
#include "ui/compare_view.h"
#include "ui/diff_view.h"
#include "ui/filter_bar.h"
#include "ui/main_window.h"
#include "ui/node_filter.h"
#include "ui/node_inspector.h"
#include "ui/node_item.h"
#include "ui/pack_export.h"
#include "ui/search_controller.h"
#include "ui/search_settings.h"
#include "ui/session_context.h"
#include "ui/session_watcher.h"
#include "ui/status_style.h"
#include "ui/timing_plot.h"
#include "ui/timing_plot_geometry.h"
#include "ui/tree_view.h"
#include "ui/verdict_pane.h"

using namespace kforge;
using namespace kforge::ui;

namespace {

struct StoredSession {
    QString path;
    std::map<std::string, int64_t> ids; // by role: "root", "accepted", ...
    size_t nodeCount = 0;
};

Verdict correctVerdict(VerdictStatus status, double speedup)
{
    Verdict v;
    v.status = status;
    v.compile = {true, false, 350.0, "g++ -O3: ok", "x86_64-g++-O3"};
    v.trials = {{"scale 1", "256x1024", true, 1e-8, 2e-6, "", "", 0.12, 0.25, 1.0},
                {"scale 8", "256x1024", true, 3e-8, 4e-6, "", "", 0.31, 0.5, 1.0},
                {"held-out rows=7", "7x1027", true, 1e-8, 1e-6, "", "", 0.05, 0.07, 1.0}};
    v.notes = {"verified 3 input sets instead of 5: the card's inputs are large"};
    v.baseline.samplesUs = {20, 21, 22, 20.5, 21.5};
    for (double b : v.baseline.samplesUs)
        v.candidate.samplesUs.push_back(b / speedup);
    v.speedup = speedup;
    v.noise = 0.04;
    v.rooflineUs = 8.4;
    v.worker = "kforge-worker@test";
    if (status == VerdictStatus::NotFaster)
        v.reasons = {{reason::NotFaster, "does not clear the noise band"}};
    return v;
}

// A session with a node of each kind, written through the core store exactly as a search would.
StoredSession writeSession(const QString &path)
{
    StoredSession out{path, {}, 0};
    SessionStore s(path.toStdString());
    const auto sid = s.createSession({0, "gui test", "demo-attention", "cpu", "templates", "finished", {}, 0});
    const auto op = s.addOperator(sid, makeSoftmaxCard(256, 1024));
    auto add = [&](const char *role, std::optional<int64_t> parent, const char *status, const char *source) {
        NodeRecord n;
        n.sessionId = sid;
        n.operatorId = op;
        n.parentId = parent;
        n.status = status;
        n.expansion = parent ? "improve" : "root";
        n.templateId = parent ? "cpu.softmax.test" : "aten";
        n.params = {{"lanes", 8}};
        out.ids[role] = s.addNode(n, Candidate{parent ? "cpu" : "reference", source, nlohmann::json::object()});
        ++out.nodeCount;
        return out.ids[role];
    };
    const auto root = add("root", std::nullopt, "baseline", "aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor");
    const auto a = add("not_faster", root, "running", "// not faster kernel\nextern \"C\" int kforge_entry();");
    s.finishNode(a, correctVerdict(VerdictStatus::NotFaster, 0.97), 0);
    const auto b = add("accepted", a, "running", "// accepted kernel\nextern \"C\" int kforge_entry();");
    s.finishNode(b, correctVerdict(VerdictStatus::Accepted, 1.8), 0.58);
    const auto better = add("best", b, "running", "// best kernel\nextern \"C\" int kforge_entry();");
    s.finishNode(better, correctVerdict(VerdictStatus::Accepted, 2.4), 0.87);
    s.addProfile(better, {{"tool", "ncu"}, {"kernel", "kf_rows"}, {"memory_throughput_pct", 93.4}, {"achieved_occupancy_pct", 61.0},
                          {"top_stalls", {{{"reason", "long_scoreboard"}, {"value", 12.5}}}}});
    const auto c = add("compile_error", root, "running", "// broken kernel\nint kforge_entry( {");
    {
        Verdict v = failureVerdict(VerdictStatus::CompileError, reason::CompileError, "expected ')' before '{'");
        v.compile = {false, false, 120.0, "candidate.cpp:2:19: error: expected ')' before '{' token", "x86_64-g++-O3"};
        s.finishNode(c, v, -1);
    }
    {
        Verdict bad = correctVerdict(VerdictStatus::Incorrect, 0);
        bad.trials[1].passed = false;
        bad.trials[1].failure = reason::Mismatch;
        bad.trials[1].detail = "max rel error 0.3 at row 17";
        bad.reasons = {{reason::Mismatch, "scale 8: max rel error 0.3"}};
        const auto d = add("incorrect", a, "running", "// wrong kernel\nextern \"C\" int kforge_entry();");
        s.finishNode(d, bad, -1);
    }
    const auto e = add("crashed", c, "running", "// crashing kernel");
    s.finishNode(e, failureVerdict(VerdictStatus::Crashed, reason::Crashed, "worker died: signal 11"), -1);
    add("running", b, "running", "// still in flight");
    return out;
}

QPoint viewPointOf(TreeView *view, NodeItem *item)
{
    return view->mapFromScene(item->scenePos());
}

// A node as a search would add it, for sessions the tests grow by hand.
int64_t addFinishedNode(SessionStore &s, int64_t session, int64_t op, int64_t parent, double speedup, const std::string &source)
{
    NodeRecord n;
    n.sessionId = session;
    n.operatorId = op;
    n.parentId = parent;
    n.expansion = "improve";
    n.templateId = "cpu.softmax.test";
    const auto id = s.addNode(n, Candidate{"cpu", source, nlohmann::json::object()});
    s.finishNode(id, correctVerdict(VerdictStatus::Accepted, speedup), std::log(speedup));
    return id;
}

// The worker for live searches: this build's, else $KFORGE_WORKER (a GUI-only build may borrow one).
QString liveWorker()
{
    const auto built = test::workerCommand();
    return built.empty() ? qEnvironmentVariable("KFORGE_WORKER") : QString::fromStdString(built);
}

// The CLI that exports: $KFORGE_CLI (one built with the CPU compiler), else this build's.
QString exportCli()
{
    const QString env = qEnvironmentVariable("KFORGE_CLI");
#ifdef KFORGE_CLI_PATH
    return env.isEmpty() ? QStringLiteral(KFORGE_CLI_PATH) : env;
#else
    return env;
#endif
}

std::vector<NodeRecord> nodesIn(const QString &path)
{
    SessionStore store(path.toStdString(), SessionStore::Mode::ReadOnly);
    const auto sessions = store.sessions();
    return sessions.empty() ? std::vector<NodeRecord>{} : store.nodes(sessions.back().id);
}

std::vector<DecisionRecord> userDecisions(const QString &path, int64_t node)
{
    SessionStore store(path.toStdString(), SessionStore::Mode::ReadOnly);
    std::vector<DecisionRecord> out;
    const auto detail = store.nodeDetail(node);
    for (const auto &d : detail->decisions)
        if (d.actor != "guard")
            out.push_back(d);
    return out;
}

// A node for the pure filter and comparison tables.
NodeRecord record(int64_t id, std::optional<int64_t> parent, const char *status, const char *templateId = "t.a",
                  const char *expansion = "improve")
{
    NodeRecord n;
    n.id = id;
    n.parentId = parent;
    n.status = status;
    n.templateId = templateId;
    n.expansion = parent ? expansion : "root";
    return n;
}

const char *stateName(FilterState s)
{
    return s == FilterState::Shown ? "shown" : s == FilterState::Dimmed ? "dimmed" : "hidden";
}

QStringList printStates(const std::vector<NodeRecord> &nodes, const std::unordered_map<int64_t, FilterState> &states)
{
    QStringList out;
    for (const auto &n : nodes)
        out << QStringLiteral("%1:%2").arg(n.id).arg(QLatin1String(stateName(states.at(n.id))));
    return out;
}

const char *kPtxasOneKernel = "ptxas info    : Compiling entry function 'kf_rows' for 'sm_90'\n"
                              "ptxas info    : Function properties for kf_rows\n"
                              "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                              "ptxas info    : Used 40 registers, used 1 barriers, 1024 bytes smem, 380 bytes cmem[0]\n";
const char *kPtxasTwoKernels = "ptxas info    : Compiling entry function 'kf_stats' for 'sm_90'\n"
                               "ptxas info    : Function properties for kf_stats\n"
                               "ptxas         .     24 bytes stack frame, 16 bytes spill stores, 8 bytes spill loads\n"
                               "ptxas info    : Used 255 registers, used 1 barriers, 380 bytes cmem[0]\n"
                               "ptxas info    : Compiling entry function 'kf_apply' for 'sm_90'\n"
                               "ptxas info    : Function properties for kf_apply\n"
                               "ptxas         .     0 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
                               "ptxas info    : Used 64 registers, 8192 bytes smem, 380 bytes cmem[0]\n";

} // namespace

class TestGui : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    StoredSession m_session;

    QString path(const char *name) const { return m_dir.filePath(QString::fromLatin1(name)); }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QStandardPaths::setTestModeEnabled(true); // saved layouts and recent files stay out of the user's settings
        m_session = writeSession(path("stored.kforge"));
    }

    void drawsEveryStoredNode()
    {
        MainWindow w;
        w.resize(1400, 850);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QCOMPARE(w.openSession(m_session.path), QString());

        QCOMPARE(w.treeView()->nodeItemCount(), int(m_session.nodeCount));
        for (const auto &[role, id] : m_session.ids) {
            auto *item = w.treeView()->nodeItem(id);
            QVERIFY2(item, role.c_str());
            QCOMPARE(item->data(NodeItem::NodeIdRole).toLongLong(), id);
            QCOMPARE(item->status(), role == "root" ? std::string("baseline") : role == "best" ? std::string("accepted") : role);
        }
        const QList<qint64> bestPath{m_session.ids["root"], m_session.ids["not_faster"], m_session.ids["accepted"], m_session.ids["best"]};
        QCOMPARE(w.treeView()->bestPathDrawn(), bestPath);
        QVERIFY(w.treeView()->nodeItem(m_session.ids["best"])->isBest());
        // Opening selects the best node so the inspector has something to say.
        QCOMPARE(w.context()->selectedNode(), m_session.ids["best"]);
        QVERIFY(w.inspector()->code().contains(QStringLiteral("best kernel")));
        // Its profiler report is shown; a node never profiled says how to profile it.
        QVERIFY2(w.inspector()->profileText().contains(QStringLiteral("93.4% of peak")), qPrintable(w.inspector()->profileText()));
        QVERIFY(w.inspector()->profileText().contains(QStringLiteral("long_scoreboard")));
        w.context()->select(m_session.ids["accepted"]);
        QVERIFY(w.inspector()->profileText().contains(QStringLiteral("kforge-cli profile")));
    }

    void clickShowsNode_data()
    {
        QTest::addColumn<QString>("role");
        QTest::addColumn<QString>("code");
        QTest::addColumn<int>("trials");
        QTest::addColumn<QString>("status");
        QTest::addColumn<QString>("compileLog");
        QTest::newRow("baseline") << QStringLiteral("root") << QStringLiteral("aten::_softmax") << 0 << QStringLiteral("baseline") << QString();
        QTest::newRow("accepted") << QStringLiteral("accepted") << QStringLiteral("// accepted kernel") << 3
                                  << QStringLiteral("1.80x") << QStringLiteral("g++ -O3: ok");
        QTest::newRow("not faster") << QStringLiteral("not_faster") << QStringLiteral("// not faster kernel") << 3
                                    << QStringLiteral("not faster") << QStringLiteral("g++ -O3: ok");
        QTest::newRow("incorrect") << QStringLiteral("incorrect") << QStringLiteral("// wrong kernel") << 3
                                   << QStringLiteral("incorrect") << QString();
        QTest::newRow("compile error") << QStringLiteral("compile_error") << QStringLiteral("int kforge_entry( {") << 0
                                       << QStringLiteral("compile error") << QStringLiteral("failed");
        QTest::newRow("crashed") << QStringLiteral("crashed") << QStringLiteral("// crashing kernel") << 0
                                 << QStringLiteral("crashed") << QString();
        QTest::newRow("running") << QStringLiteral("running") << QStringLiteral("// still in flight") << 0
                                 << QStringLiteral("running") << QString();
    }

    void clickShowsNode()
    {
        QFETCH(QString, role);
        QFETCH(QString, code);
        QFETCH(int, trials);
        QFETCH(QString, status);
        QFETCH(QString, compileLog);

        MainWindow w;
        w.resize(1400, 850);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QCOMPARE(w.openSession(m_session.path), QString());
        const auto id = m_session.ids.at(role.toStdString());
        auto *view = w.treeView();
        auto *item = view->nodeItem(id);
        QVERIFY(item);

        QSignalSpy selected(w.context(), &SessionContext::selectionChanged);
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, viewPointOf(view, item));
        QCOMPARE(selected.count(), 1);
        QCOMPARE(selected.first().first().toLongLong(), id);
        QVERIFY(item->isMarked());

        auto *inspector = w.inspector();
        QCOMPARE(inspector->shownNode(), id);
        QVERIFY2(inspector->code().contains(code), qPrintable(inspector->code()));
        QCOMPARE(inspector->verdictPane()->trialCount(), trials);
        QVERIFY2(inspector->verdictPane()->statusText().contains(status), qPrintable(inspector->verdictPane()->statusText()));
        QVERIFY2(inspector->compileLog().contains(compileLog), qPrintable(inspector->compileLog()));
    }

    void incorrectTrialShowsFailure()
    {
        MainWindow w;
        QCOMPARE(w.openSession(m_session.path), QString());
        w.context()->select(m_session.ids["incorrect"]);
        auto *table = w.inspector()->verdictPane()->trialTable();
        QCOMPARE(table->rowCount(), 3);
        QCOMPARE(table->item(1, 2)->text(), QStringLiteral("no"));
        QCOMPARE(table->item(1, 8)->text(), QStringLiteral("mismatch: max rel error 0.3 at row 17"));
        QCOMPARE(w.inspector()->verdictPane()->timingTable()->rowCount(), 2); // candidate and baseline
    }

    void verdictShowsTheRooflineFraction()
    {
        // The accepted node: baseline median 21 us, candidate 21 / 1.8 = 11.67 us, floor 8.4 us.
        MainWindow w;
        QCOMPARE(w.openSession(m_session.path), QString());
        w.context()->select(m_session.ids["accepted"]);
        const QString text = w.inspector()->verdictPane()->statusText();
        QVERIFY2(text.contains(QStringLiteral("roofline floor 8.4 µs: this kernel at 72%, the baseline at 40% of it")), qPrintable(text));
    }

    // The timing plot's axis: both sides' samples on whole ticks of a 1-2-5 step (3 to 5 ticks), the
    // floor inside when it lies close, a single value or all-equal samples centred on a padded span.
    void timingPlotAxis_data()
    {
        QTest::addColumn<QList<double>>("candidate");
        QTest::addColumn<QList<double>>("baseline");
        QTest::addColumn<double>("floorUs");
        QTest::addColumn<double>("lo");
        QTest::addColumn<double>("hi");
        QTest::addColumn<double>("step");
        QTest::newRow("two sides") << QList<double>{10, 11, 12} << QList<double>{20, 21, 22} << 0.0 << 10.0 << 25.0 << 5.0;
        QTest::newRow("near floor joins the span")
            << QList<double>{11.2, 11.7, 12.2} << QList<double>{20, 21, 22} << 8.4 << 5.0 << 25.0 << 5.0;
        QTest::newRow("far floor stays out") << QList<double>{100, 101, 102} << QList<double>{} << 10.0 << 100.0 << 102.0 << 0.5;
        QTest::newRow("floor far above") << QList<double>{1, 2} << QList<double>{1.5} << 50.0 << 1.0 << 2.0 << 0.5;
        QTest::newRow("one sample") << QList<double>{5} << QList<double>{} << 0.0 << 4.5 << 5.5 << 0.5;
        QTest::newRow("all equal") << QList<double>{3, 3, 3} << QList<double>{3, 3} << 0.0 << 2.6 << 3.4 << 0.2;
        QTest::newRow("no samples, a floor") << QList<double>{} << QList<double>{} << 8.4 << 7.5 << 9.5 << 0.5;
        QTest::newRow("nothing at all") << QList<double>{} << QList<double>{} << 0.0 << 0.45 << 0.55 << 0.05;
    }

    void timingPlotAxis()
    {
        QFETCH(QList<double>, candidate);
        QFETCH(QList<double>, baseline);
        QFETCH(double, floorUs);
        const std::vector<double> c(candidate.begin(), candidate.end()), b(baseline.begin(), baseline.end());
        const auto axis = timingAxis(c, b, floorUs, 40, 440);
        auto near = [](double a, double e) { return std::abs(a - e) < 1e-9 * std::max(1.0, std::abs(e)); };
        QFETCH(double, lo);
        QFETCH(double, hi);
        QFETCH(double, step);
        QVERIFY2(near(axis.loUs, lo) && near(axis.hiUs, hi) && near(axis.stepUs, step),
                 qPrintable(QStringLiteral("axis %1..%2 step %3").arg(axis.loUs).arg(axis.hiUs).arg(axis.stepUs)));
        const auto ticks = axis.ticks();
        QVERIFY2(ticks.size() >= 3 && ticks.size() <= 5, qPrintable(QString::number(ticks.size())));
        QVERIFY(near(ticks.front(), lo) && near(ticks.back(), hi));
        QCOMPARE(axis.x(lo), 40.0);
        QCOMPARE(axis.x(hi), 440.0);
        for (const auto *side : {&c, &b})
            for (double v : *side)
                QVERIFY(axis.x(v) >= 40 && axis.x(v) <= 440);
    }

    void timingPlotTickDecimals_data()
    {
        QTest::addColumn<double>("stepUs");
        QTest::addColumn<int>("decimals");
        QTest::newRow("5000") << 5000.0 << 0;
        QTest::newRow("1") << 1.0 << 0;
        QTest::newRow("0.5") << 0.5 << 1;
        QTest::newRow("0.25, a halved step") << 0.25 << 2;
        QTest::newRow("0.05 from repeated products") << 0.001 * 2 * 2.5 * 2 * 2 * 2.5 << 2;
    }

    void timingPlotTickDecimals()
    {
        QFETCH(double, stepUs);
        QTEST(tickDecimals(stepUs), "decimals");
    }

    // One row: a dot per sample at its time, jittered within the row; the box p25-p75 and the median.
    void timingPlotRow_data()
    {
        QTest::addColumn<QList<double>>("samples");
        QTest::addColumn<QList<double>>("dotX");
        QTest::addColumn<bool>("hasBox");
        QTest::addColumn<double>("boxX0");
        QTest::addColumn<double>("boxX1");
        QTest::addColumn<double>("medianX");
        // The axis below maps 0..100 us to 10..210 px: x = 10 + 2 * us.
        QTest::newRow("five samples") << QList<double>{50, 10, 30, 20, 40} << QList<double>{110, 30, 70, 50, 90} << true << 50.0
                                      << 90.0 << 70.0;
        QTest::newRow("skewed") << QList<double>{10, 10, 10, 90} << QList<double>{30, 30, 30, 190} << true << 30.0 << 70.0 << 30.0;
        QTest::newRow("one sample") << QList<double>{25} << QList<double>{60} << true << 60.0 << 60.0 << 60.0;
        QTest::newRow("all equal") << QList<double>{40, 40, 40} << QList<double>{90, 90, 90} << true << 90.0 << 90.0 << 90.0;
        QTest::newRow("empty") << QList<double>{} << QList<double>{} << false << 0.0 << 0.0 << 0.0;
    }

    void timingPlotRow()
    {
        QFETCH(QList<double>, samples);
        TimingAxis axis;
        axis.loUs = 0;
        axis.hiUs = 100;
        axis.stepUs = 25;
        axis.x0 = 10;
        axis.x1 = 210;
        const std::vector<double> s(samples.begin(), samples.end());
        const auto row = plotRow(s, axis, 100, 30);
        QList<double> xs;
        for (const auto &d : row.dots) {
            xs << d.x;
            QVERIFY2(d.y >= 100 + 30 * 0.2 && d.y <= 100 + 30 * 0.8, qPrintable(QString::number(d.y)));
        }
        QTEST(xs, "dotX");
        QTEST(row.hasBox, "hasBox");
        QTEST(row.boxX0, "boxX0");
        QTEST(row.boxX1, "boxX1");
        QTEST(row.medianX, "medianX");
        QCOMPARE(row.centerY, 115.0);
        // The same samples draw the same picture, and equal times do not hide behind one another.
        const auto again = plotRow(s, axis, 100, 30);
        for (size_t i = 0; i < row.dots.size(); ++i)
            QCOMPARE(again.dots[i].y, row.dots[i].y);
        if (row.dots.size() > 1)
            QVERIFY(row.dots[0].y != row.dots[1].y);
    }

    void timingPlotFloor_data()
    {
        QTest::addColumn<double>("floorUs");
        QTest::addColumn<bool>("shown");
        QTest::addColumn<double>("x");
        QTest::addColumn<int>("outside");
        // The axis below maps 10..20 us to 0..100 px.
        QTest::newRow("inside") << 15.0 << true << 50.0 << 0;
        QTest::newRow("on the left end") << 10.0 << true << 0.0 << 0;
        QTest::newRow("below: clamped left") << 5.0 << true << 0.0 << -1;
        QTest::newRow("above: clamped right") << 30.0 << true << 100.0 << 1;
        QTest::newRow("not measured") << 0.0 << false << 0.0 << 0;
    }

    void timingPlotFloor()
    {
        QFETCH(double, floorUs);
        TimingAxis axis;
        axis.loUs = 10;
        axis.hiUs = 20;
        axis.stepUs = 5;
        axis.x0 = 0;
        axis.x1 = 100;
        const auto f = floorLine(floorUs, axis);
        QTEST(f.shown, "shown");
        QTEST(f.x, "x");
        QTEST(f.outside, "outside");
    }

    // A real CPU search: the verdict pane of its best node draws that node's stored samples, in the
    // candidate's status colour; the baseline, with no verdict, shows no plot.
    void verdictPaneShowsTheTimingPlot()
    {
        const QString worker = liveWorker();
        if (worker.isEmpty())
            QSKIP("no kforge-worker: build it (KFORGE_BUILD_WORKER=ON) or set KFORGE_WORKER to one");
        MainWindow w;
        w.resize(1400, 850);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto request = SearchRequest::demo(3, 1);
        request.workerCommand = worker;
        request.sessionPath = path("plot.kforge");
        request.options.eval.benchSamples = 12;
        QSignalSpy finished(w.searchController(), &SearchController::finished);
        QVERIFY(w.startSearch(request));
        QVERIFY(finished.wait(90000));
        QCOMPARE(w.lastSearchError(), QString());

        SessionStore store(request.sessionPath.toStdString(), SessionStore::Mode::ReadOnly);
        const auto nodes = store.nodes(store.sessions().back().id);
        const auto timed = std::find_if(nodes.begin(), nodes.end(), [&](const NodeRecord &n) {
            const auto d = store.nodeDetail(n.id);
            return d && !d->verdict.candidate.samplesUs.empty();
        });
        QVERIFY2(timed != nodes.end(), "the search timed no node");
        const auto detail = *store.nodeDetail(timed->id);
        w.context()->select(timed->id);
        auto *pane = w.inspector()->verdictPane();
        auto *plot = pane->timingPlot();
        QVERIFY(!plot->isHidden());
        QCOMPARE(plot->candidateCount(), int(detail.verdict.candidate.samplesUs.size()));
        QCOMPARE(plot->baselineCount(), int(detail.verdict.baseline.samplesUs.size()));
        QCOMPARE(plot->candidateCount(), pane->timingTable()->item(0, 7)->text().toInt()); // the table's Samples column
        QCOMPARE(plot->floorUs(), detail.verdict.rooflineUs);

        plot->resize(600, plot->sizeHint().height());
        const QImage image = plot->grab().toImage();
        const QColor want = statusStyle(timed->status).fill;
        bool drawn = false;
        for (int y = 0; y < image.height() && !drawn; ++y)
            for (int x = 0; x < image.width() && !drawn; ++x) {
                const QColor c = image.pixelColor(x, y);
                drawn = std::abs(c.red() - want.red()) < 12 && std::abs(c.green() - want.green()) < 12 &&
                        std::abs(c.blue() - want.blue()) < 12;
            }
        QVERIFY2(drawn, "no pixel in the candidate's colour");

        w.context()->select(nodes.front().id); // the baseline: no verdict, no plot
        QVERIFY(plot->isHidden());
        QCOMPARE(plot->candidateCount(), 0);
    }

    void refusesFileThatIsNotASession_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("message");
        QTest::newRow("text file") << QStringLiteral("text") << QStringLiteral("not a kforge session");
        QTest::newRow("another application's database") << QStringLiteral("sqlite") << QStringLiteral("not a kforge session");
        QTest::newRow("newer kforge") << QStringLiteral("newer") << QStringLiteral("newer kforge");
        QTest::newRow("missing file") << QStringLiteral("missing") << QStringLiteral("no such file");
        QTest::newRow("empty file") << QStringLiteral("empty") << QStringLiteral("is empty: no kforge session has been written to it yet");
    }

    void refusesFileThatIsNotASession()
    {
        QFETCH(QString, kind);
        QFETCH(QString, message);
        const QString file = path("refused-") + kind + QStringLiteral(".kforge");
        if (kind == QStringLiteral("text")) {
            QFile f(file);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("name,speedup\nsoftmax,1.2\nnot a database at all, a notes file a user picked by mistake\n");
        } else if (kind == QStringLiteral("sqlite")) {
            sqlite3 *db = nullptr;
            QCOMPARE(sqlite3_open(file.toUtf8().constData(), &db), SQLITE_OK);
            QCOMPARE(sqlite3_exec(db, "CREATE TABLE photos(id INTEGER PRIMARY KEY, title TEXT); INSERT INTO photos VALUES(1, 'x');",
                                  nullptr, nullptr, nullptr),
                     SQLITE_OK);
            sqlite3_close(db);
        } else if (kind == QStringLiteral("empty")) {
            QFile f(file);
            QVERIFY(f.open(QIODevice::WriteOnly));
        } else if (kind == QStringLiteral("newer")) {
            writeSession(file);
            sqlite3 *db = nullptr;
            QCOMPARE(sqlite3_open(file.toUtf8().constData(), &db), SQLITE_OK);
            QCOMPARE(sqlite3_exec(db, "PRAGMA journal_mode=DELETE; PRAGMA user_version = 99;", nullptr, nullptr, nullptr), SQLITE_OK);
            sqlite3_close(db);
        }
        const QByteArray before = test::readAll(file);

        MainWindow w;
        QCOMPARE(w.openSession(m_session.path), QString());
        const auto shown = w.context()->snapshot();
        const auto selected = w.context()->selectedNode();

        const QString error = w.openSession(file);
        QVERIFY2(error.contains(message), qPrintable(error));
        QVERIFY2(!error.contains(QStringLiteral("kforge-cli upgrade")), qPrintable(error));
        // Nothing lost: the file is byte for byte what it was, the open session is still shown.
        QCOMPARE(test::readAll(file), before);
        QCOMPARE(QFile::exists(file), kind != QStringLiteral("missing"));
        QCOMPARE(w.context()->snapshot(), shown);
        QCOMPARE(w.context()->selectedNode(), selected);
        QCOMPARE(w.treeView()->nodeItemCount(), int(m_session.nodeCount));
    }

    // Accepting and rejecting by button and by keyboard write a decision with actor "user" and the
    // reason through the store, and the tree and the inspector show it.
    void acceptAndRejectWriteDecisions()
    {
        const QString file = path("decide.kforge");
        const auto stored = writeSession(file);
        MainWindow w;
        w.resize(1400, 850);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QCOMPARE(w.openSession(file), QString());
        auto *inspector = w.inspector();

        // By button: a reason typed, then Reject. The best node rejected by a person is best no more.
        const auto best = stored.ids.at("best");
        w.context()->select(best);
        QTest::keyClicks(inspector->reasonEdit(), QStringLiteral("reads past the row end on ragged shapes"));
        QSignalSpy recorded(w.context(), &SessionContext::decisionRecorded);
        inspector->rejectAction()->trigger();
        QCOMPARE(recorded.count(), 1);
        auto decisions = userDecisions(file, best);
        QCOMPARE(decisions.size(), size_t(1));
        QCOMPARE(decisions[0].decision, std::string("reject"));
        QCOMPARE(decisions[0].actor, std::string("user"));
        QCOMPARE(decisions[0].reason, std::string("reads past the row end on ragged shapes"));
        QCOMPARE(w.treeView()->nodeItem(best)->decision(), NodeItem::Decision::Rejected);
        QVERIFY2(inspector->decisionText().contains(QStringLiteral("Rejected by user")), qPrintable(inspector->decisionText()));
        QVERIFY(inspector->verdictPane()->statusText().contains(QStringLiteral("reject by user: reads past the row end")));
        QCOMPARE(w.context()->snapshot()->bestNodeId(), stored.ids.at("accepted"));
        QVERIFY(inspector->reasonEdit()->text().isEmpty());

        // By keyboard: A in the tree asks for the reason, Enter records it.
        const auto notFaster = stored.ids.at("not_faster");
        w.context()->select(notFaster);
        w.treeView()->setFocus();
        QTest::keyClick(w.treeView(), Qt::Key_A);
        QTRY_VERIFY(inspector->reasonEdit()->hasFocus());
        QVERIFY(userDecisions(file, notFaster).empty()); // nothing written without a reason
        QTest::keyClicks(inspector->reasonEdit(), QStringLiteral("within noise on this host, faster on the H200"));
        QTest::keyClick(inspector->reasonEdit(), Qt::Key_Return);
        decisions = userDecisions(file, notFaster);
        QCOMPARE(decisions.size(), size_t(1));
        QCOMPARE(decisions[0].decision, std::string("accept"));
        QCOMPARE(decisions[0].reason, std::string("within noise on this host, faster on the H200"));
        QCOMPARE(w.treeView()->nodeItem(notFaster)->decision(), NodeItem::Decision::Accepted);

        // A fresh window reads the same decisions back from the file.
        MainWindow again;
        QCOMPARE(again.openSession(file), QString());
        QCOMPARE(again.treeView()->nodeItem(best)->decision(), NodeItem::Decision::Rejected);
        QCOMPARE(again.treeView()->nodeItem(notFaster)->decision(), NodeItem::Decision::Accepted);
        // The baseline and nodes in flight cannot be decided.
        again.context()->select(stored.ids.at("root"));
        QVERIFY(!again.inspector()->acceptAction()->isEnabled());
        again.context()->select(stored.ids.at("running"));
        QVERIFY(!again.inspector()->rejectAction()->isEnabled());
    }

    void selectionIsTheSameInEveryPanel()
    {
        MainWindow w;
        w.resize(1400, 850);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QCOMPARE(w.openSession(m_session.path), QString());
        const auto incorrect = m_session.ids["incorrect"];
        QTest::mouseClick(w.treeView()->viewport(), Qt::LeftButton, {}, viewPointOf(w.treeView(), w.treeView()->nodeItem(incorrect)));
        QCOMPARE(w.context()->selectedNode(), incorrect);
        QCOMPARE(w.inspector()->shownNode(), incorrect);
        QVERIFY(w.treeView()->nodeItem(incorrect)->isMarked());
        // And the other way: selecting in the context (as another panel does) marks the tree.
        w.context()->select(m_session.ids["crashed"]);
        QVERIFY(w.treeView()->nodeItem(m_session.ids["crashed"])->isMarked());
        QVERIFY(!w.treeView()->nodeItem(incorrect)->isMarked());
        QCOMPARE(w.inspector()->shownNode(), m_session.ids["crashed"]);
        // The tables' models behave as models should while the selection moves.
        QAbstractItemModelTester trials(w.inspector()->verdictPane()->trialTable()->model());
        QAbstractItemModelTester timing(w.inspector()->verdictPane()->timingTable()->model());
        for (const auto &[role, id] : m_session.ids)
            w.context()->select(id);
    }

    void diffAgainstParentAndChosenNode()
    {
        MainWindow w;
        QCOMPARE(w.openSession(m_session.path), QString());
        auto *inspector = w.inspector();
        QSignalSpy ready(inspector, &NodeInspector::diffReady);
        w.context()->select(m_session.ids["best"]); // its parent is "accepted"
        QTRY_COMPARE(inspector->diffView()->rows().rows.size(), size_t(2));
        const auto &rows = inspector->diffView()->rows();
        QCOMPARE(rows.rows.size(), size_t(2));
        QCOMPARE(rows.modified, 1);
        QCOMPARE(rows.rows[0].left.text, std::string("// accepted kernel"));
        QCOMPARE(rows.rows[0].right.text, std::string("// best kernel"));
        QVERIFY(rows.rows[1].equal);
        QCOMPARE(inspector->diffView()->left()->text(), QStringLiteral("// accepted kernel\nextern \"C\" int kforge_entry();"));

        ready.clear();
        inspector->setDiffBase(m_session.ids["compile_error"]);
        QVERIFY(ready.count() || ready.wait(5000));
        QVERIFY(inspector->diffView()->left()->text().contains(QStringLiteral("broken kernel")));
        QCOMPARE(inspector->diffView()->rows().modified, 2);

        // A first-level node's parent is the baseline, which has no source to compare.
        inspector->setDiffBase(0);
        w.context()->select(m_session.ids["not_faster"]);
        QVERIFY(inspector->diffView()->summary().contains(QStringLiteral("baseline")));
    }

    void diffViewsScrollTogether()
    {
        std::string a, b;
        for (int i = 0; i < 400; ++i) {
            a += "line " + std::to_string(i) + " of a long kernel, wide enough to scroll sideways as well .................................\n";
            b += "line " + std::to_string(i) + (i % 50 ? " of a long kernel" : " CHANGED") + ", wide enough to scroll sideways as well .................................\n";
        }
        DiffView view;
        view.resize(600, 300);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setRows(diffRows(a, b), QStringLiteral("a"), QStringLiteral("b"));
        QCOMPARE(view.rows().modified, 8);
        QVERIFY(view.left()->verticalScrollBar()->maximum() > 100);
        view.left()->verticalScrollBar()->setValue(120);
        QCOMPARE(view.right()->verticalScrollBar()->value(), 120);
        view.right()->verticalScrollBar()->setValue(33);
        QCOMPARE(view.left()->verticalScrollBar()->value(), 33);
        view.right()->horizontalScrollBar()->setValue(40);
        QCOMPARE(view.left()->horizontalScrollBar()->value(), 40);
    }

    void compileLogLinksToTheCode()
    {
        const QString html = linkCompileLog(QStringLiteral("candidate.cu(476): error: identifier \"x\" is undefined\nok <tag>"));
        QVERIFY2(html.contains(QStringLiteral("<a href=\"line:476\">candidate.cu(476)</a>")), qPrintable(html));
        QVERIFY(html.contains(QStringLiteral("&lt;tag&gt;")));
        QVERIFY(linkCompileLog(QStringLiteral("candidate.cpp:12:5: error")).contains(QStringLiteral("href=\"line:12\"")));

        MainWindow w;
        QCOMPARE(w.openSession(m_session.path), QString());
        w.context()->select(m_session.ids["compile_error"]);
        QVERIFY(w.inspector()->compileLog().contains(QStringLiteral("candidate.cpp:2:19")));
        emit w.inspector()->compileLogView()->anchorClicked(QUrl(QStringLiteral("line:2")));
        int line = -1, index = -1;
        w.inspector()->codeView()->getCursorPosition(&line, &index);
        QCOMPARE(line, 1); // 0-based in the view
        QCOMPARE(w.inspector()->codeView()->selectedText(), QStringLiteral("int kforge_entry( {"));
    }

    // Switching from a profiled node to the baseline leaves nothing of the first in any tab.
    void nothingStaleAfterTheBaseline()
    {
        MainWindow w;
        QCOMPARE(w.openSession(m_session.path), QString());
        w.context()->select(m_session.ids["best"]);
        QVERIFY(w.inspector()->profileText().contains(QStringLiteral("93.4%")));
        w.context()->select(m_session.ids["root"]);
        QVERIFY2(!w.inspector()->profileText().contains(QStringLiteral("93.4%")), qPrintable(w.inspector()->profileText()));
        QVERIFY(w.inspector()->compileLog().isEmpty());
        QCOMPARE(w.inspector()->verdictPane()->trialCount(), 0);
        QVERIFY(!w.inspector()->launchPlanText().contains(QStringLiteral("kforge_entry")));
    }

    void verificationShowsErrorsAgainstFloat64AndNotes()
    {
        MainWindow w;
        QCOMPARE(w.openSession(m_session.path), QString());
        w.context()->select(m_session.ids["accepted"]);
        auto *table = w.inspector()->verdictPane()->trialTable();
        QCOMPARE(table->horizontalHeaderItem(5)->text(), QStringLiteral("Candidate err"));
        QCOMPARE(table->item(1, 5)->text(), QStringLiteral("0.31"));
        QCOMPARE(table->item(1, 6)->text(), QStringLiteral("0.5"));
        QCOMPARE(table->item(1, 7)->text(), QStringLiteral("1"));
        QVERIFY(w.inspector()->verdictPane()->reasonsText().contains(QStringLiteral("note: verified 3 input sets")));
        QVERIFY(w.inspector()->launchPlanText().contains(QStringLiteral("No launch plan")));
    }

    void launchPlanIsShown()
    {
        const QString file = path("cuda.kforge");
        {
            SessionStore s(file.toStdString());
            const auto sid = s.createSession({0, "cuda plan", "demo", "cuda", "templates", "finished", {}, 0});
            const auto op = s.addOperator(sid, makeSoftmaxCard(256, 1024));
            NodeRecord n;
            n.sessionId = sid;
            n.operatorId = op;
            n.templateId = "cuda.softmax.rows";
            const nlohmann::json plan = {{"kernels", {{{"name", "kf_rows"}, {"grid", {"ceil_div(rows, 4)", 1, 1}}, {"block", {128, 1, 1}},
                                                       {"shared_bytes", "0"}, {"args", {"in:x", "out:y", "sym:rows"}}}}},
                                         {"workspace", nlohmann::json::array()}};
            const auto id = s.addNode(n, Candidate{"cuda", "__global__ void kf_rows() {}", plan});
            s.finishNode(id, correctVerdict(VerdictStatus::Accepted, 1.5), 0.4);
        }
        MainWindow w;
        QCOMPARE(w.openSession(file), QString());
        w.context()->select(w.context()->snapshot()->nodes().front().id);
        const QString plan = w.inspector()->launchPlanText();
        QVERIFY2(plan.contains(QStringLiteral("kernel 1: kf_rows")), qPrintable(plan));
        QVERIFY(plan.contains(QStringLiteral("grid          (ceil_div(rows, 4), 1, 1)")));
        QVERIFY(plan.contains(QStringLiteral("arguments     in:x, out:y, sym:rows")));
    }

    // A search in another process writes the file the window shows: new nodes and new verdicts appear
    // without a click, the selection stays, and the event loop never stalls while they are read.
    void sessionWrittenByAnotherWriterAppears()
    {
        const QString file = path("growing.kforge");
        int64_t sid = 0, op = 0, root = 0;
        {
            SessionStore s(file.toStdString());
            sid = s.createSession({0, "growing", "demo", "cpu", "templates", "running", {{"nodes", 60}, {"workers", 2}}, nowSeconds()});
            op = s.addOperator(sid, makeSoftmaxCard(256, 1024));
            NodeRecord n;
            n.sessionId = sid;
            n.operatorId = op;
            n.status = "baseline";
            root = s.addNode(n, Candidate{"reference", "aten", nlohmann::json::object()});
        }
        MainWindow w;
        w.resize(1400, 850);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QCOMPARE(w.openSession(file), QString());
        w.watcher()->setPollInterval(100);
        QCOMPARE(w.treeView()->nodeItemCount(), 1);
        w.context()->select(root);

        test::StallMeter stalls; // the longest stall while the other writer works
        stalls.start();
        std::atomic<bool> done = false;
        std::thread writer([&] {
            SessionStore s(file.toStdString()); // a second connection, as another process has
            int64_t parent = root;
            for (int i = 0; i < 60; ++i) {
                parent = addFinishedNode(s, sid, op, i % 3 ? parent : root, 1.0 + i / 50.0, "// kernel " + std::to_string(i));
                std::this_thread::sleep_for(std::chrono::milliseconds(15));
            }
            s.setSessionStatus(sid, "finished");
            done = true;
        });
        QTRY_VERIFY_WITH_TIMEOUT(done.load(), 30000);
        writer.join();
        QTRY_COMPARE_WITH_TIMEOUT(w.treeView()->nodeItemCount(), 61, 10000);
        stalls.stop();
        const qint64 longest = stalls.longestMs();
        QVERIFY(w.watcher()->reloads() >= 2); // it grew in steps, not once at the end
        QCOMPARE(w.context()->selectedNode(), root);
        QTRY_VERIFY(w.sessionStatusText().startsWith(QStringLiteral("finished · 60 of 60 nodes · 2 workers")));
        QVERIFY2(longest < 50, qPrintable(QStringLiteral("the event loop stalled for %1 ms").arg(longest)));
        qInfo("reloads %d, longest stall %lld ms", w.watcher()->reloads(), longest);
    }

    // A 10,000-node session is read on a pool thread: while it is read the event loop never stalls for
    // 50 ms (read on the GUI thread it stalled for the whole read), nor while the window lays the tree
    // out, paints its overview and makes its items in slices.
    // A file opened meanwhile wins over one still being read.
    void openingALargeSessionKeepsTheWindowResponsive()
    {
        const QString large = path("open-10k.kforge");
        {
            SessionStore s(large.toStdString());
            const auto sid = s.createSession({0, "10k", "demo", "cpu", "templates", "finished", {{"nodes", 10000}}, 0});
            const auto op = s.addOperator(sid, makeSoftmaxCard(256, 1024));
            NodeRecord root;
            root.sessionId = sid;
            root.operatorId = op;
            root.status = "baseline";
            std::vector<int64_t> ids{s.addNode(root, Candidate{"reference", "aten", nlohmann::json::object()})};
            for (int i = 1; i < 10000; ++i)
                ids.push_back(addFinishedNode(s, sid, op, ids[size_t(i * 7919) % ids.size()], 1.0 + (i % 97) / 100.0, "// k"));
        }
        {
            SessionContext bare; // the read alone, no panels observing
            QSignalSpy finished(&bare, &SessionContext::openFinished);
            test::StallMeter stalls;
            stalls.start();
            QElapsedTimer readTime;
            readTime.start();
            bare.open(large);
            QVERIFY(bare.isOpening());
            QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
            stalls.stop();
            QCOMPARE(finished.at(0).at(1).toString(), QString());
            QCOMPARE(bare.snapshot()->nodes().size(), size_t(10000));
            qInfo("reading 10,000 nodes: %lld ms, longest stall %lld ms", readTime.elapsed(), stalls.longestMs());
            QVERIFY2(stalls.longestMs() < 50, qPrintable(QStringLiteral("the event loop stalled for %1 ms").arg(stalls.longestMs())));
        }
        MainWindow w;
        w.resize(1400, 850);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy finished(w.context(), &SessionContext::openFinished);
        test::StallMeter stalls;
        stalls.start();
        w.openSessionInteractively(large);
        QVERIFY(w.context()->isOpening());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
        // The overview is whole at once (once the view has fitted the new tree, an event after the open
        // reports); the items come in slices, the ones in view first.
        QTRY_VERIFY_WITH_TIMEOUT(w.treeView()->drawsOverview(), 5000);
        QTRY_VERIFY_WITH_TIMEOUT(!w.treeView()->isBuilding(), 20000);
        QTest::qWait(200); // the first paints of the new tree count too
        stalls.stop();
        QCOMPARE(finished.at(0).at(1).toString(), QString());
        QCOMPARE(w.treeView()->nodeItemCount(), 10000);
        qInfo("opening 10,000 nodes in the window: longest stall %lld ms (the tree built and painted)", stalls.longestMs());
        // The figure itself is the benchmark's (bench/RESULTS-gui.md); the test holds the behaviour: the
        // tree is built in slices, never in one freeze (a whole build stalled 217-242 ms).
        QVERIFY2(stalls.longestMs() < 120, qPrintable(QStringLiteral("the event loop stalled for %1 ms").arg(stalls.longestMs())));

        // Two opens in a row: the first is dropped, the second is shown, whichever read ends first.
        QSignalSpy dropped(w.context(), &SessionContext::openDropped);
        w.openSessionInteractively(large);
        w.openSessionInteractively(m_session.path);
        QCOMPARE(dropped.count(), 1);
        QCOMPARE(dropped.at(0).at(0).toString(), large);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 30000);
        QTest::qWait(300); // the large read's late result must change nothing
        QCOMPARE(w.context()->sessionPath(), m_session.path);
        QCOMPARE(w.treeView()->nodeItemCount(), int(m_session.nodeCount));

        // A bad file: the reason in the status bar, and the session shown stays.
        const QString bad = path("not-a-session-async.kforge");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("not sqlite");
        f.close();
        QVERIFY(!w.openSession(bad).isEmpty());
        QCOMPARE(w.context()->sessionPath(), m_session.path);
        QVERIFY(w.statusBar()->currentMessage().startsWith(QStringLiteral("Cannot open not-a-session-async.kforge")));
    }

    void decisionFromTheCliAppearsInTheWindow()
    {
#ifndef KFORGE_CLI_PATH
        QSKIP("kforge-cli is not built");
#else
        const QString file = path("cli-decide.kforge");
        const auto stored = writeSession(file);
        MainWindow w;
        QCOMPARE(w.openSession(file), QString());
        w.watcher()->setPollInterval(100);
        const auto node = stored.ids.at("accepted");
        QProcess cli;
        cli.start(QStringLiteral(KFORGE_CLI_PATH), {QStringLiteral("decide"), QStringLiteral("--session"), file, QStringLiteral("--node"),
                                                    QString::number(node), QStringLiteral("--reject"), QStringLiteral("--reason"),
                                                    QStringLiteral("spills on sm_80")});
        QVERIFY(cli.waitForFinished(20000));
        QCOMPARE(cli.exitCode(), 0);
        QVERIFY(cli.readAllStandardOutput().contains("rejected by user: spills on sm_80"));
        QTRY_COMPARE_WITH_TIMEOUT(w.treeView()->nodeItem(node)->decision(), NodeItem::Decision::Rejected, 10000);
        QCOMPARE(userDecisions(file, node).at(0).reason, std::string("spills on sm_80"));

        // What it refuses, and says why: the baseline, a missing node, a missing reason.
        auto refused = [&](QStringList args, const char *message) {
            QProcess p;
            p.start(QStringLiteral(KFORGE_CLI_PATH), QStringList{QStringLiteral("decide"), QStringLiteral("--session"), file} + args);
            QVERIFY(p.waitForFinished(20000));
            QVERIFY(p.exitCode() != 0);
            const QByteArray err = p.readAllStandardError();
            QVERIFY2(err.contains(message), err.constData());
        };
        refused({QStringLiteral("--node"), QString::number(stored.ids.at("root")), QStringLiteral("--accept"), QStringLiteral("--reason"),
                 QStringLiteral("x")},
                "is the baseline");
        refused({QStringLiteral("--node"), QStringLiteral("9999"), QStringLiteral("--accept"), QStringLiteral("--reason"), QStringLiteral("x")},
                "has no node 9999");
        refused({QStringLiteral("--node"), QString::number(node), QStringLiteral("--accept")}, "option --reason is required");
        QCOMPARE(userDecisions(file, node).size(), size_t(1));
#endif
    }

    void arrowKeysWalkTheTree()
    {
        MainWindow w;
        w.resize(1400, 850);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QCOMPARE(w.openSession(m_session.path), QString());
        auto *view = w.treeView();
        view->setFocus();
        w.context()->select(m_session.ids["accepted"]); // children: best, running; parent: not_faster
        QTest::keyClick(view, Qt::Key_Up);
        QCOMPARE(w.context()->selectedNode(), m_session.ids["not_faster"]);
        QTest::keyClick(view, Qt::Key_Right); // not_faster's sibling to the right: compile_error
        QCOMPARE(w.context()->selectedNode(), m_session.ids["compile_error"]);
        QTest::keyClick(view, Qt::Key_Left);
        QCOMPARE(w.context()->selectedNode(), m_session.ids["not_faster"]);
        QTest::keyClick(view, Qt::Key_Down); // its first child on the left: accepted
        QCOMPARE(w.context()->selectedNode(), m_session.ids["accepted"]);
        QTest::keyClick(view, Qt::Key_Up);
        QTest::keyClick(view, Qt::Key_Up);
        QCOMPARE(w.context()->selectedNode(), m_session.ids["root"]);
        QTest::keyClick(view, Qt::Key_Up); // the root has no parent: stays
        QCOMPARE(w.context()->selectedNode(), m_session.ids["root"]);
        QCOMPARE(w.inspector()->shownNode(), m_session.ids["root"]);
    }

    // A wide, shallow tree fills the window: levels stretch to the height instead of leaving a strip.
    void wideTreeFillsTheWindow()
    {
        const QString file = path("wide.kforge");
        {
            SessionStore s(file.toStdString());
            const auto sid = s.createSession({0, "wide", "demo", "cpu", "templates", "finished", {}, 0});
            const auto op = s.addOperator(sid, makeSoftmaxCard(256, 1024));
            NodeRecord n;
            n.sessionId = sid;
            n.operatorId = op;
            n.status = "baseline";
            const auto root = s.addNode(n, Candidate{"reference", "aten", nlohmann::json::object()});
            for (int i = 0; i < 60; ++i) {
                const auto child = addFinishedNode(s, sid, op, root, 1.1, "// child");
                if (i % 4 == 0)
                    addFinishedNode(s, sid, op, child, 1.2, "// grandchild");
            }
        }
        MainWindow w;
        w.resize(1400, 850);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QCOMPARE(w.openSession(file), QString());
        auto *view = w.treeView();
        QCOMPARE(view->columnWidth(), TreeView::kTightColumnWidth);
        QVERIFY2(view->levelHeight() > TreeView::kLevelHeight, qPrintable(QString::number(view->levelHeight())));
        // The drawn tree spans most of the view's height, not a strip along the top.
        QRectF drawn;
        for (const auto &node : w.context()->snapshot()->nodes())
            drawn |= QRectF(view->mapFromScene(view->nodeItem(node.id)->scenePos()), QSizeF(1, 1));
        QVERIFY2(drawn.height() > 0.5 * view->viewport()->height(), qPrintable(QStringLiteral("%1 of %2").arg(drawn.height()).arg(view->viewport()->height())));
    }

    void filterStates_data()
    {
        // 1 root; 2, 5 children of 1; 3, 6 children of 2; 4 child of 3; 7 child of 5 (a repair).
        QTest::addColumn<QString>("status");
        QTest::addColumn<QString>("templateId");
        QTest::addColumn<QString>("proposer");
        QTest::addColumn<bool>("hide");
        QTest::addColumn<QStringList>("expected");
        const QStringList all = {QStringLiteral("1:shown"), QStringLiteral("2:shown"), QStringLiteral("3:shown"), QStringLiteral("4:shown"),
                                 QStringLiteral("5:shown"), QStringLiteral("6:shown"), QStringLiteral("7:shown")};
        QTest::newRow("no filter") << QString() << QString() << QString() << true << all;
        QTest::newRow("accepted, dimmed")
            << QStringLiteral("accepted") << QString() << QString() << false
            << QStringList{QStringLiteral("1:dimmed"), QStringLiteral("2:dimmed"), QStringLiteral("3:shown"), QStringLiteral("4:shown"),
                           QStringLiteral("5:dimmed"), QStringLiteral("6:dimmed"), QStringLiteral("7:dimmed")};
        QTest::newRow("accepted, hidden: the path down stays")
            << QStringLiteral("accepted") << QString() << QString() << true
            << QStringList{QStringLiteral("1:dimmed"), QStringLiteral("2:dimmed"), QStringLiteral("3:shown"), QStringLiteral("4:shown"),
                           QStringLiteral("5:hidden"), QStringLiteral("6:hidden"), QStringLiteral("7:hidden")};
        QTest::newRow("crashed under a compile error, hidden")
            << QStringLiteral("crashed") << QString() << QString() << true
            << QStringList{QStringLiteral("1:dimmed"), QStringLiteral("2:hidden"), QStringLiteral("3:hidden"), QStringLiteral("4:hidden"),
                           QStringLiteral("5:dimmed"), QStringLiteral("6:hidden"), QStringLiteral("7:shown")};
        QTest::newRow("template t.b")
            << QString() << QStringLiteral("t.b") << QString() << true
            << QStringList{QStringLiteral("1:dimmed"), QStringLiteral("2:dimmed"), QStringLiteral("3:hidden"), QStringLiteral("4:hidden"),
                           QStringLiteral("5:hidden"), QStringLiteral("6:shown"), QStringLiteral("7:hidden")};
        QTest::newRow("repairs")
            << QString() << QString() << QStringLiteral("templates \u00b7 repair") << false
            << QStringList{QStringLiteral("1:dimmed"), QStringLiteral("2:dimmed"), QStringLiteral("3:dimmed"), QStringLiteral("4:dimmed"),
                           QStringLiteral("5:dimmed"), QStringLiteral("6:dimmed"), QStringLiteral("7:shown")};
        QTest::newRow("the baseline alone")
            << QString() << QString() << QStringLiteral("baseline") << true
            << QStringList{QStringLiteral("1:shown"), QStringLiteral("2:hidden"), QStringLiteral("3:hidden"), QStringLiteral("4:hidden"),
                           QStringLiteral("5:hidden"), QStringLiteral("6:hidden"), QStringLiteral("7:hidden")};
        QTest::newRow("status and template together: none")
            << QStringLiteral("accepted") << QStringLiteral("t.b") << QString() << true
            << QStringList{QStringLiteral("1:hidden"), QStringLiteral("2:hidden"), QStringLiteral("3:hidden"), QStringLiteral("4:hidden"),
                           QStringLiteral("5:hidden"), QStringLiteral("6:hidden"), QStringLiteral("7:hidden")};
    }

    void filterStates()
    {
        QFETCH(QString, status);
        QFETCH(QString, templateId);
        QFETCH(QString, proposer);
        QFETCH(bool, hide);
        QFETCH(QStringList, expected);
        const std::vector<NodeRecord> nodes = {record(1, std::nullopt, "baseline", "aten"), record(2, 1, "not_faster"),
                                               record(3, 2, "accepted"), record(4, 3, "accepted"), record(5, 1, "compile_error"),
                                               record(6, 2, "incorrect", "t.b"), record(7, 5, "crashed", "t.a", "repair")};
        NodeFilter f;
        if (!status.isEmpty())
            f.statuses.insert(status.toStdString());
        f.templateId = templateId.toStdString();
        f.proposer = proposer.toStdString();
        f.hide = hide;
        QCOMPARE(printStates(nodes, applyFilter(nodes, "templates", f)), expected);
    }

    void filterBarDimsAndHidesTheTree()
    {
        MainWindow w;
        QCOMPARE(w.openSession(m_session.path), QString());
        auto *bar = w.filterBar();
        QVERIFY(bar->templateBox()->findData(QStringLiteral("cpu.softmax.test")) > 0);
        QVERIFY(bar->templateBox()->findData(QStringLiteral("aten")) > 0);
        QVERIFY(bar->proposerBox()->findData(QStringLiteral("templates \u00b7 improve")) > 0);
        QVERIFY(bar->proposerBox()->findData(QStringLiteral("baseline")) > 0);

        QSignalSpy changed(bar, &FilterBar::filterChanged);
        QVERIFY(w.applyFilter(QStringLiteral("accepted"), QString(), false));
        QVERIFY(changed.count() >= 1);
        auto *tree = w.treeView();
        auto item = [&](const char *role) { return tree->nodeItem(m_session.ids[role]); };
        for (const char *role : {"accepted", "best"})
            QVERIFY2(item(role)->isVisible() && !item(role)->isDimmed(), role);
        for (const char *role : {"root", "not_faster", "compile_error", "incorrect", "crashed", "running"})
            QVERIFY2(item(role)->isVisible() && item(role)->isDimmed(), role);

        bar->hideBox()->setChecked(true); // what fails goes; the ancestors of what is kept stay, dimmed
        for (const char *role : {"accepted", "best"})
            QVERIFY2(item(role)->isVisible() && !item(role)->isDimmed(), role);
        for (const char *role : {"root", "not_faster"})
            QVERIFY2(item(role)->isVisible() && item(role)->isDimmed(), role);
        for (const char *role : {"compile_error", "incorrect", "crashed", "running"})
            QVERIFY2(!item(role)->isVisible(), role);
        // The kept nodes are reachable with the keys through their dimmed ancestors; hidden ones are skipped.
        w.context()->select(m_session.ids["root"]);
        tree->setFocus();
        QTest::keyClick(tree, Qt::Key_Down);
        QCOMPARE(w.context()->selectedNode(), m_session.ids["not_faster"]);
        QTest::keyClick(tree, Qt::Key_Down);
        QCOMPARE(w.context()->selectedNode(), m_session.ids["accepted"]);

        bar->clear();
        for (auto role : {"root", "compile_error", "running", "best"})
            QVERIFY2(item(role)->isVisible() && !item(role)->isDimmed(), role);
        QVERIFY(!w.applyFilter(QStringLiteral("no-such-status"), QString(), false));
    }

    void visitBadgesAndRooflineInTheHoverCard_data()
    {
        QTest::addColumn<QString>("role");
        QTest::addColumn<int>("visits");
        QTest::addColumn<QString>("card"); // a part of the hover card; empty: no roofline line
        // Subtree sizes of finished nodes: what MCTS backs up through each ancestor.
        QTest::newRow("root") << QStringLiteral("root") << 6 << QString();
        QTest::newRow("not faster") << QStringLiteral("not_faster") << 4 << QStringLiteral("at <b>39%</b> of the roofline (floor 8.4 µs)");
        QTest::newRow("accepted") << QStringLiteral("accepted") << 2 << QStringLiteral("at <b>72%</b> of the roofline (floor 8.4 µs)");
        QTest::newRow("best") << QStringLiteral("best") << 1 << QStringLiteral("at <b>96%</b> of the roofline");
        QTest::newRow("compile error") << QStringLiteral("compile_error") << 2 << QString();
        QTest::newRow("running") << QStringLiteral("running") << 0 << QString();
    }

    void visitBadgesAndRooflineInTheHoverCard()
    {
        QFETCH(QString, role);
        QFETCH(int, visits);
        QFETCH(QString, card);
        MainWindow w;
        QCOMPARE(w.openSession(m_session.path), QString());
        const auto id = m_session.ids[role.toStdString()];
        QCOMPARE(w.context()->snapshot()->visits(id), visits);
        auto *item = w.treeView()->nodeItem(id);
        QCOMPARE(item->visits(), visits);
        const QString tip = item->toolTip();
        if (card.isEmpty())
            QVERIFY2(!tip.contains(QStringLiteral("of the roofline")), qPrintable(tip));
        else
            QVERIFY2(tip.contains(card), qPrintable(tip));
        if (visits > 0)
            QVERIFY2(tip.contains(QStringLiteral("%1 visit").arg(visits)), qPrintable(tip));
    }

    void largeTreeIsDrawnAsAnOverview()
    {
        // 1,500 nodes in two levels: fitted, a node is a fraction of a pixel.
        const QString file = path("large.kforge");
        {
            SessionStore s(file.toStdString());
            const auto sid = s.createSession({0, "large", "demo-attention", "cpu", "templates", "finished", {}, 0});
            const auto op = s.addOperator(sid, makeSoftmaxCard(256, 1024));
            NodeRecord root;
            root.sessionId = sid;
            root.operatorId = op;
            root.status = "baseline";
            const auto rootId = s.addNode(root, Candidate{"reference", "aten", nlohmann::json::object()});
            for (int i = 0; i < 50; ++i) {
                const auto parent = addFinishedNode(s, sid, op, rootId, 1.1 + 0.01 * i, "// a");
                for (int k = 0; k < 29; ++k)
                    addFinishedNode(s, sid, op, parent, 1.0 + 0.001 * k, "// b");
            }
        }
        MainWindow w;
        w.resize(1200, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QCOMPARE(w.openSession(file), QString());
        auto *tree = w.treeView();
        QTRY_VERIFY(!tree->isBuilding()); // a tree this large gets its items in slices
        QCOMPARE(tree->nodeItemCount(), 1501);
        tree->fitTree();
        QVERIFY(tree->drawsOverview());
        auto count = [](const QImage &image, QColor colour) {
            int n = 0;
            for (int y = 0; y < image.height(); ++y)
                for (int x = 0; x < image.width(); ++x)
                    n += image.pixelColor(x, y) == colour;
            return n;
        };
        QImage overview = tree->viewport()->grab().toImage().convertToFormat(QImage::Format_RGB32);
        QVERIFY2(count(overview, QColor(0xe8, 0xa2, 0x02)) > 10, "the best path is drawn"); // gold
        QVERIFY2(count(overview, statusStyle("accepted").fill) > 100, "the accepted nodes are drawn");
        // The selection shows at any zoom.
        w.context()->select(tree->nodeItem(3)->id());
        overview = tree->viewport()->grab().toImage().convertToFormat(QImage::Format_RGB32);
        QVERIFY(count(overview, QColor(0x1e, 0x6f, 0xd9)) >= 16);
        // Zoomed in, nodes are items with their circles and labels again.
        tree->setTransform(QTransform());
        QVERIFY(!tree->drawsOverview());
        tree->centerOn(tree->nodeItem(3));
        const QImage detail = tree->viewport()->grab().toImage().convertToFormat(QImage::Format_RGB32);
        QVERIFY(count(detail, statusStyle("accepted").fill) > 500); // whole circles
    }

    void kernelUsageFromTheCompileLog_data()
    {
        QTest::addColumn<QString>("log");
        QTest::addColumn<QString>("expected"); // kernels/registers/shared/spills, or "none"
        QTest::newRow("cpu compile") << QStringLiteral("g++ -O3: ok") << QStringLiteral("none");
        QTest::newRow("empty") << QString() << QStringLiteral("none");
        QTest::newRow("one kernel") << QString::fromLatin1(kPtxasOneKernel) << QStringLiteral("1/40/1024/0");
        QTest::newRow("two kernels: most registers and shared memory, spills summed")
            << QString::fromLatin1(kPtxasTwoKernels) << QStringLiteral("2/255/8192/32");
        QTest::newRow("not ptxas's words")
            << QStringLiteral("candidate.cu(3): note: Used 12 registers in a comment") << QStringLiteral("none");
    }

    void kernelUsageFromTheCompileLog()
    {
        QFETCH(QString, log);
        QFETCH(QString, expected);
        const auto u = parseKernelUsage(log.toStdString());
        const QString got = !u ? QStringLiteral("none")
                               : QStringLiteral("%1/%2/%3/%4").arg(u->kernels).arg(u->registers).arg(u->sharedBytes).arg(u->spillBytes);
        QCOMPARE(got, expected);
    }

    void compareRowsReadAsATable_data()
    {
        QTest::addColumn<QString>("status");
        QTest::addColumn<QString>("log");
        QTest::addColumn<QString>("samples"); // comma-separated candidate microseconds
        QTest::addColumn<double>("roofline");
        QTest::addColumn<QString>("sharedExpr");
        QTest::addColumn<QStringList>("cells"); // every column, in order
        QTest::newRow("cpu, accepted")
            << QStringLiteral("accepted") << QStringLiteral("g++ -O3: ok") << QStringLiteral("10,10,12,8,10") << 8.0 << QString()
            << QStringList{QStringLiteral("#7"), QStringLiteral("accepted"), QStringLiteral("t.a"), QStringLiteral("10.00 µs"),
                           QStringLiteral("±0.0% (5)"), QStringLiteral("2.00x"), QStringLiteral("-"), QStringLiteral("-"),
                           QStringLiteral("-"), QStringLiteral("80%")};
        QTest::newRow("cuda, one kernel, dynamic shared memory")
            << QStringLiteral("not_faster") << QString::fromLatin1(kPtxasOneKernel) << QStringLiteral("100,110,120,130,140") << 60.0
            << QStringLiteral("cols * 4")
            << QStringList{QStringLiteral("#7"), QStringLiteral("not_faster"), QStringLiteral("t.a"), QStringLiteral("120.00 µs"),
                           QStringLiteral("±8.3% (5)"), QStringLiteral("2.00x"), QStringLiteral("40"),
                           QStringLiteral("1 KiB + dynamic cols * 4"), QStringLiteral("0 B"), QStringLiteral("50%")};
        QTest::newRow("cuda, two kernels with spills, no floor")
            << QStringLiteral("accepted") << QString::fromLatin1(kPtxasTwoKernels) << QStringLiteral("5") << 0.0 << QString()
            << QStringList{QStringLiteral("#7"), QStringLiteral("accepted"), QStringLiteral("t.a"), QStringLiteral("5.00 µs"),
                           QStringLiteral("±0.0% (1)"), QStringLiteral("2.00x"), QStringLiteral("255"), QStringLiteral("8 KiB"),
                           QStringLiteral("32 B"), QStringLiteral("-")};
        QTest::newRow("compile error: nothing measured")
            << QStringLiteral("compile_error") << QStringLiteral("error: expected ')'") << QString() << 8.0 << QString()
            << QStringList{QStringLiteral("#7"), QStringLiteral("compile_error"), QStringLiteral("t.a"), QStringLiteral("-"),
                           QStringLiteral("-"), QStringLiteral("2.00x"), QStringLiteral("-"), QStringLiteral("-"),
                           QStringLiteral("-"), QStringLiteral("-")};
    }

    void compareRowsReadAsATable()
    {
        QFETCH(QString, status);
        QFETCH(QString, log);
        QFETCH(QString, samples);
        QFETCH(double, roofline);
        QFETCH(QString, sharedExpr);
        QFETCH(QStringList, cells);
        NodeDetail d;
        d.node = record(7, 1, status.toUtf8().constData());
        d.node.speedup = 2.0;
        d.node.rooflineUs = roofline;
        d.verdict.compile.log = log.toStdString();
        for (const auto &s : samples.split(QLatin1Char(','), Qt::SkipEmptyParts))
            d.verdict.candidate.samplesUs.push_back(s.toDouble());
        d.verdict.candidate.summary = summarize(d.verdict.candidate.samplesUs);
        if (!sharedExpr.isEmpty())
            d.candidate.launch = {{"kernels", {{{"name", "kf_rows"}, {"shared_bytes", sharedExpr.toStdString()}}}}};
        const auto row = compareRow(d);
        QStringList got;
        for (int c = 0; c < int(CompareColumn::Count); ++c)
            got << QString::fromStdString(compareCell(row, CompareColumn(c)));
        QCOMPARE(got, cells);
    }

    void compareModelPassesTheModelTester()
    {
        CompareModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        NodeDetail a, b;
        a.node = record(3, 1, "accepted");
        a.verdict.candidate.samplesUs = {12, 12, 12};
        a.verdict.candidate.summary = summarize(a.verdict.candidate.samplesUs);
        b.node = record(4, 3, "accepted");
        b.verdict.candidate.samplesUs = {9, 9, 9};
        b.verdict.candidate.summary = summarize(b.verdict.candidate.samplesUs);
        b.verdict.compile.log = kPtxasOneKernel;
        model.setRows(compareRows({a, b}));
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.columnCount(), int(CompareColumn::Count));
        QCOMPARE(model.headerData(int(CompareColumn::Registers), Qt::Horizontal).toString(), QStringLiteral("Registers"));
        QCOMPARE(model.index(1, int(CompareColumn::Registers)).data().toString(), QStringLiteral("40"));
        QCOMPARE(model.index(0, int(CompareColumn::Registers)).data(CompareModel::SortRole).toInt(), -1);
        QCOMPARE(model.index(1, 0).data(CompareModel::NodeIdRole).toLongLong(), 4LL);
        // The fastest median is bold, the other is not.
        QVERIFY(model.index(1, int(CompareColumn::Median)).data(Qt::FontRole).value<QFont>().bold());
        QVERIFY(!model.index(0, int(CompareColumn::Median)).data(Qt::FontRole).isValid());
        model.setRows(compareRows({b}));
        QCOMPARE(model.rowCount(), 1);
        model.setRows({});
        QCOMPARE(model.rowCount(), 0);
    }

    void ctrlClickComparesNodes()
    {
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QCOMPARE(w.openSession(m_session.path), QString());
        QVERIFY(w.compareDock()->isHidden());
        auto *tree = w.treeView();
        const auto accepted = m_session.ids["accepted"], best = m_session.ids["best"];
        QSignalSpy diffShown(w.compareView(), &CompareView::diffShown);
        QTest::mouseClick(tree->viewport(), Qt::LeftButton, Qt::ControlModifier, viewPointOf(tree, tree->nodeItem(accepted)));
        QCOMPARE(w.context()->compared(), QList<qint64>{accepted});
        QVERIFY(w.compareDock()->isHidden()); // one node is nothing to compare yet
        QTest::mouseClick(tree->viewport(), Qt::LeftButton, Qt::ControlModifier, viewPointOf(tree, tree->nodeItem(best)));
        QCOMPARE(w.context()->compared(), (QList<qint64>{accepted, best}));
        QVERIFY(w.compareDock()->isVisible());
        QCOMPARE(tree->nodeItem(accepted)->comparedOrder(), 1);
        QCOMPARE(tree->nodeItem(best)->comparedOrder(), 2);
        QCOMPARE(w.context()->selectedNode(), w.context()->snapshot()->bestNodeId()); // Ctrl-click does not select

        auto *model = w.compareView()->model();
        QCOMPARE(model->rowCount(), 2);
        // Candidate medians: 21 / 1.8 = 11.67 us and 21 / 2.4 = 8.75 us against a floor of 8.4 us.
        QCOMPARE(model->index(0, int(CompareColumn::Median)).data().toString(), QStringLiteral("11.67 µs"));
        QCOMPARE(model->index(1, int(CompareColumn::Median)).data().toString(), QStringLiteral("8.75 µs"));
        QCOMPARE(model->index(0, int(CompareColumn::Roofline)).data().toString(), QStringLiteral("72%"));
        QCOMPARE(model->index(1, int(CompareColumn::Roofline)).data().toString(), QStringLiteral("96%"));
        QCOMPARE(model->index(1, int(CompareColumn::Status)).data().toString(), QStringLiteral("accepted"));
        QVERIFY(diffShown.count() > 0 || diffShown.wait(5000));
        QCOMPARE(w.compareView()->diffView()->summary(), QStringLiteral("1 line changed, 0 removed, 0 added"));

        // A third node joins; Ctrl-clicking one again takes it out; opening a session clears the set.
        w.context()->toggleCompared(m_session.ids["not_faster"]);
        QCOMPARE(model->rowCount(), 3);
        QTest::mouseClick(tree->viewport(), Qt::LeftButton, Qt::ControlModifier, viewPointOf(tree, tree->nodeItem(accepted)));
        QCOMPARE(w.context()->compared(), (QList<qint64>{best, m_session.ids["not_faster"]}));
        QCOMPARE(tree->nodeItem(accepted)->comparedOrder(), 0);
        QCOMPARE(model->rowCount(), 2);
        // A compared node that another writer finishes is read again when the window sees it.
        const QString copy = path("compare-live.kforge");
        QFile::remove(copy);
        QVERIFY(QFile::copy(m_session.path, copy));
        QCOMPARE(w.openSession(copy), QString());
        const auto running = m_session.ids["running"];
        w.context()->setCompared({best, running});
        QCOMPARE(model->index(1, int(CompareColumn::Status)).data().toString(), QStringLiteral("running"));
        {
            SessionStore writer(copy.toStdString());
            writer.finishNode(running, correctVerdict(VerdictStatus::NotFaster, 0.9), 0);
        }
        QTRY_COMPARE_WITH_TIMEOUT(model->index(1, int(CompareColumn::Status)).data().toString(), QStringLiteral("not_faster"), 10000);
        QVERIFY(model->index(1, int(CompareColumn::Median)).data().toString() != QStringLiteral("-"));
        QCOMPARE(w.openSession(m_session.path), QString());
        QVERIFY(w.context()->compared().isEmpty());
        QCOMPARE(model->rowCount(), 0);
    }

    void settingsAreStoredAndUsedBySearches()
    {
        QSettings().remove(QStringLiteral("search"));
        MainWindow w;
        QCOMPARE(w.searchSettings().workers, 1);
        QCOMPARE(w.searchSettings().backend, QStringLiteral("cpu"));
        auto *dialog = w.openSettingsDialog();
        QVERIFY(dialog->isVisible());
        // The examples fill the command line: local, ssh, srun.
        QStringList examples;
        for (int i = 1; i < dialog->exampleBox()->count(); ++i)
            examples << dialog->exampleBox()->itemData(i).toString();
        QVERIFY2(examples.filter(QStringLiteral("ssh ")).size() == 1, qPrintable(examples.join(QLatin1Char('|'))));
        QVERIFY2(examples.filter(QStringLiteral("srun ")).size() == 1, qPrintable(examples.join(QLatin1Char('|'))));
        const int ssh = dialog->exampleBox()->findText(QStringLiteral("Over ssh"));
        QVERIFY(ssh > 0);
        dialog->exampleBox()->setCurrentIndex(ssh);
        emit dialog->exampleBox()->activated(ssh);
        QVERIFY(dialog->commandEdit()->text().startsWith(QStringLiteral("ssh ")));

        const QString missing = path("no-such-dir/kforge-worker-missing");
        dialog->commandEdit()->setText(missing);
        dialog->workersBox()->setValue(3);
        dialog->backendBox()->setCurrentIndex(dialog->backendBox()->findData(QStringLiteral("cuda")));
        dialog->nodesBox()->setValue(7);
        dialog->accept();
        QCOMPARE(w.searchSettings().workerCommand, missing);
        QCOMPARE(QSettings().value(QStringLiteral("search/workers")).toInt(), 3);
        QCOMPARE(QSettings().value(QStringLiteral("search/backend")).toString(), QStringLiteral("cuda"));
        QCOMPARE(QSettings().value(QStringLiteral("search/nodes")).toInt(), 7);
        {
            MainWindow again; // a new window reads them back
            QCOMPARE(again.searchSettings().workerCommand, missing);
            QCOMPARE(again.searchSettings().workers, 3);
            QCOMPARE(again.searchSettings().backend, QStringLiteral("cuda"));
            QCOMPARE(again.searchSettings().nodes, 7);
        }

        // Search > Start runs that command line: here a worker that does not exist, which the search says.
        QSignalSpy finished(w.searchController(), &SearchController::finished);
        QVERIFY(w.startDemoSearch());
        QVERIFY(finished.wait(90000));
        QVERIFY2(w.lastSearchError().contains(QStringLiteral("kforge-worker-missing")), qPrintable(w.lastSearchError()));
        QSettings().remove(QStringLiteral("search"));
    }

    // A search refused before it has a session (here a cuda search where no worker offers cuda) says why
    // and leaves no file behind; a session file that was there before is left as it was.
    void refusedSearchLeavesNoFile()
    {
        const QString worker = liveWorker();
        if (worker.isEmpty())
            QSKIP("no kforge-worker: build it (KFORGE_BUILD_WORKER=ON) or set KFORGE_WORKER to one");
        MainWindow w;
        for (const bool existed : {false, true}) {
            auto request = SearchRequest::demo(3, 1);
            request.workerCommand = worker;
            request.backend = QStringLiteral("cuda");
            request.sessionPath = path(existed ? "refused-existing.kforge" : "refused-new.kforge");
            int64_t before = 0;
            if (existed) {
                SessionStore store(request.sessionPath.toStdString());
                SessionInfo info;
                info.name = "an earlier search";
                before = store.createSession(info);
            }
            QSignalSpy finished(w.searchController(), &SearchController::finished);
            QVERIFY(w.startSearch(request));
            QVERIFY(finished.wait(90000));
            if (w.lastSearchError().isEmpty())
                QSKIP("a worker here offers cuda: the search ran");
            QVERIFY2(w.lastSearchError().contains(QStringLiteral("cuda")), qPrintable(w.lastSearchError()));
            QCOMPARE(QFileInfo::exists(request.sessionPath), existed);
            QVERIFY(!QFileInfo::exists(request.sessionPath + QStringLiteral("-wal")) || existed);
            if (existed) {
                SessionStore store(request.sessionPath.toStdString(), SessionStore::Mode::ReadOnly);
                QCOMPARE(store.sessions().size(), size_t(1));
                QCOMPARE(store.sessions().front().id, before);
            }
        }
    }

    void liveSearchGrowsTheTree()
    {
        if (test::workerCommand().empty())
            QSKIP("kforge-worker is not built (configure with KFORGE_BUILD_WORKER=ON)");
        MainWindow w;
        w.resize(1400, 850);
        w.show();
        auto request = SearchRequest::demo(4, 1);
        request.workerCommand = QString::fromStdString(test::workerCommand());
        request.sessionPath = path("live.kforge");
        request.options.eval.benchSamples = 10;

        QSignalSpy created(w.searchController(), &SearchController::sessionCreated);
        QSignalSpy added(w.searchController(), &SearchController::nodeAdded);
        QSignalSpy finished(w.searchController(), &SearchController::finished);
        QVERIFY(w.startSearch(request));
        QVERIFY(w.searchController()->isRunning());
        QVERIFY(!w.startSearch(request)); // one at a time

        QVERIFY(finished.wait(60000));
        QCOMPARE(w.lastSearchError(), QString());
        QCOMPARE(created.count(), 1);
        QCOMPARE(added.count(), 5);
        QTRY_COMPARE_WITH_TIMEOUT(w.treeView()->nodeItemCount(), 5, 60000); // root + 4
        for (const auto &n : w.context()->snapshot()->nodes())
            QVERIFY2(n.status != "running", qPrintable(QStringLiteral("node %1 still running").arg(n.id)));
        const auto progress = finished.first().first().value<SearchProgress>();
        QCOMPARE(progress.evaluated, 4);
        QCOMPARE(progress.stopReason, std::string("node budget spent"));

        // What the tree shows is what the file holds.
        SessionStore store(request.sessionPath.toStdString(), SessionStore::Mode::ReadOnly);
        const auto sessions = store.sessions();
        QCOMPARE(sessions.size(), size_t(1));
        QCOMPARE(sessions[0].status, std::string("finished"));
        QCOMPARE(store.nodes(sessions[0].id).size(), size_t(5));
        // The best node is selected when the search ends, and the inspector shows its code.
        QVERIFY(w.context()->selectedNode() != 0);
        QVERIFY(!w.inspector()->code().isEmpty());
        // Reports carry no timings; the window read them from the file for the hover card.
        const auto timings = store.candidateTimings(sessions[0].id);
        QVERIFY(!timings.empty());
        for (const auto &t : timings) {
            const auto *shown = w.context()->snapshot()->timing(t.nodeId);
            QVERIFY2(shown, qPrintable(QStringLiteral("node %1 has no timing in the window").arg(t.nodeId)));
            QCOMPARE(shown->median, t.candidate.median);
            QVERIFY(w.context()->snapshot()->node(t.nodeId)->rooflineUs > 0);
        }
    }

    void stopEndsTheSearchWithEveryNodeFinished()
    {
        if (test::workerCommand().empty())
            QSKIP("kforge-worker is not built (configure with KFORGE_BUILD_WORKER=ON)");
        MainWindow w;
        auto request = SearchRequest::demo(200, 1);
        request.workerCommand = QString::fromStdString(test::workerCommand());
        request.sessionPath = path("stopped.kforge");
        request.options.eval.benchSamples = 10;
        QSignalSpy finishedNodes(w.searchController(), &SearchController::nodeFinished);
        QSignalSpy finished(w.searchController(), &SearchController::finished);
        QVERIFY(w.startSearch(request));
        QTRY_VERIFY_WITH_TIMEOUT(finishedNodes.count() >= 1, 60000);
        w.stopSearch();
        QVERIFY(finished.count() == 1 || finished.wait(60000));
        QCOMPARE(finished.first().first().value<SearchProgress>().stopReason, std::string("stopped"));
        QTRY_VERIFY(!w.searchController()->isRunning());

        SessionStore store(request.sessionPath.toStdString(), SessionStore::Mode::ReadOnly);
        const auto sessions = store.sessions();
        QCOMPARE(sessions[0].status, std::string("stopped"));
        const auto nodes = store.nodes(sessions[0].id);
        QVERIFY(nodes.size() < 201);
        for (const auto &n : nodes)
            QVERIFY(n.status != "running");
        QCOMPARE(w.treeView()->nodeItemCount(), int(nodes.size()));
    }

    // Closing the window mid-search stops the search first; deleting it outright drops whatever the
    // search thread still reports, without touching freed objects.
    void closingDuringSearchStopsIt()
    {
        if (test::workerCommand().empty())
            QSKIP("kforge-worker is not built (configure with KFORGE_BUILD_WORKER=ON)");
        auto request = SearchRequest::demo(200, 1);
        request.workerCommand = QString::fromStdString(test::workerCommand());
        request.options.eval.benchSamples = 10;

        MainWindow w;
        w.show();
        request.sessionPath = path("closed.kforge");
        QSignalSpy finished(w.searchController(), &SearchController::finished);
        QVERIFY(w.startSearch(request));
        QVERIFY(!w.close()); // refused until the search has stopped
        QVERIFY(w.isVisible());
        QVERIFY(finished.wait(60000));
        QTRY_VERIFY(!w.isVisible());

        auto *doomed = new MainWindow;
        request.sessionPath = path("deleted.kforge");
        QVERIFY(doomed->startSearch(request));
        QTest::qWait(300);
        delete doomed; // waits for the thread; its queued reports are discarded with the window
        QTest::qWait(100);
        SessionStore store(request.sessionPath.toStdString(), SessionStore::Mode::ReadOnly);
        for (const auto &s : store.sessions())
            for (const auto &n : store.nodes(s.id))
                QVERIFY(n.status != "running");
    }

    // A CPU search through the real worker, paused after two nodes, resumed from the window to its
    // budget: the file holds every node once, none left running, under the ids they had.
    void pauseThenResumeReachesTheBudget()
    {
        const QString worker = liveWorker();
        if (worker.isEmpty())
            QSKIP("no kforge-worker: build it (KFORGE_BUILD_WORKER=ON) or set KFORGE_WORKER to one");
        MainWindow w;
        w.setDemoSettings(6, 1, worker);
        auto request = SearchRequest::demo(6, 1);
        request.workerCommand = worker;
        request.sessionPath = path("paused.kforge");
        request.options.eval.benchSamples = 10;
        QSignalSpy finishedNodes(w.searchController(), &SearchController::nodeFinished);
        QSignalSpy finished(w.searchController(), &SearchController::finished);
        QVERIFY(!w.canResume());
        QVERIFY(w.startSearch(request));
        QVERIFY(!w.canResume()); // running
        QTRY_VERIFY_WITH_TIMEOUT(finishedNodes.count() >= 2, 60000);
        w.stopSearch();
        QVERIFY(finished.count() == 1 || finished.wait(60000));
        QCOMPARE(finished.first().first().value<SearchProgress>().stopReason, std::string("stopped"));
        const auto before = nodesIn(request.sessionPath);
        QVERIFY2(before.size() >= 3 && before.size() < 7, qPrintable(QString::number(before.size())));
        QVERIFY(w.canResume());

        finished.clear();
        QVERIFY2(w.resumeSearch(), qPrintable(w.lastSearchError()));
        QVERIFY(finished.wait(90000));
        QCOMPARE(w.lastSearchError(), QString());
        QCOMPARE(finished.first().first().value<SearchProgress>().stopReason, std::string("node budget spent"));
        const auto after = nodesIn(request.sessionPath);
        QCOMPARE(after.size(), size_t(7)); // the baseline and 6 candidates, no more
        std::set<int64_t> ids;
        for (const auto &n : after) {
            QVERIFY2(ids.insert(n.id).second, qPrintable(QStringLiteral("node %1 twice").arg(n.id)));
            QVERIFY2(n.status != "running" && n.status != "interrupted", qPrintable(QString::fromStdString(n.status)));
        }
        for (const auto &n : before)
            QVERIFY2(ids.count(n.id), qPrintable(QStringLiteral("node %1 lost").arg(n.id)));
        SessionStore store(request.sessionPath.toStdString(), SessionStore::Mode::ReadOnly);
        QCOMPARE(store.sessions().size(), size_t(1)); // the same session went on
        QCOMPARE(store.sessions()[0].status, std::string("finished"));
        QCOMPARE(w.treeView()->nodeItemCount(), 7);
        QVERIFY(!w.canResume());
    }

    // Stop now marks what is in flight interrupted (never running); a resume evaluates those nodes
    // again under their own ids.
    void stopNowThenResumeEvaluatesTheInterrupted()
    {
        const QString worker = liveWorker();
        if (worker.isEmpty())
            QSKIP("no kforge-worker: build it (KFORGE_BUILD_WORKER=ON) or set KFORGE_WORKER to one");
        MainWindow w;
        w.setDemoSettings(5, 2, worker);
        auto request = SearchRequest::demo(5, 2);
        request.workerCommand = worker;
        request.sessionPath = path("interrupted.kforge");
        request.options.eval.benchSamples = 10;
        QSignalSpy added(w.searchController(), &SearchController::nodeAdded);
        QSignalSpy finished(w.searchController(), &SearchController::finished);
        QVERIFY(w.startSearch(request));
        QTRY_VERIFY_WITH_TIMEOUT(added.count() >= 3, 60000); // the baseline and two in flight
        w.stopSearchNow();
        QVERIFY(finished.count() == 1 || finished.wait(60000));
        const auto reason = finished.first().first().value<SearchProgress>().stopReason;
        QVERIFY2(reason == "interrupted" || reason == "stopped", reason.c_str());
        std::set<int64_t> interrupted;
        for (const auto &n : nodesIn(request.sessionPath)) {
            QVERIFY2(n.status != "running", qPrintable(QStringLiteral("node %1 left running").arg(n.id)));
            if (n.status == "interrupted")
                interrupted.insert(n.id);
        }
        QCOMPARE(reason == "interrupted", !interrupted.empty());
        for (const qint64 id : interrupted) // the window says what the file says
            QCOMPARE(w.context()->snapshot()->node(id)->status, std::string("interrupted"));
        QVERIFY(w.canResume());

        finished.clear();
        QVERIFY2(w.resumeSearch(), qPrintable(w.lastSearchError()));
        QVERIFY(finished.wait(90000));
        const auto after = nodesIn(request.sessionPath);
        QCOMPARE(after.size(), size_t(6));
        for (const auto &n : after)
            QVERIFY2(n.status != "running" && n.status != "interrupted", qPrintable(QStringLiteral("node %1 %2").arg(n.id).arg(QString::fromStdString(n.status))));
        for (const qint64 id : interrupted)
            QVERIFY(std::any_of(after.begin(), after.end(), [id](const NodeRecord &n) { return n.id == id; }));
    }

    // A search that crashed leaves its session marked running with a node in flight: Resume says so and
    // goes on only when told to, then evaluates that node again under its id.
    void resumeOfASessionMarkedRunningNeedsConsent()
    {
        const QString worker = liveWorker();
        if (worker.isEmpty())
            QSKIP("no kforge-worker: build it (KFORGE_BUILD_WORKER=ON) or set KFORGE_WORKER to one");
        const QString file = path("crashed.kforge");
        {
            MainWindow first;
            auto request = SearchRequest::demo(3, 1);
            request.workerCommand = worker;
            request.sessionPath = file;
            request.options.eval.benchSamples = 10;
            QSignalSpy finished(first.searchController(), &SearchController::finished);
            QVERIFY(first.startSearch(request));
            QVERIFY(finished.wait(90000));
        }
        const auto done = nodesIn(file);
        QCOMPARE(done.size(), size_t(4));
        const int64_t lost = done.back().id;
        { // what a killed process leaves behind
            sqlite3 *db = nullptr;
            QCOMPARE(sqlite3_open(file.toUtf8().constData(), &db), SQLITE_OK);
            const std::string id = std::to_string(lost);
            std::string sql = "UPDATE sessions SET status = 'running'; UPDATE nodes SET status = 'running', finished_at = NULL WHERE id = " + id + ";";
            for (const char *table : {"compile_logs", "verifications", "timing_samples", "decisions"}) // no verdict yet
                sql += std::string(" DELETE FROM ") + table + " WHERE node_id = " + id + ";";
            QCOMPARE(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
            sqlite3_close(db);
        }
        MainWindow w;
        w.setDemoSettings(3, 1, worker);
        QCOMPARE(w.openSession(file), QString());
        QVERIFY(w.canResume());
        QVERIFY(!w.resumeSearch());
        QVERIFY2(w.lastSearchError().contains(QStringLiteral("still running")), qPrintable(w.lastSearchError()));
        QCOMPARE(nodesIn(file).size(), size_t(4)); // refused, nothing touched

        QSignalSpy finished(w.searchController(), &SearchController::finished);
        QVERIFY2(w.resumeSearch(true), qPrintable(w.lastSearchError()));
        QVERIFY(finished.wait(90000));
        const auto reason = finished.first().first().value<SearchProgress>().stopReason;
        QVERIFY2(reason == "node budget spent", qPrintable(QString::fromStdString(reason) + QStringLiteral(": ") + w.lastSearchError()));
        const auto after = nodesIn(file);
        QCOMPARE(after.size(), size_t(4));
        QCOMPARE(after.back().id, lost);
        QVERIFY2(after.back().status != "running", after.back().status.c_str());
        SessionStore store(file.toStdString(), SessionStore::Mode::ReadOnly);
        QCOMPARE(store.sessions()[0].status, std::string("finished"));
    }

    // File > Export pack from a real CPU session where a node was accepted by hand: the pack folder
    // gets its manifest and the window says which operator went in; a folder that is not empty is
    // refused with the reason and left as it was; a missing kforge-cli is named.
    void exportPackFromTheWindow()
    {
        const QString cliPath = exportCli();
        if (cliPath.isEmpty())
            QSKIP("kforge-cli is not built");
        const QString worker = liveWorker();
        if (worker.isEmpty())
            QSKIP("no kforge-worker: build it (KFORGE_BUILD_WORKER=ON) or set KFORGE_WORKER to one");
        MainWindow w;
        auto request = SearchRequest::demo(4, 1);
        request.workerCommand = worker;
        request.sessionPath = path("export.kforge");
        request.options.eval.benchSamples = 10;
        QSignalSpy finished(w.searchController(), &SearchController::finished);
        QVERIFY(w.startSearch(request));
        QVERIFY(finished.wait(90000));
        const auto nodes = nodesIn(request.sessionPath);
        const auto isStatus = [](VerdictStatus v) { return [v](const NodeRecord &n) { return n.status == statusName(v); }; };
        auto correct = std::find_if(nodes.begin(), nodes.end(), isStatus(VerdictStatus::NotFaster));
        if (correct == nodes.end())
            correct = std::find_if(nodes.begin(), nodes.end(), isStatus(VerdictStatus::Accepted));
        QVERIFY2(correct != nodes.end(), "the search found no correct node to accept");
        auto decide = [&](int64_t node, const char *decision, const char *reason) {
            QProcess cli;
            cli.start(cliPath, {QStringLiteral("decide"), QStringLiteral("--session"), request.sessionPath, QStringLiteral("--node"),
                                QString::number(node), QString::fromLatin1(decision), QStringLiteral("--reason"), QString::fromLatin1(reason)});
            QVERIFY(cli.waitForFinished(20000));
            QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
        };
        // The person's choice is what ships: the one accepted by hand, every other the guard accepted rejected.
        decide(correct->id, "--accept", "checked by hand");
        for (const auto &n : nodes)
            if (n.id != correct->id && n.status == statusName(VerdictStatus::Accepted))
                decide(n.id, "--reject", "not this one");

        QSignalSpy exported(w.packExporter(), &PackExporter::finished);
        const QString out = path("pack");
        QVERIFY(w.exportPack(out, cliPath));
        QVERIFY(!w.exportPack(path("pack2"), cliPath)); // one at a time
        QVERIFY(exported.wait(120000));
        QVERIFY2(w.lastExport().ok, qPrintable(w.lastExport().error));
        QVERIFY(QFile::exists(out + QStringLiteral("/manifest.json")));
        QCOMPARE(w.lastExport().included.size(), 1);
        QVERIFY2(w.lastExport().included[0].contains(QStringLiteral("node %1,").arg(correct->id)), qPrintable(w.lastExport().included[0]));
        QVERIFY(w.lastExport().text().contains(QStringLiteral("In the pack:")));

        // The same folder again: not empty, so refused, and the pack in it is untouched.
        const QByteArray manifest = test::readAll(out + QStringLiteral("/manifest.json"));
        exported.clear();
        QVERIFY(w.exportPack(out, cliPath));
        QVERIFY(exported.wait(60000));
        QVERIFY(!w.lastExport().ok);
        QVERIFY2(w.lastExport().error.contains(QStringLiteral("not empty")), qPrintable(w.lastExport().error));
        QCOMPARE(test::readAll(out + QStringLiteral("/manifest.json")), manifest);

        exported.clear();
        QVERIFY(w.exportPack(path("pack3"), path("no-such-cli")));
        QVERIFY(exported.wait(10000));
        QVERIFY(!w.lastExport().ok);
        QVERIFY2(w.lastExport().error.contains(path("no-such-cli")), qPrintable(w.lastExport().error));
    }

    void exportReportIsRead_data()
    {
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("out");
        QTest::addColumn<QString>("err");
        QTest::addColumn<QStringList>("included");
        QTest::addColumn<QStringList>("skipped");
        QTest::addColumn<QString>("error");
        QTest::newRow("one in, one skipped")
            << 0 << QStringLiteral("gelu_f32      skipped: no node was accepted\nsoftmax_f32   node 7, 1.42x, cpu (accepted by hand)\nwrote the pack /p: 1 kernel(s)\n")
            << QString() << QStringList{QStringLiteral("softmax_f32 node 7, 1.42x, cpu (accepted by hand)")}
            << QStringList{QStringLiteral("gelu_f32: no node was accepted")} << QString();
        QTest::newRow("refused") << 1 << QString() << QStringLiteral("kforge-cli export: the pack folder /p already exists and is not empty: choose a new one\n")
                                 << QStringList{} << QStringList{} << QStringLiteral("the pack folder /p already exists and is not empty: choose a new one");
        QTest::newRow("silent failure") << 3 << QString() << QString() << QStringList{} << QStringList{}
                                        << QStringLiteral("kforge-cli export failed (exit code 3) and said nothing");
    }

    void exportReportIsRead()
    {
        QFETCH(int, exitCode);
        QFETCH(QString, out);
        QFETCH(QString, err);
        const auto r = PackExportResult::fromCli(exitCode, out, err, QStringLiteral("/p"));
        QCOMPARE(r.ok, exitCode == 0);
        QTEST(r.included, "included");
        QTEST(r.skipped, "skipped");
        QTEST(r.error, "error");
    }
};

QTEST_MAIN(TestGui)
#include "tst_gui.moc"
