// The CPU guard: a correct kernel passes every trial and is timed against the baseline; each kind of
// wrong kernel is rejected with its own reason.
#include <QtTest>

#include "ops/operator_card.h"
#include "ops/trial_plan.h"
#include "pool/worker_pool.h"
#include "test_support.h"

using namespace kforge;

class TestCpuEval : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<WorkerPool> m_pool;
    const OperatorCard m_card = makeSoftmaxCard(128, 1024);

    Verdict eval(const char *kernel)
    {
        EvalOptions o;
        o.benchSamples = 9;
        o.warmup = 2;
        return m_pool->evaluate(m_card, test::cpuKernel(kernel), o);
    }

private slots:
    void initTestCase()
    {
        m_pool = std::make_unique<WorkerPool>(PoolOptions{test::workerCommand(), 1});
        m_pool->start();
    }

    void correctKernelPassesAndIsTimed()
    {
        const Verdict v = eval("good_softmax.cpp");
        QVERIFY2(v.correct(), v.summaryLine().c_str());
        QVERIFY(v.compile.ok);
        QCOMPARE(v.trials.size(), trialPlan(m_card).size());
        for (const auto &t : v.trials)
            QVERIFY2(t.passed, t.detail.c_str());
        QCOMPARE(v.candidate.samplesUs.size(), size_t(9));
        QCOMPARE(v.baseline.samplesUs.size(), size_t(9));
        QVERIFY(v.candidate.summary.median > 0 && v.baseline.summary.median > 0);
        QCOMPARE(v.speedup, v.baseline.summary.median / v.candidate.summary.median);
        QVERIFY(v.noise >= 0.02);
        // Accepted exactly when it beat the baseline by more than the noise.
        QCOMPARE(v.status == VerdictStatus::Accepted, v.speedup > 1.0 + v.noise);
        // The second evaluation of the same source comes from the compile cache.
        QVERIFY(eval("good_softmax.cpp").compile.cached);
    }

    void rejections_data()
    {
        QTest::addColumn<QString>("kernel");
        QTest::addColumn<QString>("status");
        QTest::addColumn<QString>("reason");
        QTest::addColumn<QString>("message");
        QTest::newRow("wrong values") << QStringLiteral("wrong_unnormalized.cpp") << QStringLiteral("incorrect") << QStringLiteral("mismatch") << QStringLiteral("differs from the reference");
        QTest::newRow("writes only the first row") << QStringLiteral("partial_first_row.cpp") << QStringLiteral("incorrect") << QStringLiteral("output_not_written") << QStringLiteral("were never written");
        QTest::newRow("changes its input") << QStringLiteral("modifies_input.cpp") << QStringLiteral("incorrect") << QStringLiteral("input_modified") << QStringLiteral("input 'x' was modified");
        QTest::newRow("hard-coded row length") << QStringLiteral("fixed_shape.cpp") << QStringLiteral("incorrect") << QStringLiteral("") << QStringLiteral("held-out");
        QTest::newRow("overflows to NaN") << QStringLiteral("naive_overflow.cpp") << QStringLiteral("incorrect") << QStringLiteral("unexpected_nan_or_inf") << QStringLiteral("scale 64");
        QTest::newRow("does not compile") << QStringLiteral("compile_error.cpp") << QStringLiteral("compile_error") << QStringLiteral("compile_error") << QStringLiteral("undeclared_rows");
        QTest::newRow("no entry point") << QStringLiteral("no_entry.cpp") << QStringLiteral("compile_error") << QStringLiteral("missing_entry_point") << QStringLiteral("kforge_entry");
    }

    void rejections()
    {
        QFETCH(QString, kernel);
        QFETCH(QString, status);
        QFETCH(QString, reason);
        QFETCH(QString, message);
        const Verdict v = eval(kernel.toUtf8().constData());
        QCOMPARE(QString::fromStdString(statusName(v.status)), status);
        QVERIFY(!v.correct());
        QVERIFY(!v.reasons.empty());
        if (!reason.isEmpty())
            QCOMPARE(QString::fromStdString(v.reasons.front().code), reason);
        QString all;
        for (const auto &r : v.reasons)
            all += QString::fromStdString(r.message) + QLatin1Char('\n');
        QVERIFY2(all.contains(message), qPrintable(all));
        QVERIFY(v.candidate.samplesUs.empty()); // a rejected kernel is never benchmarked
    }

    void heldOutShapesCatchHardCodedKernels()
    {
        const Verdict v = eval("fixed_shape.cpp");
        // It passes at the captured shape and fails only where the shape differs.
        for (const auto &t : v.trials)
            QCOMPARE(t.passed, t.label.rfind("held-out", 0) != 0);
    }
};

QTEST_GUILESS_MAIN(TestCpuEval)
#include "tst_cpueval.moc"
