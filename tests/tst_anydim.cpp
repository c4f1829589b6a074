// The families over a middle dimension ([outer, dim, inner] views, core/ops/cards.cpp): their cards'
// shapes and ATen reference arguments, the view of a tensor around a dimension, the CUDA templates'
// seeds and launch plans, and the CPU templates against ATen through the real worker, ties included.
#include <QtTest>

#include "ops/operator_card.h"
#include "pool/worker_pool.h"
#include "proposers/template_proposer.h"
#include "test_support.h"
#include "util/error.h"

using namespace kforge;
using J = nlohmann::json;

namespace {

const ShapeBindings kShape = {{"outer", 4}, {"dim", 33}, {"inner", 17}};

std::string why(const Verdict &v)
{
    std::string s = v.summaryLine() + "\n" + v.compile.log;
    for (const auto &r : v.reasons)
        s += "\n" + r.message;
    return s;
}

} // namespace

class TestAnyDim : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<WorkerPool> m_pool;

    Verdict evaluate(const OperatorCard &card, const Candidate &c)
    {
        if (!m_pool) {
            m_pool = std::make_unique<WorkerPool>(PoolOptions{test::workerCommand(), 2});
            m_pool->start();
        }
        EvalOptions o;
        o.benchmark = false;
        return m_pool->evaluate(card, c, o);
    }

