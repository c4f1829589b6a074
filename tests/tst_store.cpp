// The session store: round trips, migrations, and refusing files that are not ours or are too new,
// without changing a byte of them.
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>
#include <sqlite3.h>

#include "store/llm_calls.h"
#include "store/schema.h"
#include "store/session_store.h"
#include "store/sqlite_util.h"
#include "test_support.h"
#include "util/error.h"

using namespace kforge;

class TestStore : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString path(const char *name) { return m_dir.filePath(QString::fromLatin1(name)); }

    static Verdict sampleVerdict()
    {
        Verdict v;
        v.status = VerdictStatus::Accepted;
        v.compile = {true, false, 412.5, "ptxas info: 32 registers", "sm_90"};
        v.trials = {{"scale 1", "256x1024", true, 1e-8, 1e-6, "", ""}, {"held-out rows=7", "7x1027", true, 2e-8, 3e-6, "", ""}};
        v.candidate.samplesUs = {10, 11, 12, 10.5};
        v.baseline.samplesUs = {20, 21, 22, 20.5};
        v.speedup = 2.0;
        v.noise = 0.03;
        v.worker = "kforge-worker@test";
        v.device = "cuda:1 NVIDIA H200 (sm_90)";
        return v;
    }

private slots:
    void newFileHasCurrentSchema()
    {
        SessionStore s(path("new.kforge").toStdString());
        QCOMPARE(s.schemaVersion(), schema::kCurrentVersion);
    }

    void roundTrip()
    {
        const auto file = path("roundtrip.kforge").toStdString();
        int64_t child = 0;
        {
            SessionStore s(file);
            SessionInfo info{0, "demo", "demo-attention", "cpu", "templates", "running", {{"nodes", 3}}, 0};
            const auto sid = s.createSession(info);
            const auto op = s.addOperator(sid, makeSoftmaxCard(256, 1024));
            NodeRecord root;
            root.sessionId = sid;
            root.operatorId = op;
            root.status = "baseline";
            const auto rootId = s.addNode(root, Candidate{"reference", "aten::_softmax", {}});
            NodeRecord n = root;
            n.parentId = rootId;
            n.status = "running";
            n.expansion = "repair";
            n.templateId = "cpu.softmax.online";
            n.params = {{"lanes", 8}};
            n.selection = {{"rule", "uct"}, {"uct", 1.25}, {"runner_up_uct", nullptr}};
            child = s.addNode(n, Candidate{"cpu", "int kforge_entry();", {}});
            s.finishNode(child, sampleVerdict(), 0.69);
            s.addDecision(child, "accept", "guard", "2x");
            s.addDecision(child, "reject", "user:ana", "numerics look fragile");
            s.addProfile(child, {{"tool", "ncu"}, {"memory_throughput_pct", 91.5}});
            QVERIFY_THROWS_EXCEPTION(Error, s.addDecision(child, "maybe", "guard", ""));
        }
        SessionStore r(file, SessionStore::Mode::ReadOnly);
        const auto sessions = r.sessions();
        QCOMPARE(sessions.size(), size_t(1));
        QCOMPARE(sessions[0].options.value("nodes", 0), 3);
        QCOMPARE(r.operators(sessions[0].id).front().card.key, std::string("softmax.lastdim.float32"));
        const auto nodes = r.nodes(sessions[0].id);
        QCOMPARE(nodes.size(), size_t(2));
        QCOMPARE(nodes[1].expansion, std::string("repair"));
        QCOMPARE(nodes[1].status, std::string("accepted"));
        QCOMPARE(nodes[1].selection.value("uct", 0.0), 1.25);
        QVERIFY(nodes[1].selection.at("runner_up_uct").is_null());
        QVERIFY(nodes[0].selection.empty()); // the root was not selected
        const auto rootDetail = r.nodeDetail(nodes[0].id); // the baseline has no verdict, but opens
        QVERIFY(rootDetail.has_value());
        QCOMPARE(rootDetail->candidate.source, std::string("aten::_softmax"));
        const auto d = r.nodeDetail(child);
        QVERIFY(d.has_value());
        QCOMPARE(d->candidate.source, std::string("int kforge_entry();"));
        QCOMPARE(d->verdict.compile.log, std::string("ptxas info: 32 registers"));
        QCOMPARE(d->verdict.trials.size(), size_t(2));
        QCOMPARE(d->verdict.trials[1].shape, std::string("7x1027"));
        QCOMPARE(d->verdict.candidate.samplesUs.size(), size_t(4));
        QCOMPARE(d->verdict.baseline.summary.median, 20.75);
        QCOMPARE(d->verdict.device, std::string("cuda:1 NVIDIA H200 (sm_90)"));
        QCOMPARE(nodes[1].device, std::string("cuda:1 NVIDIA H200 (sm_90)"));
        QCOMPARE(nodes[0].device, std::string()); // the baseline is not evaluated on its own
        QCOMPARE(d->decisions.size(), size_t(2));
        QCOMPARE(d->decisions[1].actor, std::string("user:ana"));
        QCOMPARE(d->profile.value("memory_throughput_pct", 0.0), 91.5);
        QVERIFY(rootDetail->profile.is_null());
        QVERIFY_THROWS_EXCEPTION(Error, r.setSessionStatus(sessions[0].id, "finished"));
    }

    void migratesVersionOneFile()
    {
        const auto file = path("v1.kforge").toStdString();
        sqlite3 *db = nullptr;
        QCOMPARE(sqlite3_open(file.c_str(), &db), SQLITE_OK);
        schema::migrate(db, 1);
        sql::exec(db, "INSERT INTO sessions(name, workload, backend, proposer, created_at) VALUES('old', 'w', 'cpu', 'templates', 1)");
        QCOMPARE(sql::pragmaInt(db, "user_version"), int64_t(1));
        sqlite3_close(db);

        SessionStore s(file);
        QCOMPARE(s.schemaVersion(), schema::kCurrentVersion);
        QCOMPARE(s.sessions().front().name, std::string("old"));
        s.addWorkerEvent(s.sessions().front().id, 0, "crashed", "killed by signal 9");
        QCOMPARE(s.workerEvents(s.sessions().front().id).size(), size_t(1));
    }

    // Version 5 adds the LLM call log; a version 4 session keeps its nodes and gains the table.
    void migratesVersionFourFileToTheCallLog()
    {
        const auto file = path("v4.kforge").toStdString();
        sqlite3 *db = nullptr;
        QCOMPARE(sqlite3_open(file.c_str(), &db), SQLITE_OK);
        schema::migrate(db, 4);
        sql::exec(db, "INSERT INTO sessions(name, workload, backend, proposer, created_at) VALUES('v4', 'w', 'cpu', 'templates', 1)");
        QCOMPARE(sql::pragmaInt(db, "user_version"), int64_t(4));
        sqlite3_close(db);

        SessionStore s(file);
        QCOMPARE(s.schemaVersion(), schema::kCurrentVersion);
        const auto sid = s.sessions().front().id;
        const auto op = s.addOperator(sid, makeSoftmaxCard(4, 8));
        NodeRecord n;
        n.sessionId = sid;
        n.operatorId = op;
        const auto node = s.addNode(n, Candidate{"cpu", "int x;", nlohmann::json::object()});

        LlmCallLog log(s, true);
        LlmCallRecord c;
        c.sessionId = sid;
        c.operatorId = op;
        c.provider = "openai";
        c.model = "gpt-4.1";
        c.purpose = "first";
        c.request = R"({"model":"gpt-4.1"})";
        c.response = "{}";
        c.outcome = "ok";
        c.inputTokens = 1000;
        c.outputTokens = 500;
        c.cost = 0.006;
        const auto a = log.add(c);
        c.outcome = "no_code";
        c.cost = 0.004;
        log.add(c); // a call no node came of
        log.attach({a}, node);
        QCOMPARE(log.nodeCalls(node).size(), size_t(1));
        QCOMPARE(log.nodeCalls(node).front().request, c.request);
        QCOMPARE(log.nodeTotals(node).calls, 1);
        QCOMPARE(log.operatorTotals(op).calls, 2);
        QCOMPARE(log.sessionTotals(sid).inputTokens, int64_t(2000));
        QVERIFY(std::abs(log.sessionTotals(sid).cost - 0.010) < 1e-12);

        // Readers see it through their own connection.
        SessionStore reader(file, SessionStore::Mode::ReadOnly);
        LlmCallLog readLog(reader, false);
        QCOMPARE(readLog.calls(sid).size(), size_t(2));
        QVERIFY_THROWS_EXCEPTION(Error, readLog.add(c));
    }

    // Version 6 stores each node's selection scores; a version 5 session's nodes read back with none.
    void migratesVersionFiveFileToSelectionScores()
    {
        const auto file = path("v5.kforge").toStdString();
        sqlite3 *db = nullptr;
        QCOMPARE(sqlite3_open(file.c_str(), &db), SQLITE_OK);
        schema::migrate(db, 5);
        sql::exec(db, "INSERT INTO sessions(name, workload, backend, proposer, created_at) VALUES('v5', 'w', 'cpu', 'templates', 1)");
        sql::exec(db, "INSERT INTO operators(session_id, key, card_json) VALUES(1, 'k', '{}')");
        sql::exec(db, "INSERT INTO nodes(session_id, operator_id, status, created_at) VALUES(1, 1, 'baseline', 1)");
        sqlite3_close(db);

        SessionStore s(file);
        QCOMPARE(s.schemaVersion(), schema::kCurrentVersion);
        const auto old = s.nodes(1);
        QCOMPARE(old.size(), size_t(1));
        QVERIFY(old.front().selection.is_object() && old.front().selection.empty());
        NodeRecord n;
        n.sessionId = 1;
        n.operatorId = 1;
        n.parentId = old.front().id;
        n.selection = {{"rule", "widening"}, {"visits", 3}};
        const auto id = s.addNode(n, Candidate{"cpu", "int x;", nlohmann::json::object()});
        QCOMPARE(s.nodeDetail(id)->node.selection.value("visits", 0), 3);
    }

    void readOnlyRefusesOldSchema()
    {
        const auto file = path("v1-ro.kforge").toStdString();
        sqlite3 *db = nullptr;
        sqlite3_open(file.c_str(), &db);
        schema::migrate(db, 1);
        sqlite3_close(db);
        try {
            SessionStore s(file, SessionStore::Mode::ReadOnly);
            QFAIL("an old schema opened read-only");
        } catch (const Error &e) {
            QVERIFY2(std::string(e.what()).find("schema 1") != std::string::npos, e.what());
        }
    }

    void refusesForeignFiles_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("expected");
        QTest::newRow("text file") << QStringLiteral("text") << QStringLiteral("not a SQLite database");
        QTest::newRow("other application's database") << QStringLiteral("foreign") << QStringLiteral("another application");
        QTest::newRow("newer kforge") << QStringLiteral("newer") << QStringLiteral("newer kforge");
        QTest::newRow("a session cut short") << QStringLiteral("cut") << QStringLiteral("is damaged: its database is malformed");
    }

    void refusesForeignFiles()
    {
        QFETCH(QString, kind);
        QFETCH(QString, expected);
        const QString file = path("refuse-") + kind;
        const auto f = file.toStdString();
        if (kind == QStringLiteral("text")) {
            QFile out(file);
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write(QByteArray("model weights, not a session\n").repeated(200));
        } else {
            sqlite3 *db = nullptr;
            QCOMPARE(sqlite3_open(f.c_str(), &db), SQLITE_OK);
            if (kind == QStringLiteral("foreign")) {
                sql::exec(db, "CREATE TABLE contacts(name TEXT); INSERT INTO contacts VALUES('x')");
            } else if (kind == QStringLiteral("cut")) {
                schema::migrate(db);
            } else {
                schema::migrate(db);
                sql::exec(db, "PRAGMA user_version = 99");
            }
            sqlite3_close(db);
            if (kind == QStringLiteral("cut")) // a copy that stopped inside its first page
                QVERIFY(QFile::resize(file, 3000));
        }
        const QByteArray before = test::readAll(file);
        const auto mtime = QFileInfo(file).lastModified();
        for (auto mode : {SessionStore::Mode::ReadWrite, SessionStore::Mode::ReadOnly}) {
            try {
                SessionStore s(f, mode);
                QFAIL("the file was opened");
            } catch (const Error &e) {
                QVERIFY2(QString::fromStdString(e.what()).contains(expected), e.what());
            }
        }
        QCOMPARE(test::readAll(file), before);
        QCOMPARE(QFileInfo(file).lastModified(), mtime);
        QVERIFY(!QFileInfo::exists(file + QStringLiteral("-wal")));
    }

    void missingFileReadOnly()
    {
        QVERIFY_THROWS_EXCEPTION(Error, SessionStore(path("absent.kforge").toStdString(), SessionStore::Mode::ReadOnly));
    }
};

QTEST_GUILESS_MAIN(TestStore)
#include "tst_store.moc"
