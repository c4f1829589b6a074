// The guard's rules on tables of measurements: numerics (errors in units against float64, ATen's own
// error, the floor, exact outputs), verification (trial reports to a status), timing (samples, floor and
// noise to a status).
#include <QtTest>

#include "guard/numerics.h"
#include "guard/timing.h"
#include "guard/verification.h"

using namespace kforge;

Q_DECLARE_METATYPE(kforge::guard::OutputErrors)

namespace {
guard::OutputErrors clean(double candidate, double aten)
{
    guard::OutputErrors e;
    e.name = "y";
    e.numel = 1000;
    e.candidateUnits = candidate;
    e.atenUnits = aten;
    e.worstIndex = 0;
    return e;
}
} // namespace

class TestGuard : public QObject {
    Q_OBJECT
private slots:
    void allowedUnits_data()
    {
        QTest::addColumn<double>("aten");
        QTest::addColumn<double>("allowed");
        QTest::newRow("ATen exact: the floor") << 0.0 << guard::kFloorUnits;
        QTest::newRow("ATen rounds once") << 0.5 << guard::kFloorUnits;
        QTest::newRow("ATen's scan error") << 3.0 << 3.0 * guard::kAtenFactor;
        QTest::newRow("ATen non-finite error ignored") << std::numeric_limits<double>::infinity() << guard::kFloorUnits;
    }
    void allowedUnits()
    {
        QFETCH(double, aten);
        QFETCH(double, allowed);
        QCOMPARE(guard::allowedUnits(aten), allowed);
    }

    void termsFactor()
    {
        QCOMPARE(guard::termsFactor(1), 1.0);
        QCOMPARE(guard::termsFactor(65536), 16.0);
        QVERIFY(guard::termsFactor(262144) > guard::termsFactor(4096));
    }

    void judgeOutput_data()
    {
        QTest::addColumn<guard::OutputErrors>("errors");
        QTest::addColumn<int>("model");
        QTest::addColumn<QString>("code"); // empty: passes
        QTest::addColumn<QString>("message");
        const int pw = int(ErrorModel::Pointwise), sum = int(ErrorModel::Sum), exact = int(ErrorModel::Exact);
        QTest::newRow("correct, as good as ATen") << clean(0.6, 0.5) << pw << QString() << QString();
        QTest::newRow("worse than ATen but under the floor") << clean(3.5, 0.5) << pw << QString() << QString();
        auto scan = clean(20.0, 3.0); // a different summation order than ATen's, within 8x of its error
        QTest::newRow("scan within 8x ATen") << scan << sum << QString() << QString();
        auto over = clean(40.0, 3.0);
        over.overBound = 126;
        over.worstGot = 0.00158;
        over.worstExpected = 0.00024;
        QTest::newRow("scan beyond 8x ATen") << over << sum << QStringLiteral("mismatch") << QStringLiteral("126 of 1000");
        auto unwritten = clean(0, 0);
        unwritten.unwritten = 7;
        QTest::newRow("unwritten elements") << unwritten << pw << QStringLiteral("output_not_written") << QStringLiteral("7 of 1000");
        auto nan = clean(0, 0);
        nan.nonFiniteMismatch = 3;
        nan.firstNonFinite = 12;
        QTest::newRow("NaN where ATen has none") << nan << pw << QStringLiteral("unexpected_nan_or_inf") << QStringLiteral("index 12");
        auto zeros = clean(3.0, 0.5); // a zero output can sit within the units where the reference is tiny
        zeros.candidateRelativeRms = 1.0;
        QTest::newRow("zeros: no closer than a constant") << zeros << pw << QStringLiteral("mismatch") << QStringLiteral("a constant");
        auto noise = zeros; // the output is rounding noise: ATen is as far from the reference, the units decide
        noise.atenRelativeRms = 1.0;
        QTest::newRow("zeros where ATen is as far") << noise << pw << QString() << QString();
        auto mismatch = clean(0, 0);
        mismatch.overBound = 2;
        mismatch.worstGot = 3;
        mismatch.worstAten = 4;
        QTest::newRow("exact output differs") << mismatch << exact << QStringLiteral("mismatch") << QStringLiteral("exact result in 2 of 1000");
        auto exactRms = clean(0, 0);
        exactRms.candidateRelativeRms = 1.0;
        QTest::newRow("exact output equal") << exactRms << exact << QString() << QString();
        auto order = clean(0, 0); // unwritten is said before anything else
        order.unwritten = 1;
        order.overBound = 5;
        QTest::newRow("unwritten before mismatch") << order << pw << QStringLiteral("output_not_written") << QString();
    }
    void judgeOutput()
    {
        QFETCH(guard::OutputErrors, errors);
        QFETCH(int, model);
        QFETCH(QString, code);
        QFETCH(QString, message);
        const auto r = guard::judgeOutput(errors, ErrorModel(model));
        if (code.isEmpty()) {
            QVERIFY2(!r, r ? r->message.c_str() : "");
            return;
        }
        QVERIFY(r);
        QCOMPARE(QString::fromStdString(r->code), code);
        QVERIFY2(QString::fromStdString(r->message).contains(message), r->message.c_str());
    }

