// Protocol v1 against the real worker: hello, and malformed or impossible requests that each get an
// error reply naming the problem while the worker keeps serving; candidates with any bytes in their
// source; the launch plan a source carries in its kforge-launch comment.
#include <QtTest>

#include <cmath>
#include <limits>

#include "ops/launch_comment.h"
#include "ops/operator_card.h"
#include "pool/worker_process.h"
#include "protocol/messages.h"
#include "protocol/verdict.h"
#include "test_support.h"
#include "util/error.h"

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
        // The real worker's CPU device, as a verdict names it.
        const auto label = deviceLabel(helloDevice(r, "cpu"));
        QVERIFY2(label.rfind("cpu ", 0) == 0 && label.size() > 4, label.c_str());
        QVERIFY(helloDevice(r, "rocm").is_null());
        // The CPU's copy rate is measured only when the hello asks (a campaign's plan), and then given; a
        // "measure" that is not a bool is not asking.
        QVERIFY(!helloDevice(r, "cpu").contains("copy_bandwidth_gbs"));
        const auto notAsked = roundTrip(R"({"id":2,"type":"hello","protocol":1,"measure":"yes"})");
        QVERIFY(!helloDevice(notAsked, "cpu").contains("copy_bandwidth_gbs"));
        auto asked = helloRequest(true);
        asked["id"] = 3;
        const auto measured = roundTrip(asked.dump());
        const double gbs = helloDevice(measured, "cpu").value("copy_bandwidth_gbs", 0.0);
        QVERIFY2(gbs > 0.1 && gbs < 10000, measured.dump().c_str());
    }

    // How a verdict names the device it ran on: one line from the hello's description.
    void deviceLabels_data()
    {
        QTest::addColumn<QString>("device"); // JSON
        QTest::addColumn<QString>("label");
        QTest::newRow("a GPU of several") << QStringLiteral(R"({"backend":"cuda","index":3,"name":"NVIDIA H200","sm":"sm_90","sms":132})")
                                          << QStringLiteral("cuda:3 NVIDIA H200 (sm_90)");
        QTest::newRow("the first GPU") << QStringLiteral(R"({"backend":"cuda","index":0,"name":"NVIDIA H200","sm":"sm_90"})")
                                       << QStringLiteral("cuda:0 NVIDIA H200 (sm_90)");
        QTest::newRow("a CPU") << QStringLiteral(R"({"backend":"cpu","name":"Intel Xeon","threads":2})") << QStringLiteral("cpu Intel Xeon");
        QTest::newRow("no backend") << QStringLiteral(R"({"name":"x"})") << QStringLiteral("device x");
        QTest::newRow("an index that is no number") << QStringLiteral(R"({"backend":"cuda","index":"1","name":"A"})") << QStringLiteral("cuda A");
        QTest::newRow("null") << QStringLiteral("null") << QString();
        QTest::newRow("an array") << QStringLiteral("[1]") << QString();
    }

    void deviceLabels()
    {
        QFETCH(QString, device);
        QFETCH(QString, label);
        QCOMPARE(QString::fromStdString(deviceLabel(nlohmann::json::parse(device.toStdString()))), label);
        // A hello with this device (and one of another backend first) gives it back for its backend.
        const auto d = nlohmann::json::parse(device.toStdString());
        if (d.is_object() && d.contains("backend")) {
            const nlohmann::json hello{{"devices", {{{"backend", "other"}}, d}}};
            QCOMPARE(helloDevice(hello, d["backend"].get<std::string>()), d);
        }
        QVERIFY(helloDevice(nlohmann::json{{"devices", 5}}, "cuda").is_null());
        QVERIFY(helloDevice(nlohmann::json(), "cuda").is_null());
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

    // A trial whose errors were not finite (an fp16 output that overflowed where the reference did not)
    // is written with null errors, JSON having no infinity: it reads back as an incorrect verdict with
    // infinite errors, not as a malformed one. A field of another type is still malformed.
    void nonFiniteErrorsReadBack()
    {
        Verdict v = failureVerdict(VerdictStatus::Incorrect, "mismatch", "output 'loss' has 1 NaN/Inf value");
        v.trials.push_back({"scale 64", "200x4096", false, std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::quiet_NaN(), "mismatch", "", std::numeric_limits<double>::infinity(), 0.0, 0.01});
        const nlohmann::json j = nlohmann::json::parse(nlohmann::json(v).dump()); // as it crosses the pipe
        QVERIFY(j.at("trials")[0].at("max_abs_error").is_null());
        const auto back = j.get<Verdict>();
        QCOMPARE(back.status, VerdictStatus::Incorrect);
        QVERIFY(std::isinf(back.trials.at(0).maxAbsError));
        QVERIFY(std::isinf(back.trials.at(0).candidateError));
        QCOMPARE(back.trials.at(0).allowedError, 0.01);
        auto bad = j;
        bad["trials"][0]["max_abs_error"] = "large";
        QVERIFY_THROWS_EXCEPTION(nlohmann::json::exception, (void)bad.get<Verdict>());
    }

    // A source is any bytes: UTF-8 travels as "source", anything else as "source_b64", and the
    // worker's from_json gives back the same bytes.
    void candidateCarriesAnyBytes_data()
    {
        QTest::addColumn<QByteArray>("source");
        QTest::addColumn<bool>("base64");
        QTest::newRow("ASCII") << QByteArray("int x;\n") << false;
        QTest::newRow("UTF-8") << QByteArray("// caf\xc3\xa9\n") << false;
        QTest::newRow("empty") << QByteArray() << false;
        QTest::newRow("Latin-1") << QByteArray("// caf\xe9\n") << true;
        QTest::newRow("a lone continuation byte") << QByteArray("a\x80z") << true;
        QTest::newRow("an overlong slash") << QByteArray("\xc0\xaf") << true;
        QTest::newRow("a surrogate") << QByteArray("\xed\xa0\x80") << true;
        QTest::newRow("a NUL and binary") << QByteArray("a\0b\xff\xfe", 5) << true;
        QTest::newRow("a cut sequence at the end") << QByteArray("ok\xe2\x82") << true;
    }

    void candidateCarriesAnyBytes()
    {
        QFETCH(QByteArray, source);
        QFETCH(bool, base64);
        Candidate c;
        c.backend = "cuda";
        c.source = source.toStdString();
        c.launch = {{"kernels", nlohmann::json::array()}};
        const nlohmann::json j = c;
        QCOMPARE(j.contains("source_b64"), base64);
        QCOMPARE(j.contains("source"), !base64);
        const auto back = nlohmann::json::parse(j.dump()).get<Candidate>();
        QVERIFY(back.source == c.source);
        QCOMPARE(back.backend, c.backend);
        QCOMPARE(back.launch, c.launch);
    }

    void badBase64IsAMalformedRequest()
    {
        const std::string card = nlohmann::json(makeSoftmaxCard(4, 8)).dump();
        const auto r = roundTrip(R"({"id":15,"type":"evaluate","card":)" + card + R"(,"candidate":{"backend":"cpu","source_b64":"@@@"}})");
        QCOMPARE(r.value("type", ""), std::string("error"));
        QVERIFY2(r.value("error", "").find("source_b64 is not base64") != std::string::npos, r.dump().c_str());
    }

    // The real worker compiles exactly the bytes it was sent.
    void workerEvaluatesANonUtf8Source()
    {
        auto cand = test::cpuKernel("good_softmax.cpp");
        cand.source += "\n// caf\xe9 \xff\n";
        EvalOptions o;
        o.benchmark = false;
        auto req = evaluateRequest(makeSoftmaxCard(8, 64), cand, o);
        req["id"] = 16;
        QVERIFY(req["candidate"].contains("source_b64"));
        const auto r = roundTrip(req.dump());
        QCOMPARE(r.value("type", ""), std::string("result"));
        const auto v = r.at("verdict").get<Verdict>();
        QVERIFY2(v.correct(), v.summaryLine().c_str());
    }

    void launchPlanComment_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("plan");  // JSON, or empty for none
        QTest::addColumn<QString>("error"); // the Error's message, or empty
        QTest::newRow("the test kernels' form") << QStringLiteral("/* kforge-launch\n{\"kernels\":[{\"name\":\"k\"}]}\n*/\nvoid k();")
                                               << QStringLiteral(R"({"kernels":[{"name":"k"}]})") << QString();
        QTest::newRow("on one line, after code") << QStringLiteral("int a; /*kforge-launch {\"kernels\":[]} */")
                                                << QStringLiteral(R"({"kernels":[]})") << QString();
        QTest::newRow("after another comment") << QStringLiteral("/* a kernel */\n/*  kforge-launch {\"workspace\":[]} */")
                                              << QStringLiteral(R"({"workspace":[]})") << QString();
        QTest::newRow("none") << QStringLiteral("__global__ void k() {}") << QString() << QString();
        QTest::newRow("the word in a line comment is not a plan") << QStringLiteral("// kforge-launch {\"kernels\":[]}\n") << QString() << QString();
        QTest::newRow("the word inside another comment is not a plan")
            << QStringLiteral("/* see kforge-launch */") << QString() << QString();
        QTest::newRow("not closed") << QStringLiteral("/* kforge-launch {\"kernels\":[]}") << QString() << QStringLiteral("is not closed");
        QTest::newRow("not JSON") << QStringLiteral("/* kforge-launch {kernels:} */") << QString() << QStringLiteral("does not hold valid JSON");
        QTest::newRow("not an object") << QStringLiteral("/* kforge-launch [1] */") << QString() << QStringLiteral("must hold a JSON object");
    }

    void launchPlanComment()
    {
        QFETCH(QString, source);
        QFETCH(QString, plan);
        QFETCH(QString, error);
        try {
            const auto got = launchPlanFromComment(source.toStdString());
            QVERIFY2(error.isEmpty(), "no error was raised");
            QCOMPARE(got.has_value(), !plan.isEmpty());
            if (got)
                QCOMPARE(*got, nlohmann::json::parse(plan.toStdString()));
        } catch (const Error &e) {
            QVERIFY2(!error.isEmpty() && QString::fromUtf8(e.what()).contains(error), e.what());
        }
    }

    // A prepare hint is never answered, whatever it holds, and the worker goes on serving: the next
    // reply read is the next request's. The hello lists the backends it compiles ahead for (none on
    // the CPU backend, whose compiler would share the cores the candidate is timed on) and how many at once.
    void prepareHintsGetNoReply()
    {
        const auto h = roundTrip(R"({"id":30,"type":"hello","protocol":1})");
        QVERIFY(h.contains("prepares") && h["prepares"].is_array());
        for (const auto &b : h["prepares"])
            QVERIFY2(b.get<std::string>() != "cpu", h.dump().c_str());
        // And how many it compiles at once, the most the pool tells it of ahead: none without such a backend.
        QVERIFY2(h.contains("prepare_threads") && h["prepare_threads"].is_number_integer(), h.dump().c_str());
        QCOMPARE(h["prepare_threads"].get<int>() > 0, !h["prepares"].empty());
        Candidate c;
        c.backend = "cpu";
        c.source = "int x;";
        QVERIFY(m_worker->writeLine(prepareRequest(c).dump()));
        QVERIFY(m_worker->writeLine(R"({"type":"prepare"})"));
        QVERIFY(m_worker->writeLine(R"({"type":"prepare","candidate":{"backend":"cuda","source_b64":"!!"}})"));
        const auto r = roundTrip(R"({"id":31,"type":"hello","protocol":1})");
        QCOMPARE(r.value("id", 0), 31);
        QCOMPARE(r.value("type", ""), std::string("hello"));
    }

    void blankLinesAreIgnoredAndShutdownSaysBye()
    {
        QVERIFY(m_worker->writeLine(""));
        const auto r = roundTrip(R"({"id":12,"type":"shutdown"})");
        QCOMPARE(r.value("type", ""), std::string("bye"));
        const auto how = m_worker->exitDescription(5000);
        QVERIFY2(how == "exited with status 0", how.c_str());
    }
};

QTEST_GUILESS_MAIN(TestProtocol)
#include "tst_protocol.moc"
