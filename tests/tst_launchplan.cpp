// The CUDA launch plan: its expression language, and the plans it refuses, each with a message that
// says which kernel and which field is wrong.
#include <QtTest>

#include "ops/operator_card.h"
#include "util/error.h"
#include "worker/cuda/launch_plan.h"

using namespace kforge;
using namespace kforge::worker;
using J = nlohmann::json;

namespace {

const ShapeBindings kShape = {{"rows", 4096}, {"cols", 1000}, {"zero", 0}};

J goodPlan()
{
    return J::parse(R"J({"kernels":[{"name":"softmax_rows","grid":["ceil_div(rows, 4)",1,1],"block":[128,1,1],
        "shared_bytes":"0","args":["in:x","out:y","sym:rows","sym:cols","ws:tmp"]}],
        "workspace":[{"name":"tmp","bytes":"rows*4"}]})J");
}

} // namespace

class TestLaunchPlan : public QObject {
    Q_OBJECT
private slots:
    void expressions_data()
    {
        QTest::addColumn<QString>("expr");
        QTest::addColumn<qlonglong>("value");
        QTest::newRow("integer") << QStringLiteral("42") << 42LL;
        QTest::newRow("symbol") << QStringLiteral("rows") << 4096LL;
        QTest::newRow("precedence") << QStringLiteral("2 + 3 * 4") << 14LL;
        QTest::newRow("parentheses") << QStringLiteral("(2 + 3) * 4") << 20LL;
        QTest::newRow("left associative") << QStringLiteral("100 - 10 - 1") << 89LL;
        QTest::newRow("division truncates") << QStringLiteral("cols / 3") << 333LL;
        QTest::newRow("remainder") << QStringLiteral("cols % 7") << 6LL;
        QTest::newRow("unary minus") << QStringLiteral("-3 + 5") << 2LL;
        QTest::newRow("ceil_div exact") << QStringLiteral("ceil_div(rows, 4)") << 1024LL;
        QTest::newRow("ceil_div rounds up") << QStringLiteral("ceil_div(cols, 128)") << 8LL;
        QTest::newRow("ceil_div of zero") << QStringLiteral("ceil_div(zero, 32)") << 0LL;
        QTest::newRow("min") << QStringLiteral("min(rows, cols, 2048)") << 1000LL;
        QTest::newRow("max") << QStringLiteral("max(1, cols / 256)") << 3LL;
        QTest::newRow("nested") << QStringLiteral("min(ceil_div(rows * cols, 256 * 8), 132 * 16)") << 2000LL;
        QTest::newRow("spaces") << QStringLiteral("  rows*cols  ") << 4096000LL;
        QTest::newRow("bytes of a workspace") << QStringLiteral("rows * ceil_div(cols, 512) * 8") << 65536LL;
    }

    void expressions()
    {
        QFETCH(QString, expr);
        QFETCH(qlonglong, value);
        QCOMPARE(qlonglong(evalExpression(expr.toStdString(), kShape)), value);
    }

    void badExpressions_data()
    {
        QTest::addColumn<QString>("expr");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown symbol") << QStringLiteral("rows * batch") << QStringLiteral("unknown symbol 'batch'");
        QTest::newRow("unknown function") << QStringLiteral("floor_div(rows, 2)") << QStringLiteral("unknown function 'floor_div'");
        QTest::newRow("division by zero") << QStringLiteral("rows / zero") << QStringLiteral("division by zero");
        QTest::newRow("remainder by zero") << QStringLiteral("rows % zero") << QStringLiteral("remainder by zero");
        QTest::newRow("ceil_div by zero") << QStringLiteral("ceil_div(rows, zero)") << QStringLiteral("divisor must be positive");
        QTest::newRow("ceil_div arity") << QStringLiteral("ceil_div(rows)") << QStringLiteral("takes 2 arguments");
        QTest::newRow("overflow") << QStringLiteral("rows * rows * rows * rows * rows * rows") << QStringLiteral("overflows 64 bits");
        QTest::newRow("trailing junk") << QStringLiteral("rows 4") << QStringLiteral("unexpected '4'");
        QTest::newRow("unbalanced") << QStringLiteral("(rows + 1") << QStringLiteral("missing ')'");
        QTest::newRow("empty") << QStringLiteral("") << QStringLiteral("empty");
        QTest::newRow("dangling operator") << QStringLiteral("rows +") << QStringLiteral("ends where a value was expected");
        QTest::newRow("floating point") << QStringLiteral("rows * 0.5") << QStringLiteral("unexpected '.'");
    }