    void finishVerification_data()
    {
        QTest::addColumn<QStringList>("failures"); // one per trial, empty string = passed
        QTest::addColumn<bool>("benchmark");
        QTest::addColumn<bool>("final");
        QTest::addColumn<QString>("status");
        QTest::addColumn<int>("reasons");
        QTest::newRow("all pass, benchmark next") << QStringList{QString(), QString()} << true << false << QStringLiteral("error") << 0;
        QTest::newRow("all pass, verify only") << QStringList{QString()} << false << true << QStringLiteral("not_faster") << 1;
        QTest::newRow("one mismatch") << QStringList{QString(), QStringLiteral("mismatch")} << true << true << QStringLiteral("incorrect") << 1;
        QTest::newRow("two kinds, one reason each")
            << QStringList{QStringLiteral("mismatch"), QStringLiteral("mismatch"), QStringLiteral("output_not_written")} << true << true
            << QStringLiteral("incorrect") << 2;
        QTest::newRow("a crash in a trial") << QStringList{QStringLiteral("worker_crashed")} << true << true << QStringLiteral("crashed") << 1;
        QTest::newRow("a timeout in a trial") << QStringList{QStringLiteral("timeout")} << true << true << QStringLiteral("timeout") << 1;
        QTest::newRow("a sandbox violation") << QStringList{QStringLiteral("sandbox_violation")} << true << true << QStringLiteral("incorrect")
                                              << 1;
    }
    void finishVerification()
    {
        QFETCH(QStringList, failures);
        QFETCH(bool, benchmark);
        QFETCH(bool, final);
        QFETCH(QString, status);
        QFETCH(int, reasons);
        Verdict v;
        for (const auto &f : failures) {
            TrialReport t;
            t.label = "trial";
            t.shape = "4x4";
            t.passed = f.isEmpty();
            t.failure = f.toStdString();
            v.trials.push_back(t);
        }
        EvalOptions o;
        o.benchmark = benchmark;
        QCOMPARE(guard::finishVerification(v, o), final);
        QCOMPARE(QString::fromStdString(statusName(v.status)), status);
        QCOMPARE(int(v.reasons.size()), reasons);
    }

    // Passing trials whose reference was never finite compared nothing; one finite element anywhere, or a
    // failed trial (its own reason), and there is nothing to add.
    void vacuousTrials_data()
    {
        QTest::addColumn<QString>("trials");
        QTest::addColumn<bool>("someFinite");
        QTest::addColumn<bool>("vacuous");
        QTest::newRow("all passed, never finite") << QStringLiteral("pp") << false << true;
        QTest::newRow("all passed, finite somewhere") << QStringLiteral("pp") << true << false;
        QTest::newRow("the last failed") << QStringLiteral("pf") << false << false;
        QTest::newRow("no trials") << QString() << false << false;
    }

    void vacuousTrials()
    {
        QFETCH(QString, trials);
        QFETCH(bool, someFinite);
        QFETCH(bool, vacuous);
        Verdict v;
        for (const auto c : trials) {
            TrialReport t;
            t.passed = c == QLatin1Char('p');
            v.trials.push_back(t);
        }
        const auto r = guard::vacuousTrials(v, someFinite);
        QCOMPARE(r.has_value(), vacuous);
        if (r) {
            QCOMPARE(r->code, std::string(reason::VacuousTrials));
            QVERIFY(r->message.find("on all 2 trials") != std::string::npos);
            QCOMPARE(guard::statusForFailure(r->code), VerdictStatus::Incorrect);
        }
    }

    void judgeTiming_data()
    {
        QTest::addColumn<double>("candidate");
        QTest::addColumn<double>("baseline");
        QTest::addColumn<double>("floor");
        QTest::addColumn<QString>("status");
        QTest::newRow("clear win") << 100.0 << 130.0 << 50.0 << QStringLiteral("accepted");
        QTest::newRow("inside the noise") << 100.0 << 101.0 << 50.0 << QStringLiteral("not_faster");
        QTest::newRow("slower") << 100.0 << 80.0 << 50.0 << QStringLiteral("not_faster");
        QTest::newRow("at the floor, beating it slightly") << 97.0 << 150.0 << 100.0 << QStringLiteral("accepted");
        QTest::newRow("far below the floor: fooled") << 50.0 << 150.0 << 100.0 << QStringLiteral("suspect");
        QTest::newRow("no floor known") << 10.0 << 150.0 << 0.0 << QStringLiteral("accepted");
    }
    void judgeTiming()
    {
        QFETCH(double, candidate);
        QFETCH(double, baseline);
        QFETCH(double, floor);
        QFETCH(QString, status);
        guard::TimingInput t;
        for (int i = 0; i < 9; ++i) { // a spread of 0.5% either side
            t.candidateUs.push_back(candidate * (1 + 0.001 * (i - 4)));
            t.baselineUs.push_back(baseline * (1 + 0.001 * (i - 4)));
        }
        t.floorUs = floor;
        t.method = "eager";
        Verdict v;
        guard::judgeTiming(t, v);
        QCOMPARE(QString::fromStdString(statusName(v.status)), status);
        QCOMPARE(v.speedup, v.baseline.summary.median / v.candidate.summary.median);
        QCOMPARE(v.noise, guard::kMinNoise); // the spread is under the minimum band
        QCOMPARE(v.rooflineUs, floor);
        if (status != QLatin1String("accepted"))
            QVERIFY(!v.reasons.empty());
    }

    void decideSpeed_data()
    {
        QTest::addColumn<double>("speedup");
        QTest::addColumn<double>("noise");
        QTest::addColumn<bool>("accepted");
        QTest::newRow("clear win") << 1.30 << 0.05 << true;
        QTest::newRow("inside the noise") << 1.04 << 0.05 << false;
        QTest::newRow("slower") << 0.80 << 0.02 << false;
        QTest::newRow("exactly at the band") << 1.05 << 0.05 << false;
    }
    void decideSpeed()
    {
        QFETCH(double, speedup);
        QFETCH(double, noise);
        QFETCH(bool, accepted);
        QCOMPARE(guard::decideSpeed(speedup, noise) == VerdictStatus::Accepted, accepted);
    }
};

QTEST_GUILESS_MAIN(TestGuard)
#include "tst_guard.moc"
