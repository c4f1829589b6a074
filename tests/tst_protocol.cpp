// Protocol v1 against the real worker: hello, and malformed or impossible requests that each get an
// error reply naming the problem while the worker keeps serving.
#include <QtTest>

#include "ops/operator_card.h"
#include "pool/worker_process.h"
#include "protocol/messages.h"
#include "protocol/verdict.h"
#include "test_support.h"

using namespace kforge;

class TestProtocol : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<WorkerProcess> m_worker;

    nlohmann::json roundTrip(const std::string &line)
    {
        if (!m_worker->writeLine(line))
            return {{"transport", "write failed"}};
        std::string reply;
        if (m_worker->readLine(reply, 30000) != WorkerProcess::Read::Line)
            return {{"transport", "no reply: " + m_worker->exitDescription()}};
        return nlohmann::json::parse(reply);
    }

private slots:
    void initTestCase()
    {
        m_worker = std::make_unique<WorkerProcess>(test::workerCommand(), QDir::temp().filePath(QStringLiteral("tst_protocol.log")).toStdString());
        m_worker->start();
    }

    void hello()
    {
        auto r = roundTrip(R"({"id":1,"type":"hello","protocol":1})");
        QCOMPARE(r.value("type", ""), std::string("hello"));
        QCOMPARE(r.value("protocol", 0), kProtocolVersion);
        QVERIFY(r.at("backends").size() >= 1);
        QCOMPARE(r.at("backends")[0].get<std::string>(), std::string("cpu"));
        QVERIFY(r.value("worker", "").find("kforge-worker@") == 0);
    }

    void malformed_data()
    {
        QTest::addColumn<QString>("line");
        QTest::addColumn<QString>("id");
        QTest::addColumn<QString>("error");
        QTest::newRow("not JSON") << QStringLiteral("{this is not json") << QStringLiteral("null") << QStringLiteral("not valid JSON");
        QTest::newRow("not an object") << QStringLiteral("[1,2,3]") << QStringLiteral("null") << QStringLiteral("expected a JSON object");
        QTest::newRow("no type") << QStringLiteral(R"({"id":5})") << QStringLiteral("5") << QStringLiteral("no \"type\"");
        QTest::newRow("unknown type") << QStringLiteral(R"({"id":6,"type":"teleport"})") << QStringLiteral("6") << QStringLiteral("unknown request type 'teleport'");
        QTest::newRow("wrong protocol") << QStringLiteral(R"({"id":7,"type":"hello","protocol":99})") << QStringLiteral("7") << QStringLiteral("speaks protocol 1");
        QTest::newRow("evaluate without card") << QStringLiteral(R"({"id":8,"type":"evaluate"})") << QStringLiteral("8") << QStringLiteral("malformed evaluate request");
        const std::string card = nlohmann::json(makeSoftmaxCard(4, 8)).dump();
        QTest::newRow("unknown backend")
            << QString::fromStdString(R"({"id":9,"type":"evaluate","card":)" + card + R"(,"candidate":{"backend":"hip","source":""}})")
            << QStringLiteral("9") << QStringLiteral("no 'hip' backend");
        QTest::newRow("profile a cpu candidate")
            << QString::fromStdString(R"({"id":13,"type":"profile","card":)" + card + R"(,"candidate":{"backend":"cpu","source":""}})")
            << QStringLiteral("13") << QStringLiteral("profiling needs a cuda candidate");
        QTest::newRow("profile without a card") << QStringLiteral(R"({"id":14,"type":"profile"})") << QStringLiteral("14")
                                                << QStringLiteral("malformed profile request");
        QTest::newRow("card with no outputs")
            << QStringLiteral(R"({"id":10,"type":"evaluate","card":{"key":"k","family":"softmax","aten_op":"aten::_softmax","reference_args":[],"inputs":[{"name":"x","dims":["n"],"dtype":"float32"}],"outputs":[],"shape":{"n":4}},"candidate":{"source":""}})")
            << QStringLiteral("10") << QStringLiteral("at least one input and one output");
    }

    void malformed()
    {
        QFETCH(QString, line);
        QFETCH(QString, id);
        QFETCH(QString, error);
        const auto r = roundTrip(line.toStdString());
        QCOMPARE(r.value("type", ""), std::string("error"));
        QCOMPARE(r.value("ok", true), false);
        QCOMPARE(QString::fromStdString(r.value("id", nlohmann::json()).dump()), id);
        QVERIFY2(QString::fromStdString(r.value("error", "")).contains(error), r.dump().c_str());
        // The worker survived and still answers.
        const auto h = roundTrip(R"({"id":100,"type":"hello","protocol":1})");
        QCOMPARE(h.value("type", ""), std::string("hello"));
    }

    void unknownReferenceOperator()
    {
        auto card = makeSoftmaxCard(4, 8);
        card.atenOp = "aten::no_such_op";
        auto req = evaluateRequest(card, test::cpuKernel("good_softmax.cpp"), EvalOptions{});
        req["id"] = 11;
        const auto r = roundTrip(req.dump());
        QCOMPARE(r.value("type", ""), std::string("result"));
        const auto v = r.at("verdict").get<Verdict>();
        QCOMPARE(v.status, VerdictStatus::Error);
        QVERIFY(v.reasons.front().message.find("aten::no_such_op") != std::string::npos);
    }

    void blankLinesAreIgnoredAndShutdownSaysBye()
    {
        QVERIFY(m_worker->writeLine(""));
        const auto r = roundTrip(R"({"id":12,"type":"shutdown"})");
        QCOMPARE(r.value("type", ""), std::string("bye"));
        QCOMPARE(m_worker->exitDescription(5000), std::string("exited with status 0"));
    }
};

QTEST_GUILESS_MAIN(TestProtocol)
#include "tst_protocol.moc"