    void badExpressions()
    {
        QFETCH(QString, expr);
        QFETCH(QString, message);
        try {
            evalExpression(expr.toStdString(), kShape);
            QFAIL("no error");
        } catch (const Error &e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(message), e.what());
        }
    }

    void goodPlanResolves()
    {
        const auto card = makeSoftmaxCard(4096, 1000);
        const auto plan = parseLaunchPlan(goodPlan(), card);
        QCOMPARE(plan.kernels.size(), size_t(1));
        const auto r = resolveLaunchPlan(plan, card.shape);
        QCOMPARE(r.kernels[0].grid[0], 1024u);
        QCOMPARE(r.kernels[0].block[0], 128u);
        QCOMPARE(r.kernels[0].args.size(), size_t(5));
        QCOMPARE(r.kernels[0].args[2].value, int64_t(4096));
        QCOMPARE(r.kernels[0].args[3].value, int64_t(1000));
        QCOMPARE(r.kernels[0].args[4].kind, PlanArg::Kind::Workspace);
        QCOMPARE(r.workspaceBytes.at(0), int64_t(4096 * 4));
        // The same plan at a held-out shape.
        const auto h = resolveLaunchPlan(plan, {{"rows", 7}, {"cols", 33}});
        QCOMPARE(h.kernels[0].grid[0], 2u);
    }

    void clustersResolve()
    {
        const auto card = makeSoftmaxCard(4096, 1000);
        const auto plan = parseLaunchPlan(J::parse(R"J({"kernels":[{"name":"k","grid":["rows * 4"],"block":[256],
            "cluster":[4],"shared_bytes":"min(ceil_div(cols, 4) * 4, 1024)","args":[]}]})J"), card);
        const auto r = resolveLaunchPlan(plan, card.shape);
        QCOMPARE(r.kernels[0].clusterBlocks(), int64_t(4));
        QCOMPARE(r.kernels[0].grid[0], 4096u * 4);
        QCOMPARE(r.kernels[0].sharedBytes, 1000u);
        DeviceLimits noClusters;
        noClusters.maxClusterBlocks = 0;
        try {
            resolveLaunchPlan(plan, card.shape, noClusters);
            QFAIL("a cluster launch was accepted on a device without clusters");
        } catch (const Error &e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("allows no clusters")), e.what());
        }
    }

    void persistentGridUsesTheDevicesSmCount()
    {
        // sm_count is the device's, not the card's: the same plan gives a grid per device.
        const auto card = makeSoftmaxCard(4096, 1000);
        const auto plan = parseLaunchPlan(J::parse(R"J({"kernels":[{"name":"k","grid":["min(rows, sm_count * 4)"],"block":[256],
            "args":["i64:sm_count"]}]})J"), card);
        DeviceLimits small;
        small.smCount = 10;
        const auto r = resolveLaunchPlan(plan, card.shape, small);
        QCOMPARE(r.kernels[0].grid[0], 40u);
        QCOMPARE(r.kernels[0].args.at(0).value, int64_t(10));
        QCOMPARE(resolveLaunchPlan(plan, {{"rows", 7}, {"cols", 33}}, small).kernels[0].grid[0], 7u);
        QCOMPARE(resolveLaunchPlan(plan, card.shape).kernels[0].grid[0], 132u * 4); // Hopper's default
    }

    void scalarArguments()
    {
        const auto card = makeSoftmaxCard(64, 256);
        const auto plan = parseLaunchPlan(J::parse(R"J({"kernels":[{"name":"k","grid":"rows","block":256,
            "args":["i32:cols / 4","i64:rows * cols","f32:0.5"]}]})J"), card);
        const auto r = resolveLaunchPlan(plan, card.shape);
        QCOMPARE(r.kernels[0].grid[0], 64u);
        QCOMPARE(r.kernels[0].grid[1], 1u);
        QCOMPARE(r.kernels[0].args[0].value, int64_t(64));
        QCOMPARE(r.kernels[0].args[1].value, int64_t(64 * 256));
        QCOMPARE(r.kernels[0].args[2].f32, 0.5f);
    }

    void invalidPlans_data()
    {
        QTest::addColumn<QString>("plan");
        QTest::addColumn<QString>("message");
        auto row = [](const char *name, const char *plan, const char *msg) {
            QTest::newRow(name) << QString::fromUtf8(plan) << QString::fromUtf8(msg);
        };
        row("not an object", R"J([1,2])J", "expected a JSON object");
        row("no kernels", R"J({"kernels":[]})J", "non-empty array");
        row("no name", R"J({"kernels":[{"grid":[1],"block":[32],"args":[]}]})J", "kernel 0 needs a \"name\"");
        row("name not an identifier", R"J({"kernels":[{"name":"soft max","grid":[1],"block":[32],"args":[]}]})J", "C identifier");
        row("too many threads", R"J({"kernels":[{"name":"k","grid":[1],"block":[1024,2,1],"args":[]}]})J",
            "kernel 0 'k' block has 2048 threads (1024 x 2 x 1); this device allows at most 1024 per block");
        row("block.z too large", R"J({"kernels":[{"name":"k","grid":[1],"block":[1,1,65],"args":[]}]})J", "block.z = 65");
        row("zero block", R"J({"kernels":[{"name":"k","grid":[1],"block":["cols - 1000"],"args":[]}]})J", "block.x = 0 (from 'cols - 1000')");
        row("grid.y too large", R"J({"kernels":[{"name":"k","grid":[1,"rows * 16",1],"block":[32],"args":[]}]})J",
            "grid.y = 65536 (from 'rows * 16'); this device allows 1 to 65535");
        row("empty grid", R"J({"kernels":[{"name":"k","grid":["rows / 8192"],"block":[32],"args":[]}]})J", "grid.x = 0 (from 'rows / 8192')");
        row("negative grid", R"J({"kernels":[{"name":"k","grid":["rows - 5000"],"block":[32],"args":[]}]})J", "grid.x = -904");
        row("too much shared memory", R"J({"kernels":[{"name":"k","grid":[1],"block":[32],"shared_bytes":"cols * 256","args":[]}]})J",
            "shared_bytes = 256000; this device allows 0 to 232448");
        row("unknown input", R"J({"kernels":[{"name":"k","grid":[1],"block":[32],"args":["in:input"]}]})J",
            "argument 'in:input' names no input of the card (its inputs: x)");
        row("unknown output", R"J({"kernels":[{"name":"k","grid":[1],"block":[32],"args":["out:z"]}]})J",
            "argument 'out:z' names no output of the card (its outputs: y)");
        row("unknown symbol argument", R"J({"kernels":[{"name":"k","grid":[1],"block":[32],"args":["sym:batch"]}]})J",
            "argument 'sym:batch' names no shape symbol of the card (its symbols: cols, rows)");
        row("undeclared workspace", R"J({"kernels":[{"name":"k","grid":[1],"block":[32],"args":["ws:tmp"]}]})J", "names no declared workspace");
        row("unknown argument kind", R"J({"kernels":[{"name":"k","grid":[1],"block":[32],"args":["ptr:x"]}]})J", "unknown kind 'ptr'");
        row("argument without kind", R"J({"kernels":[{"name":"k","grid":[1],"block":[32],"args":["x"]}]})J", "has no kind");
        row("unknown symbol in grid", R"J({"kernels":[{"name":"k","grid":["ceil_div(n, 4)"],"block":[32],"args":[]}]})J",
            "kernel 0 'k' grid.x: expression 'ceil_div(n, 4)': unknown symbol 'n'");
        row("i32 overflow", R"J({"kernels":[{"name":"k","grid":[1],"block":[32],"args":["i32:rows * cols * 1000"]}]})J", "does not fit 32 bits");
        row("bad f32", R"J({"kernels":[{"name":"k","grid":[1],"block":[32],"args":["f32:half"]}]})J", "is not a number");
        row("workspace twice", R"J({"kernels":[{"name":"k","grid":[1],"block":[32],"args":[]}],
            "workspace":[{"name":"a","bytes":"4"},{"name":"a","bytes":"8"}]})J", "declared twice");
        row("huge workspace", R"J({"kernels":[{"name":"k","grid":[1],"block":[32],"args":[]}],
            "workspace":[{"name":"a","bytes":"rows * cols * 1000000"}]})J", "workspace 'a' asks for 4096000000000 bytes");
        row("second kernel wrong", R"J({"kernels":[{"name":"a","grid":[1],"block":[32],"args":[]},
            {"name":"b","grid":[1],"block":[2048],"args":[]}]})J", "kernel 1 'b' block.x = 2048");
        row("grid not a multiple of the cluster", R"J({"kernels":[{"name":"k","grid":["rows + 1"],"block":[32],"cluster":[2,1,1],"args":[]}]})J",
            "grid.x = 4097 is not a multiple of cluster.x = 2");
        row("cluster too large", R"J({"kernels":[{"name":"k","grid":["rows"],"block":[32],"cluster":[32],"args":[]}]})J",
            "cluster of 32 blocks; this device allows at most 16");
        row("cluster not an integer", R"J({"kernels":[{"name":"k","grid":["rows"],"block":[32],"cluster":["cols"],"args":[]}]})J",
            "cluster[0] = \"cols\" must be a positive integer");
        row("grid not a number", R"J({"kernels":[{"name":"k","grid":[1.5],"block":[32],"args":[]}]})J", "must be an integer or an expression");
    }

    void invalidPlans()
    {
        QFETCH(QString, plan);
        QFETCH(QString, message);
        const auto card = makeSoftmaxCard(4096, 1000);
        try {
            resolveLaunchPlan(parseLaunchPlan(J::parse(plan.toStdString()), card), card.shape);
            QFAIL("the plan was accepted");
        } catch (const Error &e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(message), e.what());
        }
    }

    void limitsComeFromTheDevice()
    {
        const auto card = makeSoftmaxCard(4096, 1000);
        const auto plan = parseLaunchPlan(goodPlan(), card);
        DeviceLimits small;
        small.maxThreadsPerBlock = 64;
        try {
            resolveLaunchPlan(plan, card.shape, small);
            QFAIL("accepted 128 threads on a 64-thread device");
        } catch (const Error &e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("at most 64 per block")), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestLaunchPlan)
#include "tst_launchplan.moc"
