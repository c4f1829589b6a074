// The profiler timeline and the operator table: the time-to-pixel mapping, zoom and pan, lanes and the
// merging of calls under a pixel as tables; a workload's cards tied to their call patterns, the rows
// of the operator table (share, headroom from a session's roofline, search status) and the
// before/after comparison; the model under QAbstractItemModelTester; the view drawing, hovering
// and highlighting a real workload file.
#include <QAbstractItemModelTester>
#include <QDockWidget>
#include <QMainWindow>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>

#include "ops/operator_card.h"
#include "store/session_store.h"
#include "ui/operator_table.h"
#include "ui/session_context.h"
#include "ui/timeline_geometry.h"
#include "ui/timeline_view.h"
#include "ui/workload_context.h"
#include "ui/workload_panels.h"
#include "ui/workload_profile.h"
#include "workload/workload_file.h"

using namespace kforge;
using namespace kforge::ui;

namespace {

// "0+10@0 10+5@1" -> calls starting at 0 for 10 us at depth 0, at 10 for 5 us at depth 1.
// An optional "#T" gives the thread: "0+10@0#2".
std::vector<TimelineCall> parseCalls(const QString &spec)
{
    std::vector<TimelineCall> out;
    for (const auto &tok : spec.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        TimelineCall c;
        const auto hash = tok.split(QLatin1Char('#'));
        const auto at = hash[0].split(QLatin1Char('@'));
        const auto plus = at[0].split(QLatin1Char('+'));
        c.startUs = plus[0].toDouble();
        c.durUs = plus[1].toDouble();
        c.depth = at.size() > 1 ? at[1].toInt() : 0;
        c.tid = hash.size() > 1 ? hash[1].toLongLong() : 0;
        out.push_back(c);
    }
    return out;
}

QStringList printLanes(const TimelineLanes &l)
{
    QStringList out;
    for (const auto &lane : l.lanes) {
        QStringList ids;
        for (size_t i : lane.calls)
            ids << QString::number(i);
        out << QStringLiteral("t%1 d%2: %3").arg(lane.tid).arg(lane.depth).arg(ids.join(QLatin1Char(',')));
    }
    return out;
}

QStringList printBoxes(const std::vector<TimelineBox> &boxes)
{
    QStringList out;
    for (const auto &b : boxes)
        out << QStringLiteral("L%1 %2-%3 #%4 x%5").arg(b.lane).arg(b.x0, 0, 'f', 1).arg(b.x1, 0, 'f', 1).arg(b.first).arg(b.count);
    return out;
}

CallArg tensorArg(std::vector<int64_t> shape, const char *name = "self")
{
    CallArg a;
    a.name = name;
    a.kind = "tensor";
    TensorMeta t;
    t.shape = std::move(shape);
    t.dtype = "float32";
    int64_t stride = 1;
    t.strides.assign(t.shape.size(), 1);
    for (size_t d = t.shape.size(); d-- > 0;) {
        t.strides[d] = stride;
        stride *= t.shape[d];
    }
    a.tensors.push_back(t);
    return a;
}

CapturedCall call(const char *op, std::vector<int64_t> shape, double start, double dur, int depth = 0)
{
    CapturedCall c;
    c.op = op;
    c.args = {tensorArg(std::move(shape))};
    c.startUs = start;
    c.durUs = dur;
    c.depth = depth;
    return c;
}

OperatorCard cardFor(const char *key, const char *op, int64_t calls, double ms, std::vector<int64_t> shape)
{
    OperatorCard c;
    c.key = key;
    c.atenOp = op;
    c.calls = calls;
    c.workloadMs = ms;
    TensorSpec in{"self", {}, DType::F32};
    TensorSpec out{"out0", {}, DType::F32};
    for (size_t d = 0; d < shape.size(); ++d) {
        const auto sym = "self_" + std::to_string(d);
        in.dims.push_back(sym);
        out.dims.push_back(sym);
        c.shape[sym] = shape[d];
    }
    c.inputs = {in};
    c.outputs = {out};
    return c;
}

// A workload as `kforge-cli profile` leaves it: gelu 3 calls (each with a nested call), softmax 2
// calls, a view op without a card. Times are made so the ranking is gelu 60, softmax 30, view 10.
WorkloadFile threeOps(double geluDur = 20, double softmaxDur = 15)
{
    WorkloadFile w;
    w.name = "three";
    w.model.kind = "torchscript";
    w.model.path = "three.pt";
    double t = 100;
    for (int i = 0; i < 3; ++i) {
        w.calls.push_back(call("aten::gelu", {64, 256}, t, geluDur));
        w.calls.push_back(call("aten::empty_like", {64, 256}, t + 1, 1, 1));
        t += geluDur + 1;
        if (i < 2) {
            w.calls.push_back(call("aten::softmax", {64, 128}, t, softmaxDur));
            t += softmaxDur + 1;
        }
    }
    w.calls.push_back(call("aten::t", {64, 64}, t, 10));
    w.cards = {cardFor("gelu.lastdim.float32.0", "aten::gelu", 3, 3 * geluDur / 1000, {64, 256}),
               cardFor("softmax.lastdim.float32.1", "aten::softmax", 2, 2 * softmaxDur / 1000, {64, 128})};
    w.skipped = {{"aten::t", "returns a view of its input: it moves no data"}};
    return w;
}

} // namespace