private slots:
    // Each reduction's reference is its ATen operator over dim 1 of the view, keepdim false, and its
    // output is [outer, inner] with the family's dtype and error model.
    void reductionCards_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("args");
        QTest::addColumn<QString>("outDtype");
        QTest::addColumn<QString>("model");
        QTest::newRow("sum") << "sum_dim" << "aten::sum.dim_IntList" << R"([{"input":0},{"int_list":[1]},{"bool":false},{"none":true}])" << "float16" << "sum";
        QTest::newRow("mean") << "mean_dim" << "aten::mean.dim" << R"([{"input":0},{"int_list":[1]},{"bool":false},{"none":true}])" << "float16" << "sum";
        QTest::newRow("max") << "max_dim" << "aten::amax" << R"([{"input":0},{"int_list":[1]},{"bool":false}])" << "float16" << "exact";
        QTest::newRow("min") << "min_dim" << "aten::amin" << R"([{"input":0},{"int_list":[1]},{"bool":false}])" << "float16" << "exact";
        QTest::newRow("argmax") << "argmax_dim" << "aten::argmax" << R"([{"input":0},{"int":1},{"bool":false}])" << "int64" << "exact";
        QTest::newRow("argmin") << "argmin_dim" << "aten::argmin" << R"([{"input":0},{"int":1},{"bool":false}])" << "int64" << "exact";
        QTest::newRow("prod") << "prod_dim" << "aten::prod.dim_int" << R"([{"input":0},{"int":1},{"bool":false},{"none":true}])" << "float16" << "sum";
    }

    void reductionCards()
    {
        QFETCH(QString, family);
        QFETCH(QString, op);
        QFETCH(QString, args);
        QFETCH(QString, outDtype);
        QFETCH(QString, model);
        const auto card = makeCard(family.toStdString(), kShape, DType::F16);
        QVERIFY(dimFamily(card.family));
        const auto full = card.atenOp + (card.atenOverload.empty() ? "" : "." + card.atenOverload);
        QCOMPARE(QString::fromStdString(full), op);
        QCOMPARE(card.referenceArgs, J::parse(args.toStdString()));
        QCOMPARE(card.inputs.at(0).dims, (std::vector<std::string>{"outer", "dim", "inner"}));
        QCOMPARE(card.outputs.at(0).dims, (std::vector<std::string>{"outer", "inner"}));
        QCOMPARE(QString::fromStdString(dtypeName(card.outputs.at(0).dtype)), outDtype);
        QCOMPARE(QString::fromStdString(errorModelName(card.errorModel)), model);
        QCOMPARE(card.flops(card.shape), 33.0 * 4 * 17);
        // A product's inputs keep every partial product in range (log-normal around +-1 over dim).
        QCOMPARE(card.inputs.at(0).init, std::string(family == QLatin1String("prod_dim") ? "lognormal:dim" : "randn"));
        // Held out: a contiguous last dimension (inner 1) and inner sizes no vector width divides.
        bool innerOne = false, oddInner = false;
        for (const auto &s : card.heldOutShapes) {
            innerOne |= s.at("inner") == 1;
            oddInner |= s.at("inner") % 2 == 1 && s.at("inner") > 1;
        }
        QVERIFY(innerOne && oddInner);
    }

    // The norms keep the input's shape; their eps is the reference's.
    void normCards_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("args");
        QTest::newRow("softmax") << "softmax_dim" << "aten::_softmax" << R"([{"input":0},{"int":1},{"bool":false}])";
        QTest::newRow("log_softmax") << "log_softmax_dim" << "aten::_log_softmax" << R"([{"input":0},{"int":1},{"bool":false}])";
        QTest::newRow("rms_norm") << "rms_norm_dim" << "kforge::rms_norm_dim" << R"([{"input":0},{"double":1e-05}])";
        QTest::newRow("l2_norm") << "l2_norm_dim" << "kforge::l2_norm_dim" << R"([{"input":0},{"double":1e-12}])";
        QTest::newRow("l1_norm") << "l1_norm_dim" << "kforge::l1_norm_dim" << R"([{"input":0}])";
    }

    void normCards()
    {
        QFETCH(QString, family);
        QFETCH(QString, op);
        QFETCH(QString, args);
        const auto card = makeCard(family.toStdString(), kShape, DType::BF16);
        QCOMPARE(QString::fromStdString(card.atenOp), op);
        QCOMPARE(card.referenceArgs, J::parse(args.toStdString()));
        QCOMPARE(card.outputs.at(0).dims, card.inputs.at(0).dims);
        QCOMPARE(card.errorModel, ErrorModel::Normalization);
        QVERIFY(card.invariants.empty()); // rows_sum_to_one is about the last dimension
    }

    void instanceNormCard()
    {
        const auto card = makeCard("instance_norm", {{"n", 2}, {"c", 3}, {"hw", 300}});
        QVERIFY(!dimFamily(card.family));
        QCOMPARE(card.inputs.at(0).dims, (std::vector<std::string>{"n", "c", "hw"}));
        QCOMPARE(card.atenOp, std::string("aten::instance_norm"));
        QCOMPARE(card.referenceArgs.at(5), J({{"bool", true}})); // use_input_stats
        QCOMPARE(card.referenceArgs.at(7), J({{"double", 1e-5}})); // eps, after momentum
        QVERIFY_THROWS_EXCEPTION(Error, makeCard("instance_norm", {{"n", 2}, {"c", 3}}));
    }

    void missingSymbolIsNamed()
    {
        try {
            makeCard("sum_dim", {{"rows", 4}, {"cols", 8}});
            QFAIL("a rows x cols shape made a sum_dim card");
        } catch (const Error &e) {
            QVERIFY2(std::string(e.what()).find("'outer'") != std::string::npos, e.what());
        }
        QVERIFY(!dimFamily("sum"));
        QVERIFY(!dimFamily("no_such_dim"));
    }

    void dimViews_data()
    {
        QTest::addColumn<QString>("shape");
        QTest::addColumn<int>("d");
        QTest::addColumn<QString>("view"); // outer,dim,inner
        QTest::newRow("(4,33,17) d0") << "4,33,17" << 0 << "1,4,561";
        QTest::newRow("(4,33,17) d1") << "4,33,17" << 1 << "4,33,17";
        QTest::newRow("(4,33,17) d2") << "4,33,17" << 2 << "132,17,1";
        QTest::newRow("(112,64,512,512) d1") << "112,64,512,512" << 1 << "112,64,262144";
        QTest::newRow("(7) d0") << "7" << 0 << "1,7,1";
    }

    void dimViews()
    {
        QFETCH(QString, shape);
        QFETCH(int, d);
        QFETCH(QString, view);
        std::vector<int64_t> s;
        for (const auto &p : shape.split(QLatin1Char(',')))
            s.push_back(p.toLongLong());
        const auto v = dimView(s, size_t(d));
        const auto parts = view.split(QLatin1Char(','));
        QCOMPARE(v.at("outer"), parts[0].toLongLong());
        QCOMPARE(v.at("dim"), parts[1].toLongLong());
        QCOMPARE(v.at("inner"), parts[2].toLongLong());
        QVERIFY_THROWS_EXCEPTION(Error, dimView(s, s.size()));
    }

    // The strided reduction's seed: packs for sums, single values for max, min, argmax and argmin; a warp
    // across the columns wherever its row is 512 bytes, or at least a 128-byte line for inputs up to
    // 64 MiB, otherwise the block as wide as inner; 8 thread rows or fewer for a short dim; and dim cut
    // across blocks only where the columns leave the device under half full or each block's share is
    // large, with a combine kernel over a workspace of partials.
    void reductionSeeds_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("shape");
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<int>("bx");
        QTest::addColumn<int>("vec");
        QTest::addColumn<int>("by");
        QTest::addColumn<int>("split");
        QTest::newRow("sum (128,4096,4095): odd inner, 8.6 GB, the wide block") << "sum_dim" << "outer=128,dim=4096,inner=4095" << "float32" << 256 << 1 << 2 << 1;
        QTest::newRow("sum (128,64,4095): odd inner, 134 MB") << "sum_dim" << "outer=128,dim=64,inner=4095" << "float32" << 256 << 1 << 2 << 1;
        QTest::newRow("sum (8,300,1001): odd inner, 9.6 MB") << "sum_dim" << "outer=8,dim=300,inner=1001" << "float32" << 32 << 1 << 8 << 1;
        QTest::newRow("mean (16,256,256)") << "mean_dim" << "outer=16,dim=256,inner=256" << "float32" << 32 << 4 << 8 << 8;
        QTest::newRow("sum (4,1024,4096): few blocks, cut") << "sum_dim" << "outer=4,dim=1024,inner=4096" << "float32" << 32 << 4 << 8 << 4;
        QTest::newRow("mean (2048,56,56): short dim, 2 thread rows") << "mean_dim" << "outer=2048,dim=56,inner=56" << "float32" << 32 << 4 << 2 << 1;
        QTest::newRow("sum (128,64,2048) bfloat16: dim 64, 4 thread rows") << "sum_dim" << "outer=128,dim=64,inner=2048" << "bfloat16" << 32 << 8 << 4 << 1;
        // Max, min and their indices take single values where a sum takes packs (the H200's sweeps).
        QTest::newRow("argmax (1,65536,64): few columns") << "argmax_dim" << "outer=1,dim=65536,inner=64" << "float32" << 32 << 1 << 8 << 64;
        QTest::newRow("max (2,100000,8)") << "max_dim" << "outer=2,dim=100000,inner=8" << "float32" << 32 << 1 << 8 << 64;
        QTest::newRow("argmax (4,1024,4096): the columns fill the device") << "argmax_dim" << "outer=4,dim=1024,inner=4096" << "float32" << 32 << 1 << 8 << 1;
        QTest::newRow("max (8,300,1000): 256 blocks of 38 KiB, no cut") << "max_dim" << "outer=8,dim=300,inner=1000" << "float32" << 32 << 1 << 8 << 1;
        QTest::newRow("argmax (5,2000,1000): 160 blocks of 250 KiB, cut") << "argmax_dim" << "outer=5,dim=2000,inner=1000" << "float32" << 32 << 1 << 8 << 2;
        QTest::newRow("max (128,4096,4095): 8.6 GB, the wide block") << "max_dim" << "outer=128,dim=4096,inner=4095" << "float32" << 256 << 1 << 2 << 1;
        QTest::newRow("max (32,2048,1024) bfloat16: the wide block") << "max_dim" << "outer=32,dim=2048,inner=1024" << "bfloat16" << 256 << 1 << 4 << 4;
    }

    void reductionSeeds()
    {
        QFETCH(QString, family);
        QFETCH(QString, shape);
        QFETCH(QString, dtype);
        QFETCH(int, bx);
        QFETCH(int, vec);
        QFETCH(int, by);
        QFETCH(int, split);
        const auto card = makeCard(family.toStdString(), parseShape(shape.toStdString()), dtypeFromName(dtype.toStdString()));
        const auto *t = TemplateLibrary::builtin().find("cuda." + family.toStdString() + ".strided");
        QVERIFY(t);
        const auto p = t->seed(card);
        QVERIFY2(t->valid(p, card), p.dump().c_str());
        QCOMPARE(p.at("bx").get<int>(), bx);
        QCOMPARE(p.at("vec").get<int>(), vec);
        QCOMPARE(p.at("by").get<int>(), by);
        QCOMPARE(p.at("split").get<int>(), split);
        const auto plan = t->launch(p, card);
        const auto &k = plan.at("kernels");
        QCOMPARE(k.size(), size_t(split > 1 ? 2 : 1));
        QCOMPARE(k[0].at("grid")[1].get<int>(), split);
        if (split > 1) {
            QCOMPARE(k[1].at("name").get<std::string>(), std::string("kf_reduce_dim_combine"));
            QCOMPARE(plan.at("workspace").size(), size_t(family == QLatin1String("argmax_dim") ? 2 : 1));
        }
        QVERIFY(t->render(p, card).find("#define SPLIT " + std::to_string(split)) != std::string::npos);
        // Contiguous rows are the last-dimension templates' case.
        auto rows = card;
        rows.shape["inner"] = 1;
        QVERIFY(!t->valid(t->seed(rows), rows));
    }

    // The norm's seed holds the whole of dim in registers where it fits (KernelBench's RMSNorm over 64
    // channels), and falls back to a second read where it does not.
    void normSeeds()
    {
        const auto *t = TemplateLibrary::builtin().find("cuda.rms_norm_dim.strided");
        QVERIFY(t);
        const auto small = makeCard("rms_norm_dim", parseShape("outer=112,dim=64,inner=262144"), DType::F32);
        auto p = t->seed(small);
        QVERIFY(t->valid(p, small));
        QVERIFY(p.at("cache").get<int>() * p.at("by").get<int>() >= 64);
        QCOMPARE(p.at("vec").get<int>(), 4);
        const auto big = makeCard("rms_norm_dim", parseShape("outer=8,dim=5000,inner=512"), DType::F32);
        p = t->seed(big);
        QVERIFY(t->valid(p, big));
        QVERIFY(p.at("cache").get<int>() * p.at("by").get<int>() < 5000);
        // 8 x 512 columns are 32 blocks: single values, 8 thread rows and as much of the column cached as fits.
        QCOMPARE(p.at("vec").get<int>(), 1);
        QCOMPARE(p.at("by").get<int>(), 8);
        QVERIFY(p.at("cache").get<int>() > 0);
        // A grid that fills the device keeps the widest pack, 4 rows and no cache.
        const auto wide = makeCard("rms_norm_dim", parseShape("outer=64,dim=5000,inner=65536"), DType::F32);
        p = t->seed(wide);
        QVERIFY(t->valid(p, wide));
        QCOMPARE(p, J({{"bx", 64}, {"vec", 4}, {"by", 4}, {"cache", 0}}));
        // Contiguous rows get a block per row: the row in registers where it fits, else read twice with
        // one 1024-thread block per SM (KernelBench's L2 over 65535).
        const auto *rows = TemplateLibrary::builtin().find("cuda.l2_norm_dim.rows");
        QVERIFY(rows);
        const auto l2 = makeCard("l2_norm_dim", parseShape("outer=32768,dim=65535,inner=1"), DType::F32);
        QVERIFY(!t->valid(t->seed(l2), l2));
        p = rows->seed(l2);
        QVERIFY(rows->valid(p, l2));
        QCOMPARE(p, J({{"block", 1024}, {"vec", 1}, {"reg", 0}, {"minb", 1}}));
        const auto short4k = makeCard("l2_norm_dim", parseShape("outer=4096,dim=4096,inner=1"), DType::F32);
        p = rows->seed(short4k);
        QCOMPARE(p, J({{"block", 256}, {"vec", 4}, {"reg", 4}, {"minb", 1}}));
        QCOMPARE(rows->launch(p, short4k).at("kernels")[0].at("grid")[0].get<std::string>(), std::string("outer * inner"));
        QVERIFY(!rows->valid(p, small)); // inner > 1 is the strided kernel's
    }

    // Every CPU template over dim at its default point against ATen, at shapes with inner 1, odd sizes
    // and small integer values, so ties decide argmax and argmin (ATen keeps the first).
    void cpuTemplatesVerify_data()
    {
        QTest::addColumn<QString>("templateId");
        QTest::addColumn<bool>("ties");
        for (const auto &f : cardFamilies()) {
            if (!dimFamily(f))
                continue;
            for (const auto *t : TemplateLibrary::builtin().forFamily(f, "cpu")) {
                QTest::newRow(t->id.c_str()) << QString::fromStdString(t->id) << false;
                if (f == "argmax_dim" || f == "argmin_dim" || f == "max_dim" || f == "min_dim")
                    QTest::newRow((t->id + " ties").c_str()) << QString::fromStdString(t->id) << true;
            }
        }
    }

    void cpuTemplatesVerify()
    {
        if (test::workerCommand().empty())
            QSKIP("kforge-worker is not built");
        QFETCH(QString, templateId);
        QFETCH(bool, ties);
        const auto *t = TemplateLibrary::builtin().find(templateId.toStdString());
        QVERIFY(t);
        auto card = makeCard(t->family, kShape);
        if (ties)
            card.inputs[0].init = "index:outer"; // values 0..3 down a dim of 33: every column has ties
        TemplateProposer proposer("cpu");
        const auto v = evaluate(card, proposer.render(*t, test::firstPoint(*t), card).candidate);
        QVERIFY2(v.correct(), why(v).c_str());
    }

    // The guard is not lenient about ties: an argmax that keeps the last maximum fails.
    void lastIndexArgmaxIsRejected()
    {
        if (test::workerCommand().empty())
            QSKIP("kforge-worker is not built");
        const auto *t = TemplateLibrary::builtin().find("cpu.argmax_dim.tiles");
        QVERIFY(t);
        auto card = makeCard("argmax_dim", kShape);
        card.inputs[0].init = "index:outer";
        TemplateProposer proposer("cpu");
        auto c = proposer.render(*t, test::firstPoint(*t), card).candidate;
        const std::string strict = "const bool take = v > acc[i]";
        const auto at = c.source.find(strict);
        QVERIFY(at != std::string::npos);
        c.source.replace(at, strict.size(), "const bool take = v >= acc[i]");
        const auto v = evaluate(card, c);
        QVERIFY2(!v.correct(), why(v).c_str());
        QVERIFY2(why(v).find("differs from ATen's exact result") != std::string::npos, why(v).c_str());
    }
};

QTEST_GUILESS_MAIN(TestAnyDim)
#include "tst_anydim.moc"
