// Workers started locally, through Slurm's srun and over ssh behave the same to the pool: they answer,
// a fault in one is reported and the worker restarted, and the pool keeps several of them busy.
// The srun and ssh rows need a local Slurm and sshd (tools/ci/start-local-*.sh, started by
// packaging/test.sh); without them they skip and say why.
#include <QProcess>
#include <QThread>
#include <QtTest>
#include <csignal>
#include <set>
#include <future>

#include "ops/operator_card.h"
#include "pool/worker_pool.h"
#include "test_support.h"

using namespace kforge;

class TestTransport : public QObject {
    Q_OBJECT
private:
    static std::string prefixFor(const QString &transport, QString &why)
    {
        if (transport == QStringLiteral("local"))
            return {};
        const char *var = transport == QStringLiteral("srun") ? "KFORGE_TEST_SRUN" : "KFORGE_TEST_SSH";
        const QByteArray v = qgetenv(var);
        if (v.isEmpty())
            why = QStringLiteral("%1 is not set: no local %2 to start workers through (run tools/ci/start-local-%3.sh as root)")
                      .arg(QString::fromLatin1(var), transport, transport == QStringLiteral("srun") ? QStringLiteral("slurm") : QStringLiteral("sshd"));
        return v.toStdString();
    }

    static EvalOptions quick()
    {
        EvalOptions o;
        o.benchSamples = 3;
        o.warmup = 1;
        o.deadlineMs = 60000;
        return o;
    }

private slots:
    void sameBehaviour_data()
    {
        QTest::addColumn<QString>("transport");
        QTest::newRow("local") << QStringLiteral("local");
        QTest::newRow("srun") << QStringLiteral("srun");
        QTest::newRow("ssh") << QStringLiteral("ssh");
    }

    void sameBehaviour()
    {
        QFETCH(QString, transport);
        QString why;
        const std::string prefix = prefixFor(transport, why);
        if (!why.isEmpty())
            QSKIP(qPrintable(why));
        const std::string command = prefix.empty() ? test::workerCommand() : prefix + " " + test::workerCommand();
        {
        WorkerPool pool({command, 2});
        pool.start();
        QCOMPARE(pool.size(), 2);
        QCOMPARE(pool.hellos().size(), size_t(2)); // both workers came up
        for (const auto &h : pool.hellos())
            QCOMPARE(h.value("protocol", 0), kProtocolVersion);
        const auto card = makeSoftmaxCard(32, 256);

        // A crashing candidate dies in its sandbox; the worker lives on.
        const Verdict crashed = pool.evaluate(card, test::cpuKernel("crash.cpp"), quick());
        QCOMPARE(crashed.status, VerdictStatus::Crashed);
        QCOMPARE(crashed.reasons.front().code, std::string(reason::Crashed));
        QCOMPARE(pool.restarts(), 0);
        // A worker that dies (here: its local end killed, the worker, srun or ssh) is restarted.
        ::kill(pool.pids().front(), SIGKILL);
        QTest::qWait(200);

        std::vector<std::future<Verdict>> results;
        for (int i = 0; i < 4; ++i)
            results.push_back(std::async(std::launch::async, [&] { return pool.evaluate(card, test::cpuKernel("good_softmax.cpp"), quick()); }));
        std::set<std::string> workers;
        for (auto &r : results) {
            const Verdict v = r.get();
            QVERIFY2(v.correct(), v.summaryLine().c_str());
            workers.insert(v.worker);
        }
        QCOMPARE(workers.size(), size_t(2)); // both workers took work, the restarted one included
        QCOMPARE(pool.restarts(), 1);
        }
        // Shutting the pool down leaves no worker running on the cluster.
        if (transport == QStringLiteral("srun")) {
            QString left;
            for (int i = 0; i < 50; ++i) {
                QProcess q;
                q.start(QStringLiteral("squeue"), {QStringLiteral("-h"), QStringLiteral("-o"), QStringLiteral("%i %j %T")});
                QVERIFY(q.waitForFinished(10000));
                left = QString::fromLocal8Bit(q.readAllStandardOutput()).trimmed();
                if (left.isEmpty())
                    break;
                QThread::msleep(200);
            }
            QVERIFY2(left.isEmpty(), qPrintable(QStringLiteral("jobs left on the cluster: ") + left));
        }
    }
};

QTEST_GUILESS_MAIN(TestTransport)
#include "tst_transport.moc"