class TestTimeline : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    QString path(const char *name) const { return m_dir.filePath(QString::fromLatin1(name)); }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QStandardPaths::setTestModeEnabled(true);
    }

    void mapping_data()
    {
        QTest::addColumn<double>("start");
        QTest::addColumn<double>("end");
        QTest::addColumn<double>("width");
        QTest::addColumn<double>("t");
        QTest::addColumn<double>("x");
        QTest::newRow("fitted, left edge") << 0.0 << 1000.0 << 500.0 << 0.0 << 0.0;
        QTest::newRow("fitted, right edge") << 0.0 << 1000.0 << 500.0 << 1000.0 << 500.0;
        QTest::newRow("fitted, middle") << 0.0 << 1000.0 << 500.0 << 250.0 << 125.0;
        QTest::newRow("offset start") << 200.0 << 600.0 << 800.0 << 300.0 << 200.0;
        QTest::newRow("empty span shows a microsecond") << 5.0 << 5.0 << 100.0 << 5.5 << 50.0;
    }
    void mapping()
    {
        QFETCH(double, start);
        QFETCH(double, end);
        QFETCH(double, width);
        QFETCH(double, t);
        QFETCH(double, x);
        const auto m = fitMapping(start, end, width);
        QCOMPARE(m.x(t), x);
        QCOMPARE(m.us(x), t);
    }

    void zoomKeepsTheAnchor_data()
    {
        QTest::addColumn<double>("anchor");
        QTest::addColumn<double>("factor");
        QTest::addColumn<double>("usPerPixel");
        QTest::addColumn<double>("viewStart");
        // 0..1000 us over 1000 px: 1 us a pixel fitted.
        QTest::newRow("2x at the left edge") << 0.0 << 2.0 << 0.5 << 0.0;
        QTest::newRow("2x in the middle") << 500.0 << 2.0 << 0.5 << 250.0;
        QTest::newRow("4x at 750") << 750.0 << 4.0 << 0.25 << 562.5;
        QTest::newRow("zooming out stops at fitted") << 300.0 << 0.25 << 1.0 << 0.0;
        QTest::newRow("zooming in stops at a nanosecond a pixel") << 500.0 << 1e9 << kMinUsPerPixel << 499.5;
    }
    void zoomKeepsTheAnchor()
    {
        QFETCH(double, anchor);
        QFETCH(double, factor);
        QFETCH(double, usPerPixel);
        QFETCH(double, viewStart);
        const auto fitted = fitMapping(0, 1000, 1000);
        const auto m = zoomMapping(fitted, anchor, factor, 0, 1000, 1000);
        QCOMPARE(m.usPerPixel, usPerPixel);
        QCOMPARE(m.viewStartUs, viewStart);
        if (factor >= 1)
            QCOMPARE(m.us(anchor), fitted.us(anchor)); // the time under the cursor stays there
    }

    void panStaysInTheProfile_data()
    {
        QTest::addColumn<double>("dx");
        QTest::addColumn<double>("viewStart");
        // Zoomed 4x on 0..1000 over 1000 px: 250 us shown, the start may go from 0 to 750.
        QTest::newRow("right by 100 px") << 100.0 << 125.0;
        QTest::newRow("left past the start") << -1000.0 << 0.0;
        QTest::newRow("right past the end") << 10000.0 << 750.0;
        QTest::newRow("no move") << 0.0 << 100.0;
    }
    void panStaysInTheProfile()
    {
        QFETCH(double, dx);
        QFETCH(double, viewStart);
        const TimeMapping zoomed{100, 0.25};
        const auto m = panMapping(zoomed, dx, 0, 1000, 1000);
        QCOMPARE(m.viewStartUs, viewStart);
        QCOMPARE(m.usPerPixel, 0.25);
    }

    void lanes_data()
    {
        QTest::addColumn<QString>("calls");
        QTest::addColumn<bool>("byThread");
        QTest::addColumn<QStringList>("lanes");
        QTest::newRow("one lane per depth, in start order")
            << QStringLiteral("30+5@0 0+10@0 2+3@1 12+2@1") << false << QStringList{QStringLiteral("t0 d0: 1,0"), QStringLiteral("t0 d1: 2,3")};
        QTest::newRow("threads share a depth lane") << QStringLiteral("0+10@0#1 5+10@0#2") << false << QStringList{QStringLiteral("t0 d0: 0,1")};
        QTest::newRow("per thread and depth") << QStringLiteral("0+10@0#2 5+10@0#1 6+1@1#1") << true << QStringList{QStringLiteral("t1 d0: 1"), QStringLiteral("t1 d1: 2"), QStringLiteral("t2 d0: 0")};
        QTest::newRow("no calls") << QStringLiteral("") << false << QStringList{};
    }
    void lanes()
    {
        QFETCH(QString, calls);
        QFETCH(bool, byThread);
        QFETCH(QStringList, lanes);
        const auto c = parseCalls(calls);
        const auto l = assignLanes(c, byThread ? LaneBy::Thread : LaneBy::Depth);
        QCOMPARE(printLanes(l), lanes);
        for (size_t i = 0; i < c.size(); ++i) {
            const auto &ids = l.lanes[size_t(l.laneOf[i])].calls;
            QVERIFY(std::find(ids.begin(), ids.end(), i) != ids.end());
        }
    }

    void boxesMergeUnderAPixel_data()
    {
        QTest::addColumn<QString>("calls");
        QTest::addColumn<double>("viewStart");
        QTest::addColumn<double>("usPerPixel");
        QTest::addColumn<QStringList>("boxes");
        QTest::newRow("wide calls are their own boxes")
            << QStringLiteral("0+10 20+10") << 0.0 << 1.0 << QStringList{QStringLiteral("L0 0.0-10.0 #0 x1"), QStringLiteral("L0 20.0-30.0 #1 x1")};
        // 10 us a pixel: four 1-us calls in pixels 0 and 1 merge; the longest stands for them.
        QTest::newRow("narrow neighbours merge")
            << QStringLiteral("0+1 3+2 9+1 14+1 100+50") << 0.0 << 10.0 << QStringList{QStringLiteral("L0 0.0-1.5 #1 x4"), QStringLiteral("L0 10.0-15.0 #4 x1")};
        QTest::newRow("a merged box spans two pixel columns at most")
            << QStringLiteral("0+1 5+1 10+1 15+1 20+1 25+1") << 0.0 << 10.0 << QStringList{QStringLiteral("L0 0.0-1.6 #0 x4"), QStringLiteral("L0 2.0-2.6 #4 x2")};
        QTest::newRow("a gap of a pixel column splits them")
            << QStringLiteral("0+1 40+1") << 0.0 << 10.0 << QStringList{QStringLiteral("L0 0.0-0.1 #0 x1"), QStringLiteral("L0 4.0-4.1 #1 x1")};
        QTest::newRow("outside the view is skipped")
            << QStringLiteral("0+10 500+10 2000+10") << 400.0 << 1.0 << QStringList{QStringLiteral("L0 100.0-110.0 #1 x1")};
        QTest::newRow("a long call from before the view reaches in")
            << QStringLiteral("0+1000 1001+1") << 500.0 << 1.0 << QStringList{QStringLiteral("L0 -500.0-500.0 #0 x1"), QStringLiteral("L0 501.0-502.0 #1 x1")};
        QTest::newRow("lanes separately")
            << QStringLiteral("0+100 10+1@1 12+1@1") << 0.0 << 1.0 << QStringList{QStringLiteral("L0 0.0-100.0 #0 x1"), QStringLiteral("L1 10.0-11.0 #1 x1"), QStringLiteral("L1 12.0-13.0 #2 x1")};
    }
    void boxesMergeUnderAPixel()
    {
        QFETCH(QString, calls);
        QFETCH(double, viewStart);
        QFETCH(double, usPerPixel);
        QFETCH(QStringList, boxes);
        const auto c = parseCalls(calls);
        const auto l = assignLanes(c, LaneBy::Depth);
        QCOMPARE(printBoxes(layoutBoxes(c, l, {viewStart, usPerPixel}, 1000)), boxes);
    }

    void hitTest_data()
    {
        QTest::addColumn<QString>("calls");
        QTest::addColumn<double>("x");
        QTest::addColumn<int>("hit");
        QTest::newRow("inside") << QStringLiteral("0+10 20+10") << 25.0 << 1;
        QTest::newRow("in a gap, too far") << QStringLiteral("0+10 20+10") << 15.0 << -1;
        QTest::newRow("within the slack") << QStringLiteral("0+10 20+10") << 11.5 << 0;
        QTest::newRow("the shortest covering call") << QStringLiteral("0+100 40+5") << 42.0 << 1;
        QTest::newRow("past the end") << QStringLiteral("0+10") << 50.0 << -1;
    }
    void hitTest()
    {
        QFETCH(QString, calls);
        QFETCH(double, x);
        QFETCH(int, hit);
        const auto c = parseCalls(calls);
        const auto l = assignLanes(c, LaneBy::Thread);
        QCOMPARE(int(callAt(c, l.lanes[0], {0, 1}, x)), hit);
    }

    void ticksAndDurations_data()
    {
        QTest::addColumn<double>("usPerPixel");
        QTest::addColumn<double>("step");
        QTest::newRow("1 us a pixel: 100 us") << 1.0 << 100.0;
        QTest::newRow("0.3 us a pixel: 50 us") << 0.3 << 50.0;
        QTest::newRow("20 us a pixel: 2 ms") << 20.0 << 2000.0;
        QTest::newRow("a nanosecond a pixel: 100 ns") << 0.001 << 0.1;
    }
    void ticksAndDurations()
    {
        QFETCH(double, usPerPixel);
        QFETCH(double, step);
        QCOMPARE(tickStepUs(usPerPixel, 80), step);
        const auto ticks = tickTimes(130, 560, 100);
        QCOMPARE(ticks, (std::vector<double>{200, 300, 400, 500}));
        QCOMPARE(formatDuration(0.85), std::string("850 ns"));
        QCOMPARE(formatDuration(12.5), std::string("12.5 us"));
        QCOMPARE(formatDuration(3200), std::string("3.20 ms"));
        QCOMPARE(formatDuration(1.25e6), std::string("1.25 s"));
        QVERIFY(labelFits(60, 40));
        QVERIFY(!labelFits(44, 40));
    }

    void cardsFindTheirPatterns()
    {
        const WorkloadProfile p("three.json", threeOps());
        QCOMPARE(int(p.groups().size()), 3);
        QCOMPARE(p.topLevelUs(), 3 * 20.0 + 2 * 15.0 + 10.0);
        QCOMPARE(p.groupOfCard(0), 0L); // gelu, ranked first
        QCOMPARE(p.groupOfCard(1), 1L); // softmax
        QCOMPARE(p.cardOfGroup(2), -1L); // the view op has no card
        QCOMPARE(p.groupOfCall(1), -1L); // a nested call is in no pattern
        QCOMPARE(p.timeline().front().startUs, 0.0); // the axis starts at the first call
        QCOMPARE(int(p.lanes(LaneBy::Depth).lanes.size()), 2);
    }

    void operatorRowsWithoutASession()
    {
        const WorkloadProfile p("three.json", threeOps());
        const auto rows = operatorRows(p, nullptr);
        QCOMPARE(int(rows.size()), 2);
        QCOMPARE(rows[0].op, std::string("aten::gelu"));
        QCOMPARE(rows[0].calls, int64_t(3));
        QCOMPARE(rows[0].totalUs, 60.0);
        QCOMPARE(rows[0].share, 0.6);
        QCOMPARE(rows[0].shapes, std::string("64x256:float32"));
        QCOMPARE(rows[0].headroom, 0.0);
        QCOMPARE(rows[0].search, std::string("not searched"));
        QCOMPARE(rows[1].share, 0.3);
    }

    void operatorRowsFromASession()
    {
        // A session that searched the softmax card: its accepted node gives the status, and its
        // roofline floor (bytes over the copy rate) the rate for every card's headroom.
        const WorkloadFile w = threeOps();
        const QString file = path("searched.kforge");
        int64_t best = 0;
        {
            SessionStore s(file.toStdString());
            const auto sid = s.createSession({0, "softmax search", "three", "cpu", "templates", "finished", {}, 0});
            const auto op = s.addOperator(sid, w.cards[1]);
            NodeRecord root;
            root.sessionId = sid;
            root.operatorId = op;
            root.status = "baseline";
            const auto rootId = s.addNode(root, Candidate{"reference", "aten", nlohmann::json::object()});
            for (double speedup : {1.4, 2.5, 0.9}) {
                NodeRecord n;
                n.sessionId = sid;
                n.operatorId = op;
                n.parentId = rootId;
                const auto id = s.addNode(n, Candidate{"cpu", "// k", nlohmann::json::object()});
                Verdict v;
                v.status = speedup > 1 ? VerdictStatus::Accepted : VerdictStatus::NotFaster;
                v.speedup = speedup;
                // 64x128 floats in and out: 65,536 bytes; a floor of 6.5536 us is 10 GB/s.
                v.rooflineUs = 6.5536;
                v.baseline.samplesUs = {10, 10, 10};
                v.candidate.samplesUs = {10 / speedup, 10 / speedup, 10 / speedup};
                s.finishNode(id, v, std::log(speedup));
                if (speedup == 2.5)
                    best = id;
            }
        }
        const auto snap = SessionSnapshot::read(file.toStdString());
        QCOMPARE(sessionBandwidth(*snap), 1e10);
        const WorkloadProfile p("three.json", w);
        const auto rows = operatorRows(p, snap.get());
        QCOMPARE(rows[1].key, std::string("softmax.lastdim.float32.1"));
        QCOMPARE(rows[1].search, QStringLiteral("accepted 2.50x (#%1)").arg(best).toStdString());
        QCOMPARE(rows[1].bestNode, best);
        // A softmax call takes 15 us against a 6.5536 us floor.
        QCOMPARE(rows[1].headroom, 15.0 / 6.5536);
        // gelu: 64x256 floats in and out, 131,072 bytes = 13.1072 us at 10 GB/s; a call takes 20 us.
        QCOMPARE(rows[0].search, std::string("not searched"));
        QCOMPARE(rows[0].headroom, 20.0 / 13.1072);
    }

    void comparisonMarksChangedOperators_data()
    {
        QTest::addColumn<double>("geluAfter");
        QTest::addColumn<double>("softmaxAfter");
        QTest::addColumn<QStringList>("changes");
        QTest::newRow("gelu 4x faster")
            << 5.0 << 15.0 << QStringList{QStringLiteral("aten::gelu 60->15 changed"), QStringLiteral("aten::softmax 30->30"), QStringLiteral("aten::t 10->10")};
        QTest::newRow("softmax slower") << 20.0 << 30.0
                                        << QStringList{QStringLiteral("aten::gelu 60->60"), QStringLiteral("aten::t 10->10"), QStringLiteral("aten::softmax 30->60 changed")};
        QTest::newRow("within 5% is unchanged") << 20.5 << 15.5 << QStringList{QStringLiteral("aten::t 10->10"), QStringLiteral("aten::softmax 30->31"), QStringLiteral("aten::gelu 60->61.5")};
    }
    void comparisonMarksChangedOperators()
    {
        QFETCH(double, geluAfter);
        QFETCH(double, softmaxAfter);
        QFETCH(QStringList, changes);
        const WorkloadProfile before("b.json", threeOps()), after("a.json", threeOps(geluAfter, softmaxAfter));
        const auto c = compareProfiles(before, after);
        QStringList got;
        for (const auto &o : c.operators)
            got << QStringLiteral("%1 %2->%3%4")
                       .arg(QString::fromStdString(o.op))
                       .arg(o.beforeUs)
                       .arg(o.afterUs)
                       .arg(o.changed ? QStringLiteral(" changed") : QString());
        QCOMPARE(got, changes);
        QCOMPARE(c.beforeUs, 100.0);
        QCOMPARE(c.afterUs, 3 * geluAfter + 2 * softmaxAfter + 10);
        QVERIFY(c.find(before.groups()[0].signature));
        // A move under half the profile's time is no change when half is the least that counts.
        const auto coarse = compareProfiles(before, after, 0.05, 0.5);
        QVERIFY(std::none_of(coarse.operators.begin(), coarse.operators.end(), [](const OperatorChange &o) { return o.changed; }));
    }

    void modelPassesTheModelTester()
    {
        WorkloadContext workload;
        SessionContext session;
        OperatorTable table(&workload, &session);
        QAbstractItemModelTester tester(table.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(table.model()->rowCount(), 0);
        workload.setProfiles(std::make_shared<const WorkloadProfile>("three.json", threeOps()));
        QCOMPARE(table.model()->rowCount(), 2);
        QCOMPARE(table.model()->columnCount(), int(OperatorColumn::Count));
        QCOMPARE(table.model()->index(0, int(OperatorColumn::Share)).data().toString(), QStringLiteral("60.0%"));
        QCOMPARE(table.model()->index(1, int(OperatorColumn::Total)).data().toString(), QStringLiteral("30.0 us"));
        QCOMPARE(table.model()->index(0, int(OperatorColumn::Headroom)).data().toString(), QStringLiteral("—"));
        // Selecting a row selects the card; selecting the card elsewhere selects the row.
        QSignalSpy selected(&workload, &WorkloadContext::cardSelected);
        table.view()->selectRow(1);
        QCOMPARE(workload.selectedCard(), QStringLiteral("softmax.lastdim.float32.1"));
        QVERIFY(!workload.selectedSignature().empty());
        workload.selectCard(QStringLiteral("gelu.lastdim.float32.0"));
        QCOMPARE(table.view()->selectionModel()->currentIndex().row(), 0);
        workload.selectCard(QStringLiteral("no.such.card"));
        QCOMPARE(workload.selectedCard(), QStringLiteral("gelu.lastdim.float32.0")); // a stale key changes nothing
        workload.setProfiles(nullptr);
        QCOMPARE(table.model()->rowCount(), 0);
    }

    void viewDrawsHoversAndHighlights()
    {
        const QString before = path("view.json"), after = path("view-pack.json");
        saveWorkloadFile(threeOps(), before.toStdString());
        saveWorkloadFile(threeOps(5, 15), after.toStdString());
        QMainWindow window;
        WorkloadPanels panels(&window, new SessionContext(&window));
        window.resize(1200, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QCOMPARE(panels.openAndWait(before), QString());
        QVERIFY(panels.timelineDock()->isVisible());
        auto *view = panels.timeline();
        view->viewport()->repaint();
        // Fitted over ~1200 px, 100 us of calls: every call is wide enough for its own box, with a label.
        QCOMPARE(view->lastFrame().boxes, 9);
        QVERIFY(view->lastFrame().labels >= 3);
        QCOMPARE(view->lastFrame().markers, 0);

        // Hovering a gelu box names it with its shapes and time.
        const auto &m = view->mapping();
        const int laneY = view->trackRect(0).top() + 20 + 9;
        const QPoint overGelu(int(m.x(10)), laneY);
        const auto [track, hit] = view->callAtPoint(overGelu);
        QCOMPARE(track, 0);
        QCOMPARE(hit, 0L);
        const QString tip = view->describeCall(track, hit);
        QVERIFY2(tip.contains(QStringLiteral("aten::gelu")) && tip.contains(QStringLiteral("64x256:float32"))
                     && tip.contains(QStringLiteral("20.0 us")) && tip.contains(QStringLiteral("gelu.lastdim.float32.0")),
                 qPrintable(tip));

        // A click on it selects its card; the table follows and the timeline outlines its 3 calls.
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, overGelu);
        QCOMPARE(panels.context()->selectedCard(), QStringLiteral("gelu.lastdim.float32.0"));
        QCOMPARE(panels.table()->view()->selectionModel()->currentIndex().row(), 0);
        view->viewport()->repaint();
        QCOMPARE(view->lastFrame().highlighted, 3);

        // The profile with the pack goes under it; gelu changed, so its 3 boxes in each track are marked.
        QCOMPARE(panels.openAndWait(after, true), QString());
        QVERIFY(view->trackRect(1).top() > view->trackRect(0).bottom());
        view->viewport()->repaint();
        QCOMPARE(view->lastFrame().boxes, 18);
        QCOMPARE(view->lastFrame().markers, 6);
        QCOMPARE(view->lastFrame().highlighted, 6);

        // Zooming in about a point keeps its time there; zoomed far out is fitted again.
        const double t = view->mapping().us(300);
        view->zoomAt(300, 8);
        QVERIFY(std::abs(view->mapping().us(300) - t) < 1e-6);
        view->zoomAt(300, 1e-6);
        QCOMPARE(view->mapping().viewStartUs, 0.0);

        // A file that is not a profiled workload: a specific error, the one shown stays.
        const QString bare = path("bare.json");
        {
            std::ofstream out(bare.toStdString());
            out << R"({"kforge_workload": 1, "model": {"kind": "torchscript", "path": "m.pt"}})";
        }
        const QString error = panels.openAndWait(bare);
        QVERIFY2(error.contains(QStringLiteral("no profiled calls")) && error.contains(QStringLiteral("kforge-cli profile")), qPrintable(error));
        QCOMPARE(QString::fromStdString(panels.context()->profile()->file().name), QStringLiteral("three"));
        QVERIFY(panels.openAndWait(path("missing.json")).contains(QStringLiteral("cannot read")));
    }

    void manyCallsMergeWhenZoomedOut()
    {
        // 100,000 calls of 1-3 us: fitted, the frame draws a few boxes per pixel column at most.
        WorkloadFile w;
        w.name = "many";
        w.model.kind = "torchscript";
        w.model.path = "many.pt";
        double t = 0;
        for (int i = 0; i < 100000; ++i) {
            w.calls.push_back(call(i % 3 ? "aten::add" : "aten::mul", {1024}, t, 1 + i % 3));
            t += 4;
        }
        WorkloadContext context;
        TimelineView view(&context);
        view.resize(1000, 200);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        context.setProfiles(std::make_shared<const WorkloadProfile>("many.json", std::move(w)));
        view.viewport()->repaint();
        QVERIFY2(view.lastFrame().boxes <= 2 * view.viewport()->width(), qPrintable(QString::number(view.lastFrame().boxes)));
        QVERIFY(view.lastFrame().mergedCalls > 99000);
        view.zoomAt(0, 1e6); // a nanosecond a pixel: a call or two in view, each its own box
        view.viewport()->repaint();
        QVERIFY(view.lastFrame().boxes >= 1 && view.lastFrame().boxes <= 2);
        QCOMPARE(view.lastFrame().mergedCalls, 0);
    }
};

QTEST_MAIN(TestTimeline)
#include "tst_timeline.moc"
