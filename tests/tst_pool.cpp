// The worker pool with real workers: a worker that faults, hangs, or is killed mid-request is
// restarted, the request gets a verdict naming what happened, and later requests still run.
#include <QElapsedTimer>
#include <QtTest>
#include <csignal>
#include <future>
#include <set>
#include <thread>

#include "ops/operator_card.h"
#include "pool/worker_pool.h"
#include "test_support.h"
#include "util/error.h"

using namespace kforge;

class TestPool : public QObject {
    Q_OBJECT
private:
    static EvalOptions quick(int deadlineMs = 60000)
    {
        EvalOptions o;
        o.benchSamples = 5;
        o.warmup = 1;
        o.deadlineMs = deadlineMs;
        return o;
    }
    const OperatorCard m_card = makeSoftmaxCard(64, 256);

private slots:
    void faultIsReportedAndWorkerRestarted()
    {
        WorkerPool pool({test::workerCommand(), 1});
        std::vector<PoolEvent> events;
        std::mutex mu;
        pool.setEventSink([&](const PoolEvent &e) { std::lock_guard l(mu); events.push_back(e); });
        pool.start();
        const Verdict crashed = pool.evaluate(m_card, test::cpuKernel("crash.cpp"), quick());
        QCOMPARE(crashed.status, VerdictStatus::Crashed);
        QCOMPARE(crashed.reasons.front().code, std::string(reason::Crashed));
        QVERIFY2(crashed.reasons.front().message.find("signal 11") != std::string::npos, crashed.reasons.front().message.c_str());
        const Verdict after = pool.evaluate(m_card, test::cpuKernel("good_softmax.cpp"), quick());
        QVERIFY2(after.correct(), after.summaryLine().c_str());
        QCOMPARE(pool.restarts(), 1);
        std::lock_guard l(mu);
        QVERIFY(std::any_of(events.begin(), events.end(), [](auto &e) { return e.kind == "crashed"; }));
        QVERIFY(std::any_of(events.begin(), events.end(), [](auto &e) { return e.kind == "restarted"; }));
    }

    void hangIsStoppedByTheDeadline()
    {
        WorkerPool pool({test::workerCommand(), 1});
        pool.start();
        QElapsedTimer timer;
        timer.start();
        const Verdict hung = pool.evaluate(m_card, test::cpuKernel("hang.cpp"), quick(3000));
        QCOMPARE(hung.status, VerdictStatus::Timeout);
        QVERIFY(hung.reasons.front().message.find("3000 ms") != std::string::npos);
        QVERIFY(timer.elapsed() < 20000);
        const Verdict after = pool.evaluate(m_card, test::cpuKernel("good_softmax.cpp"), quick());
        QVERIFY2(after.correct(), after.summaryLine().c_str());
    }

    void workerKilledMidRequest()
    {
        WorkerPool pool({test::workerCommand(), 1});
        pool.start();
        const auto pids = pool.pids();
        QCOMPARE(pids.size(), size_t(1));
        auto pending = std::async(std::launch::async, [&] { return pool.evaluate(m_card, test::cpuKernel("slow_correct.cpp"), quick()); });
        // Queue more work behind it: it must run on the restarted worker.
        auto queued = std::async(std::launch::async, [&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            return pool.evaluate(m_card, test::cpuKernel("good_softmax.cpp"), quick());
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(1200)); // compiled, now sleeping inside the kernel
        QCOMPARE(::kill(pids[0], SIGKILL), 0);
        const Verdict killed = pending.get();
        QCOMPARE(killed.status, VerdictStatus::Crashed);
        QVERIFY2(killed.reasons.front().message.find("signal 9") != std::string::npos, killed.reasons.front().message.c_str());
        const Verdict next = queued.get();
        QVERIFY2(next.correct(), next.summaryLine().c_str());
        QVERIFY(pool.pids().front() != pids[0]);
    }

    void severalWorkersRunAtOnce()
    {
        WorkerPool pool({test::workerCommand(), 2});
        pool.start();
        QCOMPARE(pool.size(), 2);
        std::vector<std::future<Verdict>> results;
        for (int i = 0; i < 4; ++i)
            results.push_back(std::async(std::launch::async, [&] { return pool.evaluate(m_card, test::cpuKernel("good_softmax.cpp"), quick()); }));
        std::set<std::string> workers;
        for (auto &r : results) {
            const auto v = r.get();
            QVERIFY(v.correct());
            workers.insert(v.worker);
        }
        QCOMPARE(workers.size(), size_t(2));
    }

    void badCommandFailsClearly()
    {
        WorkerPool pool({"/nonexistent/kforge-worker", 1});
        try {
            pool.start();
            QFAIL("a pool with no worker started");
        } catch (const Error &e) {
            QVERIFY2(std::string(e.what()).find("no worker could be started") != std::string::npos, e.what());
            QVERIFY2(std::string(e.what()).find("exited with status 127") != std::string::npos, e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestPool)
#include "tst_pool.moc"
