// The GUI over real session files: a stored session is drawn node for node and its nodes inspect
// correctly; a file that is not a session is refused without being changed; a live search through
// the real worker grows the tree on screen and can be stopped.
#include <QFile>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <sqlite3.h>

#include "ops/operator_card.h"
#include "store/session_store.h"
#include "test_support.h"
#include "ui/main_window.h"
#include "ui/node_inspector.h"
#include "ui/node_item.h"
#include "ui/search_controller.h"
#include "ui/session_context.h"
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
    v.trials = {{"scale 1", "256x1024", true, 1e-8, 2e-6, "", ""},
                {"scale 8", "256x1024", true, 3e-8, 4e-6, "", ""},
                {"held-out rows=7", "7x1027", true, 1e-8, 1e-6, "", ""}};
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
    s.finishNode(c, failureVerdict(VerdictStatus::CompileError, reason::CompileError, "expected ')' before '{'"), -1);
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
        QCOMPARE(table->item(1, 5)->text(), QStringLiteral("mismatch: max rel error 0.3 at row 17"));
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

    void refusesFileThatIsNotASession_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("message");
        QTest::newRow("text file") << QStringLiteral("text") << QStringLiteral("not a kforge session");
        QTest::newRow("another application's database") << QStringLiteral("sqlite") << QStringLiteral("not a kforge session");
        QTest::newRow("newer kforge") << QStringLiteral("newer") << QStringLiteral("newer kforge");
        QTest::newRow("missing file") << QStringLiteral("missing") << QStringLiteral("no such file");
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
        // Nothing lost: the file is byte for byte what it was, the open session is still shown.
        QCOMPARE(test::readAll(file), before);
        QCOMPARE(QFile::exists(file), kind != QStringLiteral("missing"));
        QCOMPARE(w.context()->snapshot(), shown);
        QCOMPARE(w.context()->selectedNode(), selected);
        QCOMPARE(w.treeView()->nodeItemCount(), int(m_session.nodeCount));
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
};

QTEST_MAIN(TestGui)
#include "tst_gui.moc"
