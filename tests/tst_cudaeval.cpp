// The CUDA guard's adversarial cases (tests/gpu/guard_cases.h) through a real worker, in CI builds. Where
// the worker has no cuda backend (no GPU, or a libtorch without CUDA) every test is skipped with the
// reason, so CI shows why. On GPU hosts without Qt, kforge-gpu-tests runs the same cases.
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>

#include "gpu/guard_cases.h"
#include "pool/worker_pool.h"
#include "test_support.h"

using namespace kforge;

class TestCudaEval : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_logs;
    std::unique_ptr<WorkerPool> m_pool;
    QString m_skip;

    static EvalOptions options(int deadlineMs = 60000)
    {
        EvalOptions o;
        o.benchSamples = 10;
        o.warmup = 2;
        o.deadlineMs = deadlineMs;
        return o;
    }

private slots:
    void initTestCase()
    {
        PoolOptions po(test::workerCommand(), 1);
        po.logDir = m_logs.path().toStdString();
        m_pool = std::make_unique<WorkerPool>(po);
        m_pool->start();
        const auto hello = m_pool->hellos().at(0);
        for (const auto &b : hello.value("backends", nlohmann::json::array()))
            if (b == "cuda")
                return;
        QByteArray why = test::readAll(m_logs.path() + QStringLiteral("/worker-0.log")).trimmed();
        if (why.isEmpty())
            why = "this kforge-worker was built without the cuda backend (its libtorch has no CUDA)";
        m_skip = QStringLiteral("no CUDA device: ") + QString::fromUtf8(why);
        qInfo("%s", qPrintable(m_skip));
    }

    void guard_data()
    {
        QTest::addColumn<int>("index");
        const auto cases = test::guardCases();
        for (size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(cases[i].name.c_str()) << int(i);
    }

    void guard()
    {
        if (!m_skip.isEmpty())
            QSKIP(qPrintable(m_skip));
        QFETCH(int, index);
        const auto c = test::guardCases().at(size_t(index));
        const Verdict v = m_pool->evaluate(test::caseCard(c), test::cudaKernel(c.kernel, c.dtype, c.plan), options(c.deadlineMs));
        const auto problem = test::checkVerdict(c, v);
        QVERIFY2(problem.empty(), problem.c_str());
        if (c.recovery) {
            QElapsedTimer t;
            t.start();
            const Verdict after = m_pool->evaluate(test::guardCard(DType::F32), test::cudaKernel("good_softmax.cu", DType::F32), options());
            QVERIFY2(after.correct(), after.summaryLine().c_str());
            QVERIFY2(t.elapsed() < 30000, qPrintable(QStringLiteral("recovery took %1 ms").arg(t.elapsed())));
        }
    }
};

QTEST_GUILESS_MAIN(TestCudaEval)
#include "tst_cudaeval.moc"
