// Every operator family has a card whose ATen reference runs, and CPU templates whose default point
// passes the guard's verification against it (fresh inputs, several scales, held-out shapes).
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "ops/operator_card.h"
#include "ops/shape_box.h"
#include "ops/trial_plan.h"
#include "pool/worker_pool.h"
#include "proposers/template_proposer.h"
#include "proposers/template_sources.h"
#include "proposers/templates/cuda_prelude.h"
#include "test_support.h"
#include "util/error.h"
#include "workload/loss_patterns.h"
#include "workload/problem_cards.h"
#include "workload/workload_file.h"

using namespace kforge;

namespace {

ShapeBindings smallShape(const std::string &family)
{
    if (family == "group_norm")
        return {{"n", 2}, {"c", 8}, {"hw", 64}, {"groups", 4}};
    if (family == "cross_entropy")
        return {{"rows", 16}, {"vocab", 500}};
    if (dimFamily(family))
        return {{"outer", 4}, {"dim", 33}, {"inner", 17}};
    if (nchwFamily(family))
        return {{"n", 2}, {"c", 3}, {"hw", 300}};
    if (family == "scaled_masked_softmax")
        return {{"rows", 16}, {"cols", 300}, {"mrows", 8}};
    if (family.rfind("rotary_embedding", 0) == 0)
        return {{"b", 2}, {"s", 17}, {"h", 3}, {"d", 64}};
    return {{"rows", 16}, {"cols", 300}};
}

} // namespace

class TestTemplates : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<WorkerPool> m_pool;

private slots:
    // The box a pack trusts a kernel with spans the captured and held-out shapes; shapes drawn inside it
    // stay inside it, reach its corners, and give odd extents; shapes drawn like a card's keep its symbols.
    void drawnShapesStayInTheVerifiedBox()
    {
        const auto card = makeCard("softmax", {{"rows", 4096}, {"cols", 1024}});
        const auto box = verifiedBox(card);
        QCOMPARE(box.size(), size_t(2));
        QCOMPARE(box.at("rows").min, int64_t(7));
        QCOMPARE(box.at("rows").max, int64_t(4096));
        QCOMPARE(box.at("cols").min, int64_t(33));
        QCOMPARE(box.at("cols").max, int64_t(1027));
        std::mt19937_64 rng(9);
        bool corner = false, odd = false, between = false;
        for (int i = 0; i < 200; ++i) {
            const auto s = drawInsideBox(box, rng);
            for (const auto &[sym, r] : box) {
                QVERIFY2(s.at(sym) >= r.min && s.at(sym) <= r.max, qPrintable(QString::fromStdString(shapeText(s))));
                corner |= s.at(sym) == r.min || s.at(sym) == r.max;
                between |= s.at(sym) > r.min + 1 && s.at(sym) < r.max - 1;
                odd |= s.at(sym) % 2 != 0 && s.at(sym) != r.min && s.at(sym) != r.max;
            }
        }
        QVERIFY(corner && odd && between);
        const auto like = drawShapeLike({{"b", 2}, {"s", 333}, {"t", 1}}, rng);
        QCOMPARE(like.size(), size_t(3));
        QCOMPARE(like.at("t"), int64_t(1));
        QVERIFY(like.at("s") >= 1 && like.at("s") <= 4 * 333 + 3);
        QCOMPARE(cardElements(card, {{"rows", 3}, {"cols", 5}}), int64_t(30));
        // A group norm's box also carries the rule its shapes keep.
        const auto gn = makeCard("group_norm", {{"n", 2}, {"c", 16}, {"hw", 64}, {"groups", 4}});
        QVERIFY(keepsMultiples(gn, {{"n", 1}, {"c", 15}, {"hw", 9}, {"groups", 3}}));
        QVERIFY(!keepsMultiples(gn, {{"n", 1}, {"c", 14}, {"hw", 9}, {"groups", 4}}));
        QVERIFY(!keepsMultiples(gn, {{"n", 1}, {"c", 14}, {"hw", 9}, {"groups", 0}}));
    }

    void initTestCase()
    {
        m_pool = std::make_unique<WorkerPool>(PoolOptions{test::workerCommand(), 2});
        m_pool->start();
    }

    // The template's first point on the card, verified by the guard (no timing); `why` says what failed.
    Verdict verifyFirstPoint(const KernelTemplate &t, const OperatorCard &card, std::string &why)
    {
        const auto proposal = TemplateProposer("cpu").render(t, test::firstPoint(t), card);
        EvalOptions o;
        o.benchmark = false;
        const Verdict v = m_pool->evaluate(card, proposal.candidate, o);
        why = v.summaryLine() + "\n" + v.compile.log;
        for (const auto &r : v.reasons)
            why += "\n" + r.message;
        return v;
    }

    void defaultPointsVerify_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("templateId");
        for (const auto &f : cardFamilies()) {
            const auto templates = TemplateLibrary::builtin().forFamily(f, "cpu");
            QVERIFY2(!templates.empty(), f.c_str());
            for (const auto *t : templates)
                QTest::newRow(t->id.c_str()) << QString::fromStdString(f) << QString::fromStdString(t->id);
        }
    }

    void defaultPointsVerify()
    {
        QFETCH(QString, family);
        QFETCH(QString, templateId);
        const auto card = makeCard(family.toStdString(), smallShape(family.toStdString()));
        const auto *t = TemplateLibrary::builtin().find(templateId.toStdString());
        QVERIFY(t);
        std::string why;
        const Verdict v = verifyFirstPoint(*t, card, why);
        QVERIFY2(v.correct(), why.c_str());
        QCOMPARE(v.trials.size(), trialPlan(card).size());
    }

    // Every CPU template with independent partial results (up to 16) starts at eight of them, in double where it
    // has a choice (seedPartialResults): a new template cannot fall back to the middle of its values. Where
    // each sum runs over one row or plane, its second start is sixteen in float; where a sum runs over a
    // whole tensor or a channel across the batch (the split norms), there is none: float leaves the bound.
    void cpuPartialResultsStartAtEight()
    {
        int seen = 0, withSecond = 0;
        for (const auto &f : cardFamilies())
            for (const auto *t : TemplateLibrary::builtin().forFamily(f, "cpu")) {
                const auto a = t->space.find("accumulators");
                if (a == t->space.end() || std::find(a->second.begin(), a->second.end(), nlohmann::json(8)) == a->second.end())
                    continue; // the vector softmax's sums: one to four vectors, seeded at two
                ++seen;
                QVERIFY2(t->seed, t->id.c_str());
                const auto seed = t->seed(makeCard(f, smallShape(f)));
                QCOMPARE(seed.value("accumulators", 0), 8);
                if (t->space.count("acc"))
                    QCOMPARE(seed.value("acc", std::string()), std::string("double"));
                const bool wholeTensorSums = t->id.find(".rows") == std::string::npos; // cpu_<family>.{whole,channels,...}
                if (!t->space.count("acc") || wholeTensorSums) {
                    QVERIFY2(!t->moreStarts, t->id.c_str());
                    continue;
                }
                ++withSecond;
                QVERIFY2(t->moreStarts, t->id.c_str());
                const auto card = makeCard(f, smallShape(f));
                const auto more = t->moreStarts(card);
                QCOMPARE(int(more.size()), 1);
                QCOMPARE(more.front().point, (nlohmann::json{{"acc", "float"}, {"accumulators", 16}}));
                QVERIFY2(!t->valid || t->valid(more.front().point, card), t->id.c_str());
            }
        QVERIFY(seen >= 20);
        QVERIFY(withSecond >= 15);
    }

    // CPU templates over a middle dimension start at 64 columns a pass, in double where the
    // accumulator's type is a choice (tileSeed, cpu_anydim.cpp).
    void cpuTilesStartAtSixtyFour()
    {
        int seen = 0;
        for (const auto &f : cardFamilies())
            for (const auto *t : TemplateLibrary::builtin().forFamily(f, "cpu")) {
                if (!t->space.count("tile"))
                    continue;
                ++seen;
                QVERIFY2(t->seed, t->id.c_str());
                const auto card = makeCard(f, smallShape(f));
                const auto seed = t->seed(card);
                QCOMPARE(seed.value("tile", 0), 64);
                if (t->space.count("acc"))
                    QCOMPARE(seed.value("acc", std::string()), std::string("double"));
                QVERIFY2(!t->valid || t->valid(seed, card), t->id.c_str());
            }
        QCOMPARE(seen, 12); // seven reductions and five norms over a dim
    }

    void cardsRoundTripThroughJson()
    {
        for (const auto &f : cardFamilies()) {
            const auto card = makeCard(f, smallShape(f), DType::BF16);
            const auto back = nlohmann::json(card).get<OperatorCard>();
            QCOMPARE(nlohmann::json(back), nlohmann::json(card));
            QVERIFY(card.minBytes(card.shape) > 0);
        }
    }

    void cudaSeedsAreValid_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("shape");
        for (const auto &f : cardFamilies()) {
            if (f == "group_norm") {
                QTest::newRow("group_norm 64x128x16384/32") << QString::fromStdString(f) << QStringLiteral("n=64,c=128,hw=16384,groups=32");
                continue;
            }
            if (f == "cross_entropy") {
                QTest::newRow("cross_entropy 4096x128256") << QString::fromStdString(f) << QStringLiteral("rows=4096,vocab=128256");
                continue;
            }
            if (dimFamily(f)) {
                for (const char *shape : {"outer=128,dim=4096,inner=4095", "outer=112,dim=64,inner=262144", "outer=1,dim=65536,inner=64"})
                    QTest::newRow((f + " " + shape).c_str()) << QString::fromStdString(f) << QString::fromLatin1(shape);
                // The norms over dim also take contiguous rows (KernelBench's L2 over 65535); the reductions
                // leave those to the last-dimension families.
                if (makeCard(f, {{"outer", 1}, {"dim", 1}, {"inner", 1}}).outputs.at(0).dims.size() == 3)
                    QTest::newRow((f + " outer=32768,dim=65535,inner=1").c_str()) << QString::fromStdString(f)
                                                                                   << QStringLiteral("outer=32768,dim=65535,inner=1");
                continue;
            }
            if (f.rfind("rotary_embedding", 0) == 0) { // Llama's head size at a decoder's shape, and Phi-2's 80
                for (const char *shape : {"b=8,s=2048,h=32,d=128", "b=1,s=4097,h=40,d=80"})
                    QTest::newRow((f + " " + shape).c_str()) << QString::fromStdString(f) << QString::fromLatin1(shape);
                continue;
            }
            if (f == "scaled_masked_softmax") {
                for (const char *shape : {"rows=524288,cols=2048,mrows=2048", "rows=4096,cols=8192,mrows=1", "rows=64,cols=262144,mrows=64"})
                    QTest::newRow((f + " " + shape).c_str()) << QString::fromStdString(f) << QString::fromLatin1(shape);
                continue;
            }
            if (nchwFamily(f)) {
                // KernelBench's instance and batch norms, and a BatchNorm1d (hw 1) of few channels.
                for (const char *shape : {"n=112,c=64,hw=262144", "n=64,c=64,hw=262144", "n=4096,c=16,hw=1"})
                    QTest::newRow((f + " " + shape).c_str()) << QString::fromStdString(f) << QString::fromLatin1(shape);
                continue;
            }
            for (const char *shape : {"rows=65536,cols=512", "rows=16384,cols=4096", "rows=4096,cols=8192", "rows=64,cols=262144"})
                QTest::newRow((f + " " + shape).c_str()) << QString::fromStdString(f) << QString::fromLatin1(shape);
        }
    }

    void cudaSeedsAreValid()
    {
        QFETCH(QString, family);
        QFETCH(QString, shape);
        const ShapeBindings b = parseShape(shape.toStdString());
        for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
            const auto card = makeCard(family.toStdString(), b, dt);
            int seeded = 0;
            for (const auto *t : TemplateLibrary::builtin().forFamily(card.family, "cuda")) {
                QVERIFY2(t->seed && t->launch, t->id.c_str());
                const auto p = t->seed(card);
                const bool mayDecline = t->id.find(".split") != std::string::npos || t->id.find(".cluster") != std::string::npos
                                        || t->id.find(".pipe") != std::string::npos || t->id.find(".rowgroup") != std::string::npos
                                        || t->id.find(".warp") != std::string::npos || dimFamily(card.family);
                if (!t->valid(p, card)) {
                    // Only the split-row and row-group templates (rows too short to split), the cluster
                    // templates (rows too long to keep on chip), the pipelined ones (rows too long for a
                    // ring of buffers, or not a multiple of 16 bytes), the warp-per-row ones (rows longer than
                    // a warp holds) and those over a middle dimension (strided for inner > 1, rows for inner 1)
                    // may decline a shape.
                    QVERIFY2(mayDecline, (t->id + " seed " + p.dump() + " is invalid for " + shape.toStdString()).c_str());
                    continue;
                }
                ++seeded;
                QVERIFY(!t->render(p, card).empty());
                QVERIFY(t->launch(p, card).at("kernels").size() >= 1);
            }
            QVERIFY2(seeded > 0, "no CUDA template can start on this card");
        }
    }

    // The row-group templates only take rows too long for one block, cut into the fewest chunks of at most
    // 32 KiB; the sum and variance norms' also take rows of a last dimension (inner 1) or instance-norm
    // planes, every block of a row resident at once. Their plan resets the slots and row counters before
    // the main kernel runs, and they read the row once where the family's two-pass templates read it twice.
    void rowGroupTakesOnlyLongRows_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("shape");
        QTest::addColumn<int>("dtype");
        QTest::addColumn<int>("split"); // 0: declines the card
        QTest::addColumn<QString>("rows"); // the plan's row count (held-out shapes over dim have inner > 1)
        QTest::addColumn<QString>("kernel");
        const QString sm = QStringLiteral("kf_rowgroup"), norm = QStringLiteral("kf_rowgroup_norm");
        QTest::newRow("softmax 4096 float32") << "softmax" << "rows=16384,cols=4096" << int(DType::F32) << 0 << "" << sm;
        QTest::newRow("log_softmax 32000 bfloat16 (64 KB rows)") << "log_softmax" << "rows=4096,cols=32000" << int(DType::BF16) << 0 << "" << sm;
        QTest::newRow("log_softmax 262144 float32") << "log_softmax" << "rows=1024,cols=262144" << int(DType::F32) << 32 << "rows" << sm;
        QTest::newRow("log_softmax 262144 bfloat16") << "log_softmax" << "rows=1024,cols=262144" << int(DType::BF16) << 16 << "rows" << sm;
        QTest::newRow("softmax 1048576 float32 (64 KiB chunks)") << "softmax" << "rows=64,cols=1048576" << int(DType::F32) << 64 << "rows" << sm;
        QTest::newRow("softmax 8000000 float32 (chunks past shared memory)") << "softmax" << "rows=2,cols=8000000" << int(DType::F32) << 0 << "" << sm;
        QTest::newRow("KernelBench L1 norm (256 KiB rows)") << "l1_norm_dim" << "outer=32768,dim=65535,inner=1" << int(DType::F32) << 8 << "outer * inner" << norm;
        QTest::newRow("KernelBench L2 norm") << "l2_norm_dim" << "outer=32768,dim=65535,inner=1" << int(DType::F32) << 8 << "outer * inner" << norm;
        QTest::newRow("RMS norm, 1 MiB bfloat16 rows") << "rms_norm_dim" << "outer=64,dim=524288,inner=1" << int(DType::BF16) << 32 << "outer * inner" << norm;
        QTest::newRow("RMS norm over a middle dim") << "rms_norm_dim" << "outer=112,dim=64,inner=262144" << int(DType::F32) << 0 << "" << norm;
        QTest::newRow("L2 norm, 16 KiB rows") << "l2_norm_dim" << "outer=4096,dim=4096,inner=1" << int(DType::F32) << 0 << "" << norm;
        QTest::newRow("KernelBench instance norm (1 MiB planes)") << "instance_norm" << "n=112,c=64,hw=262144" << int(DType::F32) << 32 << "n * c" << norm;
        QTest::newRow("KernelBench group norm's groups (8 MiB)") << "instance_norm" << "n=112,c=8,hw=2097152" << int(DType::F32) << 256 << "n * c" << norm;
        QTest::newRow("instance norm, 16 KiB planes") << "instance_norm" << "n=8,c=64,hw=4096" << int(DType::F32) << 0 << "" << norm;
        QTest::newRow("a plane too long for the SMs to hold at once") << "instance_norm" << "n=2,c=1,hw=12800000" << int(DType::F32) << 0 << "" << norm;
    }

    void rowGroupTakesOnlyLongRows()
    {
        QFETCH(QString, family);
        QFETCH(QString, shape);
        QFETCH(int, dtype);
        QFETCH(int, split);
        QFETCH(QString, rows);
        QFETCH(QString, kernel);
        const auto card = makeCard(family.toStdString(), parseShape(shape.toStdString()), DType(dtype));
        const auto *t = TemplateLibrary::builtin().find("cuda." + family.toStdString() + ".rowgroup");
        QVERIFY(t);
        const auto p = t->seed(card);
        QCOMPARE(t->valid(p, card), split > 0);
        if (split == 0)
            return;
        QCOMPARE(p.at("split").get<int>(), split);
        // Whole 16-byte packs for a row of any length (65535 too): the kernel reads from its aligned start.
        QCOMPARE(p.at("vec").get<int>() * dtypeSize(DType(dtype)), 16);
        const auto plan = t->launch(p, card);
        const auto &k = plan.at("kernels");
        const std::string r = rows.toStdString(), slotsExpr = r + " * " + std::to_string(split);
        QCOMPARE(k.size(), size_t(2));
        QCOMPARE(k[0].at("name").get<std::string>(), std::string("kf_rowgroup_reset"));
        QCOMPARE(k[1].at("name").get<std::string>(), kernel.toStdString());
        QCOMPARE(k[1].at("grid")[0].get<std::string>(), slotsExpr);
        // One 64-bit slot per chunk and a counter per row, all reset by the first kernel.
        QCOMPARE(plan.at("workspace")[0].at("bytes").get<std::string>(), slotsExpr + " * 8");
        QCOMPARE(plan.at("workspace")[1].at("bytes").get<std::string>(), r + " * 4");
        QCOMPARE(k[0].at("args")[2].get<std::string>(), "i64:" + slotsExpr);
        QCOMPARE(k[0].at("grid")[0].get<std::string>(), "ceil_div(" + slotsExpr + ", 256)");
        QVERIFY(t->render(p, card).find("#define SPLIT " + std::to_string(split)) != std::string::npos);
        QVERIFY(!t->reads || t->reads(p, card) == 1);
        for (const auto *other : TemplateLibrary::builtin().forFamily(card.family, "cuda"))
            if (other->reads && other != t && (!other->valid || other->valid(other->seed(card), card)))
                QCOMPARE(other->reads(other->seed(card), card), 2);
    }

    // The eps a card's reference takes reaches the kernel with nine significant digits: F.normalize's
    // 1e-12 was written 0.000000 by std::to_string, a division by zero for an all-zero row.
    void epsKeepsItsDigits_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("shape");
        QTest::newRow("l2_norm_dim rows") << "l2_norm_dim" << "outer=32768,dim=65535,inner=1";
        QTest::newRow("rms_norm_dim over dim") << "rms_norm_dim" << "outer=112,dim=64,inner=262144";
        QTest::newRow("rms_norm") << "rms_norm" << "rows=4096,cols=4096";
        QTest::newRow("layer_norm, long rows") << "layer_norm" << "rows=64,cols=262144";
    }

    void epsKeepsItsDigits()
    {
        QFETCH(QString, family);
        QFETCH(QString, shape);
        auto card = makeCard(family.toStdString(), parseShape(shape.toStdString()), DType::F32);
        bool found = false;
        for (auto &a : card.referenceArgs)
            if (a.contains("double")) {
                a["double"] = 1e-12;
                found = true;
            }
        QVERIFY2(found, "the card's reference takes no eps");
        int rendered = 0;
        for (const auto *t : TemplateLibrary::builtin().forFamily(card.family, "cuda")) {
            const auto p = t->seed(card);
            if (!t->valid(p, card))
                continue;
            const std::string src = t->render(p, card);
            if (src.find("#define EPS") == std::string::npos)
                continue;
            QVERIFY2(src.find("#define EPS 1e-12f") != std::string::npos, t->id.c_str());
            ++rendered;
        }
        QVERIFY(rendered > 0);
    }

    // A norm's eps is its card's, never a constant of the kernel (the CPU layer and group norms once added
    // 1e-5 whatever the model said; a ViT's 1e-6 failed the guard): every CPU norm template verifies against
    // a reference whose eps is 0.1, where a constant 1e-5 would be far outside the bound.
    void cpuNormsTakeTheCardsEps_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("templateId");
        for (const auto &f : cardFamilies()) {
            if (f.find("norm") == std::string::npos)
                continue;
            const auto card = makeCard(f, smallShape(f));
            if (std::none_of(card.referenceArgs.begin(), card.referenceArgs.end(), [](const auto &a) { return a.contains("double"); }))
                continue; // no eps (frobenius_norm, l1_norm_dim)
            for (const auto *t : TemplateLibrary::builtin().forFamily(f, "cpu"))
                QTest::newRow(t->id.c_str()) << QString::fromStdString(f) << QString::fromStdString(t->id);
        }
    }

    void cpuNormsTakeTheCardsEps()
    {
        QFETCH(QString, family);
        QFETCH(QString, templateId);
        auto card = makeCard(family.toStdString(), smallShape(family.toStdString()));
        for (auto it = card.referenceArgs.rbegin(); it != card.referenceArgs.rend(); ++it)
            if (it->contains("double")) { // the last floating argument: batch norm's momentum comes before its eps
                (*it)["double"] = 0.1;
                break;
            }
        const auto *t = TemplateLibrary::builtin().find(templateId.toStdString());
        QVERIFY(t);
        std::string why;
        QVERIFY2(verifyFirstPoint(*t, card, why).correct(), why.c_str());
    }

    // A template search starts with the kernels that read the input once: a row held in registers, or
    // a long row held on chip across blocks, before a row streamed twice.
    void firstStartReadsOnce_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("shape");
        QTest::addColumn<QString>("first");
        QTest::newRow("KernelBench softmax (1.5 MiB rows)") << "softmax" << "rows=4096,cols=393216" << "cuda.softmax.rowgroup";
        QTest::newRow("log-softmax, 1 MiB rows") << "log_softmax" << "rows=1024,cols=262144" << "cuda.log_softmax.rowgroup";
        QTest::newRow("softmax, rows in registers") << "softmax" << "rows=16384,cols=4096" << "cuda.softmax.rows";
        QTest::newRow("KernelBench L1 norm") << "l1_norm_dim" << "outer=32768,dim=65535,inner=1" << "cuda.l1_norm_dim.rowgroup";
        QTest::newRow("L2 norm, rows in registers") << "l2_norm_dim" << "outer=4096,dim=4096,inner=1" << "cuda.l2_norm_dim.rows";
        QTest::newRow("KernelBench instance norm") << "instance_norm" << "n=112,c=64,hw=262144" << "cuda.instance_norm.rowgroup";
        QTest::newRow("instance norm, short planes") << "instance_norm" << "n=8,c=64,hw=4096" << "cuda.instance_norm.split";
    }

    void firstStartReadsOnce()
    {
        QFETCH(QString, family);
        QFETCH(QString, shape);
        QFETCH(QString, first);
        const auto card = makeCard(family.toStdString(), parseShape(shape.toStdString()), DType::F32);
        TemplateProposer proposer("cuda");
        std::mt19937_64 rng(1);
        const auto p = proposer.propose(card, nullptr, rng);
        QVERIFY(p);
        QCOMPARE(QString::fromStdString(p->templateId), first);
    }

    // The row reductions start with a warp per short row, else a block per row, but max and argmax take a
    // warp per row (eight a block) wherever the rows then still fill the device.
    void reductionSeedsFillTheDevice_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("shape");
        QTest::addColumn<int>("tpr");
        QTest::newRow("argmax, 4096 x 4096") << "argmax" << "rows=4096,cols=4096" << 32;
        QTest::newRow("max, 8192 x 2048") << "max" << "rows=8192,cols=2048" << 32;
        QTest::newRow("max, 1024 x 16384: 128 blocks of eight") << "max" << "rows=1024,cols=16384" << 256;
        QTest::newRow("argmax, 2112 rows: 264 blocks of eight") << "argmax" << "rows=2112,cols=8192" << 32;
        QTest::newRow("argmax, 2104 rows: one block short") << "argmax" << "rows=2104,cols=8192" << 256;
        QTest::newRow("sum, 4096 x 4096") << "sum" << "rows=4096,cols=4096" << 256;
        QTest::newRow("mean, 8192 x 2048") << "mean" << "rows=8192,cols=2048" << 256;
        QTest::newRow("sum, short rows") << "sum" << "rows=65536,cols=512" << 32;
    }

    void reductionSeedsFillTheDevice()
    {
        QFETCH(QString, family);
        QFETCH(QString, shape);
        QFETCH(int, tpr);
        const auto card = makeCard(family.toStdString(), parseShape(shape.toStdString()), DType::F32);
        const auto *t = TemplateLibrary::builtin().find("cuda." + family.toStdString() + ".rows");
        QVERIFY(t);
        const auto p = t->seed(card);
        QVERIFY(!t->valid || t->valid(p, card));
        QCOMPARE(p.at("tpr").get<int>(), tpr);
        QCOMPARE(p.at("rpb").get<int>(), std::max(1, 256 / tpr));
    }

    // The two-kernel norms (batch norm's three modes, instance norm's split) start at 256 threads a
    // block: the H200 sweeps put 256 ahead of 512 at all three bench shapes for instance norm and at
    // two of three for batch norm (bench/RESULTS-search.md), at any dtype and shape.
    void splitNormSeedsTake256Threads_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("shape");
        QTest::addColumn<int>("dtype");
        QTest::newRow("batch norm, KernelBench 033") << "batch_norm" << "n=64,c=64,hw=262144" << int(DType::F32);
        QTest::newRow("batch norm, ResNet-50 56x56 bf16") << "batch_norm" << "n=32,c=256,hw=3136" << int(DType::BF16);
        QTest::newRow("affine batch norm") << "batch_norm_affine" << "n=16,c=128,hw=4096" << int(DType::F16);
        QTest::newRow("batch norm in eval mode") << "batch_norm_eval" << "n=32,c=512,hw=784" << int(DType::F32);
        QTest::newRow("instance norm, short planes") << "instance_norm" << "n=8,c=256,hw=4096" << int(DType::F32);
        QTest::newRow("instance norm, 64K planes fp16") << "instance_norm" << "n=1,c=64,hw=65536" << int(DType::F16);
    }

    void splitNormSeedsTake256Threads()
    {
        QFETCH(QString, family);
        QFETCH(QString, shape);
        QFETCH(int, dtype);
        const auto card = makeCard(family.toStdString(), parseShape(shape.toStdString()), DType(dtype));
        const auto *t = TemplateLibrary::builtin().find("cuda." + family.toStdString() + ".split");
        QVERIFY(t);
        const auto p = t->seed(card);
        QVERIFY(!t->valid || t->valid(p, card));
        QCOMPARE(p.at("block").get<int>(), 256);
        const auto plan = t->launch(p, card);
        for (const auto &k : plan.at("kernels"))
            if (k.at("name").get<std::string>() != "kf_bn_combine")
                QCOMPARE(k.at("block")[0].get<int>(), 256);
    }

    // The training batch norms keep a row shorter than 32K elements whole; a longer one is cut to its length
    // and to fill the device; eval mode, with no combine, fills it at any length.
    void batchNormPiecesCutOnlyLongRows_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("shape");
        QTest::addColumn<int>("pieces");
        QTest::newRow("KernelBench 033: long rows") << "batch_norm" << "n=64,c=64,hw=262144" << 8;
        QTest::newRow("few short rows") << "batch_norm" << "n=2,c=128,hw=9216" << 1;
        QTest::newRow("affine, few rows") << "batch_norm_affine" << "n=8,c=32,hw=16384" << 1;
        QTest::newRow("rows of 64K") << "batch_norm" << "n=4,c=64,hw=65536" << 8;
        QTest::newRow("rows of 32K") << "batch_norm" << "n=16,c=32,hw=32768" << 4;
        QTest::newRow("ResNet-50 stage 1, batch 8") << "batch_norm_affine" << "n=8,c=128,hw=3136" << 1;
        QTest::newRow("one image of a megapixel") << "batch_norm_affine" << "n=1,c=64,hw=1048576" << 32;
        QTest::newRow("eval mode fills the device") << "batch_norm_eval" << "n=8,c=64,hw=50176" << 4;
    }

    void batchNormPiecesCutOnlyLongRows()
    {
        QFETCH(QString, family);
        QFETCH(QString, shape);
        QFETCH(int, pieces);
        const auto card = makeCard(family.toStdString(), parseShape(shape.toStdString()), DType::F32);
        const auto *t = TemplateLibrary::builtin().find("cuda." + family.toStdString() + ".split");
        QVERIFY(t);
        QCOMPARE(t->seed(card).at("pieces").get<int>(), pieces);
    }

    void rowGroupPrunesOverfullSMs()
    {
        const auto card = makeCard("softmax", parseShape("rows=1024,cols=262144"), DType::F32);
        const auto *t = TemplateLibrary::builtin().find("cuda.softmax.rowgroup");
        QVERIFY(t);
        auto p = t->seed(card);
        p["block"] = 512;
        p["minb"] = 4;
        QVERIFY(t->valid(p, card)); // 2048 threads: a full SM
        QVERIFY(t->render(p, card).find("#define MINB 4") != std::string::npos);
        p["minb"] = 5;
        QVERIFY(!t->valid(p, card)); // more threads than an SM runs
    }

    void unknownFamilyIsRefused()
    {
        QVERIFY_THROWS_EXCEPTION(Error, makeCard("convolution", {{"rows", 1}}));
        QVERIFY_THROWS_EXCEPTION(Error, makeCard("softmax", {{"rows", 1}}));
    }

    // Rows shorter than 64 elements share a warp (TPR below 32, 256 threads a block); longer rows never do.
    void shortRowsShareAWarp_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<int>("cols");
        QTest::addColumn<int>("dtype");
        QTest::addColumn<int>("tpr");
        QTest::newRow("softmax 32 float32") << "softmax" << 32 << int(DType::F32) << 4;
        QTest::newRow("layer_norm 48 float32") << "layer_norm" << 48 << int(DType::F32) << 8;
        QTest::newRow("rms_norm 33 bfloat16") << "rms_norm" << 33 << int(DType::BF16) << 4;
        QTest::newRow("log_softmax 63 float16") << "log_softmax" << 63 << int(DType::F16) << 4;
        QTest::newRow("softmax 64 float32: a warp per row") << "softmax" << 64 << int(DType::F32) << 32;
    }

    void shortRowsShareAWarp()
    {
        QFETCH(QString, family);
        QFETCH(int, cols);
        QFETCH(int, dtype);
        QFETCH(int, tpr);
        const auto card = makeCard(family.toStdString(), {{"rows", 100000}, {"cols", cols}}, DType(dtype));
        const auto *t = TemplateLibrary::builtin().find("cuda." + family.toStdString() + ".rows");
        QVERIFY(t);
        const auto p = t->seed(card);
        QVERIFY2(t->valid(p, card), p.dump().c_str());
        QCOMPARE(p.at("tpr").get<int>(), tpr);
        if (tpr < 32) {
            QCOMPARE(p.at("tpr").get<int>() * p.at("rpb").get<int>(), 256);
            QVERIFY(p.at("tpr").get<int>() * p.at("reg").get<int>() >= cols);
        } else {
            auto shorter = p;
            shorter["tpr"] = 16;
            shorter["reg"] = 0;
            QVERIFY(!t->valid(shorter, card));
        }
    }

    // The pointwise templates serve a card only through its expression: none, one over names the card
    // lacks, or more inputs than the CUDA kernel takes, and no template offers a point.
    void pointwiseTemplatesNeedAnExpression()
    {
        auto card = makeCard("silu", {{"rows", 16}, {"cols", 300}});
        QCOMPARE(card.expression, std::string("x * sigmoid(x)"));
        for (const char *backend : {"cpu", "cuda"}) {
            const auto templates = TemplateLibrary::builtin().forFamily("silu", backend);
            QCOMPARE(templates.size(), size_t(1));
            const auto *t = templates.front();
            const auto p = test::startPoint(*t, card);
            QVERIFY(t->valid(p, card));
            QVERIFY(t->render(p, card).find("#define KF_EXPR(v)") != std::string::npos);
            auto none = card;
            none.expression.clear();
            QVERIFY(!t->valid(p, none));
            auto unknown = card;
            unknown.expression = "x * sigmoid(y)";
            QVERIFY(!t->valid(p, unknown));
            auto wide = card;
            for (int i = 1; i <= 4; ++i)
                wide.inputs.push_back({"x" + std::to_string(i), {"rows", "cols"}, DType::F32});
            QVERIFY(!t->valid(p, wide));
        }
    }

    // The CUDA pointwise seed keeps two packs a thread in flight where the expression calls a function
    // of many instructions, one where it is cheap; the launch gives each thread ILP packs.
    void pointwiseSeedHidesSlowExpressions_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<int>("ilp");
        QTest::newRow("relu") << QStringLiteral("relu") << 1;
        QTest::newRow("hardtanh") << QStringLiteral("hardtanh") << 1;
        QTest::newRow("leaky_relu") << QStringLiteral("leaky_relu") << 1;
        QTest::newRow("softplus") << QStringLiteral("softplus") << 2;
        QTest::newRow("gelu (erf)") << QStringLiteral("gelu") << 2;
        QTest::newRow("silu (sigmoid)") << QStringLiteral("silu") << 2;
        QTest::newRow("gelu_tanh (pow, tanh)") << QStringLiteral("gelu_tanh") << 2;
        QTest::newRow("elu (expm1 in a where)") << QStringLiteral("elu") << 2;
    }
    void pointwiseSeedHidesSlowExpressions()
    {
        QFETCH(QString, family);
        QFETCH(int, ilp);
        const auto card = makeCard(family.toStdString(), {{"rows", 64}, {"cols", 4096}});
        const auto templates = TemplateLibrary::builtin().forFamily(family.toStdString(), "cuda");
        QCOMPARE(templates.size(), size_t(1));
        const auto *t = templates.front();
        const auto p = t->seed(card);
        QCOMPARE(p.at("ilp").get<int>(), ilp);
        QVERIFY(t->valid(p, card));
        QVERIFY(t->render(p, card).find("#define ILP " + std::to_string(ilp)) != std::string::npos);
        const auto plan = t->launch(p, card);
        const std::string grid = plan.at("kernels").at(0).at("grid").at(0).get<std::string>();
        QCOMPARE(grid, "ceil_div(rows * cols, " + std::to_string(256 * 4 * ilp) + ")");
    }

    // The strided norm over a middle dim starts from a point whose registers hold the whole column when
    // some pack width allows it (narrower packs then), else the widest pack reading it twice.
    void stridedNormSeedHoldsTheColumn_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<int>("dim");
        QTest::addColumn<int>("inner");
        QTest::addColumn<int>("vec");
        QTest::addColumn<bool>("held");
        QTest::newRow("dim 300: single values hold it") << QStringLiteral("l2_norm_dim") << 300 << 1000 << 1 << true;
        QTest::newRow("dim 300, softmax") << QStringLiteral("softmax_dim") << 300 << 1000 << 1 << true;
        QTest::newRow("dim 200: pairs hold it") << QStringLiteral("rms_norm_dim") << 200 << 1000 << 2 << true;
        QTest::newRow("dim 64: packs of 4 hold it") << QStringLiteral("rms_norm_dim") << 64 << 262144 << 4 << true;
        // Nothing holds the column: single values where wider packs would leave the device short of
        // blocks (8 x 1000 columns make 64 blocks of 32 packs of 4), the widest pack where they fill it.
        QTest::newRow("dim 5000 over 8 x 1000: nothing holds it") << QStringLiteral("l1_norm_dim") << 5000 << 1000 << 1 << false;
        QTest::newRow("dim 1200 over 8 x 250") << QStringLiteral("l2_norm_dim") << 1200 << 250 << 1 << false;
        QTest::newRow("dim 1200 over 8 x 250, softmax") << QStringLiteral("softmax_dim") << 1200 << 250 << 1 << false;
        QTest::newRow("dim 5000 over 8 x 65536: packs of 4 fill it") << QStringLiteral("l1_norm_dim") << 5000 << 65536 << 4 << false;
    }
    void stridedNormSeedHoldsTheColumn()
    {
        QFETCH(QString, family);
        QFETCH(int, dim);
        QFETCH(int, inner);
        QFETCH(int, vec);
        QFETCH(bool, held);
        const auto card = makeCard(family.toStdString(), {{"outer", 8}, {"dim", dim}, {"inner", inner}});
        const KernelTemplate *t = TemplateLibrary::builtin().find("cuda." + family.toStdString() + ".strided");
        QVERIFY(t);
        const auto p = t->seed(card);
        QVERIFY2(t->valid(p, card), p.dump().c_str());
        QCOMPARE(p.at("vec").get<int>(), vec);
        QCOMPARE(p.at("cache").get<int>() * p.at("by").get<int>() >= dim, held);
        // The grid fills the device wherever 32-column blocks of the seed's packs could.
        const int64_t bx = p.at("bx"), blocks = 8 * ((inner + bx * vec - 1) / (bx * vec));
        QVERIFY2(blocks >= std::min<int64_t>(kCudaFillBlocks, 8 * ((inner + 32 * vec - 1) / (32 * vec))), p.dump().c_str());
        // A column read twice over a short grid keeps as much of it in registers as fits.
        if (!held && blocks < kCudaFillBlocks)
            QVERIFY2(p.at("cache").get<int>() > 0 && p.at("by").get<int>() == 8, p.dump().c_str());
    }

    // A scan's block per row grows until the rows fill the device's thread slots: few rows get long
    // blocks and short serial chains, many rows keep 128 threads.
    void scanSeedFillsTheThreadSlots_data()
    {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("block");
        QTest::newRow("32768 rows (KernelBench)") << 32768 << 128;
        QTest::newRow("4096 rows") << 4096 << 128;
        QTest::newRow("1024 rows") << 1024 << 512;
        QTest::newRow("16 rows") << 16 << 1024;
    }
    void scanSeedFillsTheThreadSlots()
    {
        QFETCH(int, rows);
        QFETCH(int, block);
        for (const char *family : {"cumsum", "cumprod", "cumsum_reverse"}) {
            const auto card = makeCard(family, {{"rows", rows}, {"cols", 16384}});
            const KernelTemplate *t = TemplateLibrary::builtin().find(std::string("cuda.") + family + ".block_scan");
            QVERIFY(t);
            const auto p = t->seed(card);
            QVERIFY2(t->valid(p, card), p.dump().c_str());
            QCOMPARE(p.at("block").get<int>(), block);
        }
    }

    // A KernelBench-style problem whose forward is MinGPT's tanh GELU written out in ATen calls imports
    // (python/kforge_capture.py, then the worker traces it) to a "pointwise" card whose expression is the
    // chain, with the whole forward as its reference; the CPU template's default point verifies against it.
    void fusedProblemVerifiesAgainstItsForward()
    {
        const QString python = test::torchPython();
        if (python.isEmpty())
            QSKIP("no Python with torch (install python3-torch: packaging/install-deps.sh does)");
        QTemporaryDir dir;
        const QString problem = dir.filePath(QStringLiteral("new_gelu.py")), json = dir.filePath(QStringLiteral("new_gelu.json"));
        {
            QFile f(problem);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(R"(import math
import torch
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x, bias):
        x = x + bias
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))
def get_inputs():
    return [torch.randn(16, 300), torch.randn(16, 300)]
def get_init_inputs():
    return []
)");
        }
        QProcess py;
        py.start(python, {QStringLiteral(KFORGE_SOURCE_DIR "/python/kforge_capture.py"), QStringLiteral("problem"), problem, QStringLiteral("--out"), json});
        QVERIFY(py.waitForFinished(120000));
        QVERIFY2(py.exitCode() == 0, py.readAllStandardError().constData());
        const auto w = loadWorkloadFile(json.toStdString());
        const auto reply = m_pool->request({{"type", "profile_workload"}, {"workload", workloadToJson(w)}, {"dir", w.dir}, {"device", "cpu"},
                                            {"problem", true}},
                                           120000);
        QVERIFY2(reply.value("type", "") == "workload_profile", reply.dump().substr(0, 2000).c_str());
        const auto profiled = parseWorkload(reply.at("workload"), "reply");
        const OperatorCard *card = nullptr;
        for (const auto &c : profiled.cards)
            if (c.key == "problem.new_gelu.pointwise")
                card = &c;
        QVERIFY2(card, reply.at("workload").dump().substr(0, 3000).c_str());
        QCOMPARE(card->family, std::string("pointwise"));
        QCOMPARE(card->expression, std::string("(x0 + x1) * 0.5 * (tanh((x0 + x1 + pow(x0 + x1, 3) * 0.044715) * 0.7978845608028654) + 1)"));
        // The problem's text came with the import and defines each of its whole-forward cards.
        QVERIFY2(w.problemSource.find("0.044715 * torch.pow(x, 3.0)") != std::string::npos, w.problemSource.c_str());
        for (const auto &c : profiled.cards)
            if (isProblemCard(c))
                QCOMPARE(c.definition, w.problemSource);
        QVERIFY(isProblemCard(*card));
        const auto templates = TemplateLibrary::builtin().forFamily("pointwise", "cpu");
        QCOMPARE(templates.size(), size_t(1));
        TemplateProposer proposer("cpu");
        const auto proposal = proposer.render(*templates.front(), test::firstPoint(*templates.front()), *card);
        EvalOptions o;
        o.benchmark = false;
        const Verdict v = m_pool->evaluate(*card, proposal.candidate, o);
        std::string why = v.summaryLine() + "\n" + v.compile.log;
        for (const auto &r : v.reasons)
            why += "\n" + r.message;
        QVERIFY2(v.correct(), why.c_str());
        QCOMPARE(v.trials.size(), trialPlan(*card).size());
    }

    // KernelBench level 1's normalization problems at their own shapes (signatures only, nothing allocated)
    // fit a family, on the view named: the traced GroupNorm's groups and LayerNorm's dimensions included.
    void kernelBenchNormsFitAFamily_data()
    {
        QTest::addColumn<QString>("shape");
        QTest::addColumn<QString>("traced"); // "", "group_norm:G" or "layer_norm:d1,d2,..."
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("view");
        QTest::newRow("033 batch norm") << QStringLiteral("64,64,512,512") << QString() << QStringLiteral("batch_norm")
                                        << QStringLiteral("c=64,hw=262144,n=64");
        QTest::newRow("034 instance norm") << QStringLiteral("112,64,512,512") << QString() << QStringLiteral("instance_norm")
                                           << QStringLiteral("c=64,hw=262144,n=112");
        QTest::newRow("035 group norm") << QStringLiteral("112,64,512,512") << QStringLiteral("group_norm:8") << QStringLiteral("instance_norm.g8")
                                        << QStringLiteral("c=8,hw=2097152,n=112");
        QTest::newRow("036 RMS norm over channels") << QStringLiteral("112,64,512,512") << QString() << QStringLiteral("rms_norm_dim.d1")
                                                    << QStringLiteral("dim=64,inner=262144,outer=112");
        QTest::newRow("037 Frobenius norm") << QStringLiteral("112,64,512,512") << QString() << QStringLiteral("frobenius_norm")
                                            << QStringLiteral("cols=512,rows=3670016");
        QTest::newRow("038 L1 norm") << QStringLiteral("32768,65535") << QString() << QStringLiteral("l1_norm_dim.d1")
                                     << QStringLiteral("dim=65535,inner=1,outer=32768");
        QTest::newRow("039 L2 norm") << QStringLiteral("32768,65535") << QString() << QStringLiteral("l2_norm_dim.d1")
                                     << QStringLiteral("dim=65535,inner=1,outer=32768");
        QTest::newRow("040 layer norm") << QStringLiteral("16,64,256,256") << QStringLiteral("layer_norm:64,256,256") << QStringLiteral("instance_norm.ln")
                                        << QStringLiteral("c=1,hw=4194304,n=16");
    }

    void kernelBenchNormsFitAFamily()
    {
        QFETCH(QString, shape);
        QFETCH(QString, traced);
        QFETCH(QString, key);
        QFETCH(QString, view);
        TensorMeta x;
        for (const auto &d : shape.split(QLatin1Char(',')))
            x.shape.push_back(d.toLongLong());
        x.dtype = "float32";
        ProblemSignature sig;
        sig.name = "kb";
        sig.modulePath = "/abs/kb.pt";
        sig.inputs = {x};
        sig.outputs = {x};
        using From = TracedValue::From;
        if (!traced.isEmpty()) {
            const auto op = traced.section(QLatin1Char(':'), 0, 0).toStdString();
            const auto args = traced.section(QLatin1Char(':'), 1).split(QLatin1Char(','));
            auto constant = [](nlohmann::json v) { return TracedValue{From::Constant, 0, std::move(v)}; };
            sig.graph.nodes.push_back({"prim::GetAttr", {}}); // the module's weight
            TracedValue second = constant(args.front().toLongLong());
            if (op == "layer_norm") {
                TracedNode list{"prim::ListConstruct", {}};
                for (const auto &a : args)
                    list.inputs.push_back(constant(a.toLongLong()));
                sig.graph.nodes.push_back(list);
                second = {From::Node, 1, nullptr};
            }
            sig.graph.nodes.push_back({"aten::" + op, {{From::Input, 0, nullptr}, second, {From::Node, 0, nullptr}, {From::Node, 0, nullptr},
                                                       constant(1e-5), constant(true)}});
            sig.graph.outputs = {{From::Node, int(sig.graph.nodes.size() - 1), nullptr}};
        }
        const auto family = key.section(QLatin1Char('.'), 0, 0).toStdString();
        QVERIFY2(familyMismatch(family, sig).empty(), familyMismatch(family, sig).c_str());
        std::string keys;
        for (const auto &c : familyCardsForProblem(sig)) {
            keys += c.key + " ";
            if (c.key != "problem.kb." + key.toStdString())
                continue;
            std::string got;
            for (const auto &[k, v] : c.shape)
                got += (got.empty() ? "" : ",") + k + "=" + std::to_string(v);
            QCOMPARE(QString::fromStdString(got), view);
            return;
        }
        QFAIL(("no card problem.kb." + key.toStdString() + " among " + keys).c_str());
    }

    // KernelBench's normalization problems, small, imported and profiled through the real worker: each gets
    // the card its forward computes (a one-input BatchNorm2d in training mode the batch norm without
    // affine; GroupNorm and a LayerNorm over trailing dimensions, with their default affine, instance norm
    // over the view the traced forward names; x / ||x||_F the Frobenius norm), on which that family's CPU
    // template verifies against the forward; a card of the same shape that computes another function
    // (instance norm per channel for GroupNorm) is rejected. The captured call gets its family's card too
    // (batch and group norm with the module's weight and bias, instance norm, layer norm over rows x the
    // normalized dimensions' product).
    void normProblemsMeetTheirTemplates_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("cardKey");
        QTest::addColumn<QString>("templateId");
        QTest::addColumn<QString>("wrongKey");
        QTest::addColumn<QString>("callFamily");
        QTest::newRow("BatchNorm2d") << QStringLiteral("bn") << QStringLiteral("torch.nn.BatchNorm2d(6)") << QStringLiteral("problem.bn.batch_norm")
                                     << QStringLiteral("cpu.batch_norm.channels") << QStringLiteral("problem.bn.instance_norm")
                                     << QStringLiteral("batch_norm_affine");
        QTest::newRow("GroupNorm") << QStringLiteral("gn") << QStringLiteral("torch.nn.GroupNorm(3, 6)") << QStringLiteral("problem.gn.instance_norm.g3")
                                   << QStringLiteral("cpu.instance_norm.rows") << QStringLiteral("problem.gn.instance_norm") << QStringLiteral("group_norm");
        QTest::newRow("InstanceNorm2d") << QStringLiteral("in") << QStringLiteral("torch.nn.InstanceNorm2d(6)") << QStringLiteral("problem.in.instance_norm")
                                        << QStringLiteral("cpu.instance_norm.rows") << QStringLiteral("problem.in.batch_norm") << QStringLiteral("instance_norm");
        QTest::newRow("LayerNorm over three dims") << QStringLiteral("ln") << QStringLiteral("torch.nn.LayerNorm((6, 5, 7))")
                                                   << QStringLiteral("problem.ln.instance_norm.ln") << QStringLiteral("cpu.instance_norm.rows")
                                                   << QStringLiteral("problem.ln.instance_norm") << QStringLiteral("layer_norm");
        QTest::newRow("Frobenius") << QStringLiteral("fro") << QStringLiteral("Fro()") << QStringLiteral("problem.fro.frobenius_norm")
                                   << QStringLiteral("cpu.frobenius_norm.whole") << QString() << QString();
    }

    void normProblemsMeetTheirTemplates()
    {
        QFETCH(QString, name);
        QFETCH(QString, model);
        QFETCH(QString, cardKey);
        QFETCH(QString, templateId);
        QFETCH(QString, wrongKey);
        QFETCH(QString, callFamily);
        const QString python = test::torchPython();
        if (python.isEmpty())
            QSKIP("no Python with torch (install python3-torch: packaging/install-deps.sh does)");
        QTemporaryDir dir;
        const QString problem = dir.filePath(name + QStringLiteral(".py")), json = dir.filePath(name + QStringLiteral(".json"));
        {
            QFile f(problem);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write((QStringLiteral(R"(import torch
class Fro(torch.nn.Module):
    def forward(self, x):
        return x / torch.norm(x, p='fro')
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.m = %1
    def forward(self, x):
        return self.m(x)
def get_inputs():
    return [torch.rand(4, 6, 5, 7)]
def get_init_inputs():
    return []
)").arg(model)).toUtf8());
        }
        QProcess py;
        py.start(python, {QStringLiteral(KFORGE_SOURCE_DIR "/python/kforge_capture.py"), QStringLiteral("problem"), problem, QStringLiteral("--out"), json});
        QVERIFY(py.waitForFinished(120000));
        QVERIFY2(py.exitCode() == 0, py.readAllStandardError().constData());
        const auto w = loadWorkloadFile(json.toStdString());
        const auto reply = m_pool->request({{"type", "profile_workload"}, {"workload", workloadToJson(w)}, {"dir", w.dir}, {"device", "cpu"},
                                            {"problem", true}},
                                           120000);
        QVERIFY2(reply.value("type", "") == "workload_profile", reply.dump().substr(0, 2000).c_str());
        const auto profiled = parseWorkload(reply.at("workload"), "reply");
        const OperatorCard *card = nullptr, *wrong = nullptr, *call = nullptr;
        std::string keys;
        for (const auto &c : profiled.cards) {
            keys += c.key + " ";
            if (c.key == cardKey.toStdString())
                card = &c;
            if (c.key == wrongKey.toStdString())
                wrong = &c;
            if (!callFamily.isEmpty() && !isProblemCard(c) && c.family == callFamily.toStdString())
                call = &c;
        }
        QVERIFY2(card, keys.c_str());
        QVERIFY2(wrongKey.isEmpty() || wrong, keys.c_str());
        EvalOptions o;
        o.benchmark = false;
        const auto *t = TemplateLibrary::builtin().find(templateId.toStdString());
        QVERIFY(t);
        // The family is asked whether it computes the forward, so at its most accurate point: the first
        // point accumulates in float with one accumulator, whose error on a 210-element row of scale-64
        // values lies at the guard's bound (4.6 units against 4 on some draws), which is the guard's
        // business, not this test's.
        auto point = test::firstPoint(*t);
        if (point.contains("acc"))
            point["acc"] = "double";
        auto verdictOn = [&](const OperatorCard &c) { return m_pool->evaluate(c, TemplateProposer("cpu").render(*t, point, c).candidate, o); };
        const Verdict v = verdictOn(*card);
        std::string why = v.summaryLine() + "\n" + v.compile.log;
        for (const auto &r : v.reasons)
            why += "\n" + r.message;
        QVERIFY2(v.correct(), why.c_str());
        if (wrong) {
            const auto *wt = TemplateLibrary::builtin().forFamily(wrong->family, "cpu").front();
            const Verdict bad = m_pool->evaluate(*wrong, TemplateProposer("cpu").render(*wt, test::firstPoint(*wt), *wrong).candidate, o);
            QVERIFY2(!bad.correct(), bad.summaryLine().c_str());
        }
        QVERIFY2(callFamily.isEmpty() || call, keys.c_str());
        if (call) {
            QCOMPARE(call->shape.count("rows") ? call->shape.at("cols") : call->shape.at("c"), int64_t(callFamily == QStringLiteral("layer_norm") ? 210 : 6));
            const auto *ct = TemplateLibrary::builtin().forFamily(call->family, "cpu").front();
            const Verdict cv = m_pool->evaluate(*call, TemplateProposer("cpu").render(*ct, test::firstPoint(*ct), *call).candidate, o);
            QVERIFY2(cv.correct(), cv.summaryLine().c_str());
        }
    }

    // KernelBench's scans at their own shape (32768 x 32768 float32; 93's mask bool) get their scan
    // family's card over rows x cols, whose CPU template takes it and on which every CUDA template's seed
    // is valid with a plan that resolves, in float32 and bfloat16.
    void kernelBenchScansFitAFamily_data()
    {
        QTest::addColumn<QString>("op");     // the traced forward's scan call
        QTest::addColumn<QString>("mask");   // the second input's dtype, "" for none
        QTest::addColumn<QString>("family");
        QTest::newRow("089 cumsum") << "aten::cumsum" << "" << "cumsum";
        QTest::newRow("090 cumprod") << "aten::cumprod" << "" << "cumprod";
        QTest::newRow("091 reverse cumsum") << "aten::cumsum" << "" << "cumsum_reverse";
        QTest::newRow("092 exclusive cumsum") << "aten::cumsum" << "" << "cumsum_exclusive";
        QTest::newRow("093 masked cumsum") << "aten::cumsum" << "bool" << "masked_cumsum";
        QTest::newRow("093 with a float mask") << "aten::cumsum" << "float32" << "weighted_cumsum";
    }

    void kernelBenchScansFitAFamily()
    {
        QFETCH(QString, op);
        QFETCH(QString, mask);
        QFETCH(QString, family);
        for (const char *dtype : {"float32", "bfloat16"}) {
            TensorMeta x;
            x.shape = {32768, 32768};
            x.dtype = dtype;
            ProblemSignature sig;
            sig.name = "kb";
            sig.modulePath = "/abs/kb.pt";
            sig.inputs = {x};
            if (!mask.isEmpty()) {
                sig.inputs.push_back(x);
                sig.inputs.back().dtype = mask == QStringLiteral("float32") ? std::string(dtype) : mask.toStdString();
            }
            sig.outputs = {x};
            using From = TracedValue::From;
            sig.graph.nodes.push_back({op.toStdString(), {{From::Input, 0, nullptr}, {From::Constant, 0, 1}, {From::Constant, 0, nullptr}}});
            sig.graph.outputs = {{From::Node, 0, nullptr}};
            QVERIFY2(familyMismatch(family.toStdString(), sig).empty(), familyMismatch(family.toStdString(), sig).c_str());
            const OperatorCard *card = nullptr;
            const auto cards = familyCardsForProblem(sig);
            for (const auto &c : cards)
                if (c.key == "problem.kb." + family.toStdString())
                    card = &c;
            QVERIFY2(card, family.toStdString().c_str());
            QCOMPARE(card->shape.at("rows"), int64_t(32768));
            QCOMPARE(card->shape.at("cols"), int64_t(32768));
            const auto cpu = TemplateLibrary::builtin().forFamily(card->family, "cpu");
            QCOMPARE(cpu.size(), size_t(1));
            QCOMPARE(cpu.front()->valid(test::firstPoint(*cpu.front()), *card), std::string(dtype) == "float32");
            const auto cuda = TemplateLibrary::builtin().forFamily(card->family, "cuda");
            QCOMPARE(cuda.size(), size_t(2));
            for (const auto *t : cuda) {
                const auto seed = t->seed(*card);
                QVERIFY2(t->valid(seed, *card), (t->id + " " + seed.dump()).c_str());
                QVERIFY(!t->render(seed, *card).empty());
                QVERIFY(t->launch(seed, *card).at("kernels").size() >= 1);
            }
        }
    }

    // KernelBench's scans (level 1, 89-93), small, imported and profiled through the real worker: each
    // forward gets its scan family's card (the whole forward its reference; 93's mask a bool input, or a
    // float one: the weighted scan), on
    // which that family's CPU template verifies, and another scan family's template with the same inputs
    // does not.
    void scanProblemsMeetTheirTemplates_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("forward");
        QTest::addColumn<QString>("inputs");
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("wrong"); // "" for none with the same inputs
        const QString x = QStringLiteral("torch.rand(16, 300)");
        QTest::newRow("89 cumsum") << "cumsum" << "torch.cumsum(x0, dim=1)" << x << "cumsum" << "cumsum_exclusive";
        QTest::newRow("90 cumprod") << "cumprod" << "torch.cumprod(x0, dim=1)" << x << "cumprod" << "cumsum";
        QTest::newRow("91 reverse cumsum") << "reverse" << "torch.cumsum(x0.flip(1), dim=1).flip(1)" << x << "cumsum_reverse" << "cumsum";
        QTest::newRow("92 exclusive cumsum")
            << "exclusive"
            << "torch.cat((torch.zeros_like(x0.select(1, 0).unsqueeze(1)), torch.cumsum(x0.narrow(dim=1, start=0, length=x0.size(1) - 1), dim=1)), dim=1)"
            << x << "cumsum_exclusive" << "cumsum";
        QTest::newRow("93 masked cumsum") << "masked" << "torch.cumsum(x0 * x1, dim=1)" << "torch.rand(16, 300), torch.randint(0, 2, (16, 300)).bool()"
                                          << "masked_cumsum" << "";
        QTest::newRow("93 with a float mask") << "weighted" << "torch.cumsum(x0 * x1, dim=1)"
                                              << "torch.rand(16, 300), torch.randint(0, 2, (16, 300)).float()" << "weighted_cumsum" << "";
    }

    void scanProblemsMeetTheirTemplates()
    {
        QFETCH(QString, name);
        QFETCH(QString, forward);
        QFETCH(QString, inputs);
        QFETCH(QString, family);
        QFETCH(QString, wrong);
        const QString python = test::torchPython();
        if (python.isEmpty())
            QSKIP("no Python with torch (install python3-torch: packaging/install-deps.sh does)");
        QTemporaryDir dir;
        const QString problem = dir.filePath(name + QStringLiteral(".py")), json = dir.filePath(name + QStringLiteral(".json"));
        {
            QFile f(problem);
            QVERIFY(f.open(QIODevice::WriteOnly));
            const QString args = inputs.count(QStringLiteral("torch.")) > 1 ? QStringLiteral("x0, x1") : QStringLiteral("x0");
            f.write(QStringLiteral("import torch\nclass Model(torch.nn.Module):\n    def forward(self, %1):\n        return %2\n"
                                   "def get_inputs():\n    return [%3]\ndef get_init_inputs():\n    return []\n")
                        .arg(args, forward, inputs)
                        .toUtf8());
        }
        QProcess py;
        py.start(python, {QStringLiteral(KFORGE_SOURCE_DIR "/python/kforge_capture.py"), QStringLiteral("problem"), problem, QStringLiteral("--out"), json});
        QVERIFY(py.waitForFinished(120000));
        QVERIFY2(py.exitCode() == 0, py.readAllStandardError().constData());
        const auto w = loadWorkloadFile(json.toStdString());
        const auto reply = m_pool->request({{"type", "profile_workload"}, {"workload", workloadToJson(w)}, {"dir", w.dir}, {"device", "cpu"},
                                            {"problem", true}},
                                           120000);
        QVERIFY2(reply.value("type", "") == "workload_profile", reply.dump().substr(0, 2000).c_str());
        const auto profiled = parseWorkload(reply.at("workload"), "reply");
        const OperatorCard *card = nullptr;
        std::string keys;
        for (const auto &c : profiled.cards) {
            keys += c.key + " ";
            if (c.family == family.toStdString())
                card = &c;
        }
        QVERIFY2(card, (keys + "has no " + family.toStdString() + " card").c_str());
        QVERIFY(isProblemCard(*card));
        EvalOptions o;
        o.benchmark = false;
        auto verdict = [&](const std::string &f) {
            const auto *t = TemplateLibrary::builtin().forFamily(f, "cpu").front();
            return m_pool->evaluate(*card, TemplateProposer("cpu").render(*t, test::firstPoint(*t), *card).candidate, o);
        };
        const Verdict v = verdict(card->family);
        std::string why = v.summaryLine() + "\n" + v.compile.log;
        for (const auto &r : v.reasons)
            why += "\n" + r.message;
        QVERIFY2(v.correct(), why.c_str());
        QCOMPARE(v.trials.size(), trialPlan(*card).size());
        if (!wrong.isEmpty()) {
            const Verdict bad = verdict(wrong.toStdString());
            QCOMPARE(QString::fromStdString(statusName(bad.status)), QStringLiteral("incorrect"));
        }
    }

    // Kernel text lives in resources/templates/ and is compiled in: every file is there under its own
    // name, with its text, and a name that is not a file is refused by name.
    void kernelSourcesAreEmbedded()
    {
        const auto names = templateSourceNames();
        QVERIFY(std::find(names.begin(), names.end(), "group_norm.cu") != names.end());
        for (const auto &name : names)
            QVERIFY2(!templateSource(name).empty(), name.c_str());
        QVERIFY(templateSource("group_norm.cu").find("kf_group_norm") != std::string::npos);
        try {
            templateSource("no_such_kernel.cu");
            QFAIL("an unknown template source was accepted");
        } catch (const Error &e) {
            QVERIFY(std::string(e.what()).find("no_such_kernel.cu") != std::string::npos);
        }
    }

    // KernelBench's losses, small, imported and profiled through the real worker: each forward gets its
    // fused loss card (the per-element term and the reduction read from the traced graph; hinge's targets
    // one row broadcast over the rows; KL's batchmean; the triplet's margin from the module), on which the
    // CPU template's seed verifies against the forward; the same card with another term is rejected. (The
    // trials draw randn inputs, whose log is NaN where negative: KL's forward is then NaN, and only a
    // term that is finite there is told apart.)
    void lossProblemsMeetTheirTemplates_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("forward");
        QTest::addColumn<QString>("inputs");
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("expression");
        QTest::addColumn<QString>("wrong");
        QTest::newRow("MSE") << "mse" << "torch.mean((x0 - x1) ** 2)" << "torch.rand(64, 100) * 0.5, torch.rand(64, 100)" << "loss_mean"
                             << "pow(x0 - x1, 2)" << "abs(x0 - x1)";
        QTest::newRow("smooth L1") << "huber" << "torch.nn.functional.smooth_l1_loss(x0, x1)" << "torch.randn(64, 100) * 2, torch.rand(64, 100)"
                                   << "loss_mean"
                                   << "where(abs(x0 - x1) < 1, 0.5 * abs(x0 - x1) * abs(x0 - x1) / 1, abs(x0 - x1) - 0.5 * 1)"
                                   << "pow(x0 - x1, 2)";
        QTest::newRow("KL batchmean") << "kl" << "torch.nn.functional.kl_div(torch.log(x0), x1, reduction='batchmean')"
                                      << "torch.rand(32, 50).softmax(dim=-1), torch.rand(32, 50).softmax(dim=-1)" << "loss_batchmean"
                                      << "where(x1 == 0, 0, x1 * log(x1)) - x1 * log(x0)" << "pow(x1 - x0, 2)";
        QTest::newRow("hinge") << "hinge" << "torch.mean(torch.clamp(1 - x0 * x1, min=0))"
                               << "torch.randn(32, 48), torch.randint(0, 2, (48,)).float() * 2 - 1" << "loss_mean" << "max(1 - x0 * x1, 0)"
                               << "max(1 - x0, 0)";
        QTest::newRow("triplet, margin 0.7") << "triplet" << "torch.nn.functional.triplet_margin_loss(x0, x1, x2, margin=0.7)"
                                             << "torch.rand(16, 40), torch.rand(16, 40), torch.rand(16, 40)" << "triplet_margin_loss"
                                             << "max(0.7 + x1 - x2, 0)" << "max(1 + x1 - x2, 0)";
    }

    void lossProblemsMeetTheirTemplates()
    {
        QFETCH(QString, name);
        QFETCH(QString, forward);
        QFETCH(QString, inputs);
        QFETCH(QString, family);
        QFETCH(QString, expression);
        QFETCH(QString, wrong);
        const QString python = test::torchPython();
        if (python.isEmpty())
            QSKIP("no Python with torch (install python3-torch: packaging/install-deps.sh does)");
        QTemporaryDir dir;
        const QString problem = dir.filePath(name + QStringLiteral(".py")), json = dir.filePath(name + QStringLiteral(".json"));
        {
            QFile f(problem);
            QVERIFY(f.open(QIODevice::WriteOnly));
            QStringList args;
            for (int i = 0; i < (name == QStringLiteral("triplet") ? 3 : 2); ++i)
                args << QStringLiteral("x%1").arg(i);
            f.write(QStringLiteral("import torch\nclass Model(torch.nn.Module):\n    def forward(self, %1):\n        return %2\n"
                                   "def get_inputs():\n    return [%3]\ndef get_init_inputs():\n    return []\n")
                        .arg(args.join(QStringLiteral(", ")), forward, inputs)
                        .toUtf8());
        }
        QProcess py;
        py.start(python, {QStringLiteral(KFORGE_SOURCE_DIR "/python/kforge_capture.py"), QStringLiteral("problem"), problem, QStringLiteral("--out"), json});
        QVERIFY(py.waitForFinished(120000));
        QVERIFY2(py.exitCode() == 0, py.readAllStandardError().constData());
        const auto w = loadWorkloadFile(json.toStdString());
        const auto reply = m_pool->request({{"type", "profile_workload"}, {"workload", workloadToJson(w)}, {"dir", w.dir}, {"device", "cpu"},
                                            {"problem", true}},
                                           120000);
        QVERIFY2(reply.value("type", "") == "workload_profile", reply.dump().substr(0, 2000).c_str());
        const auto profiled = parseWorkload(reply.at("workload"), "reply");
        const OperatorCard *card = nullptr;
        std::string keys;
        for (const auto &c : profiled.cards) {
            keys += c.key + (c.expression.empty() ? "" : " (" + c.expression + ")") + " ";
            if (c.family == family.toStdString() && c.expression == expression.toStdString())
                card = &c;
        }
        QVERIFY2(card, (keys + "has no " + family.toStdString() + " card computing " + expression.toStdString()).c_str());
        QVERIFY(isProblemCard(*card));
        const auto *t = TemplateLibrary::builtin().forFamily(card->family, "cpu").front();
        EvalOptions o;
        o.benchmark = false;
        const Verdict v = m_pool->evaluate(*card, TemplateProposer("cpu").render(*t, t->seed(*card), *card).candidate, o);
        std::string why = v.summaryLine() + "\n" + v.compile.log;
        for (const auto &r : v.reasons)
            why += "\n" + r.message;
        QVERIFY2(v.correct(), why.c_str());
        QCOMPARE(v.trials.size(), trialPlan(*card).size());
        auto other = *card;
        other.expression = wrong.toStdString();
        const Verdict bad = m_pool->evaluate(*card, TemplateProposer("cpu").render(*t, t->seed(other), other).candidate, o);
        QVERIFY2(!bad.correct(), bad.summaryLine().c_str());
    }

    // KernelBench level 1's losses (94, 96, 98, 99, 100) at their own shapes, with the graphs their
    // forwards trace to: each gets its loss card over the view it reduces, whose CPU template serves it and
    // whose CUDA seed is valid, in float32 and bfloat16.
    void kernelBenchLossesFitAFamily_data()
    {
        QTest::addColumn<QString>("graph");
        QTest::addColumn<QString>("shapes"); // inputs, ';' between
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("expression");
        QTest::addColumn<QString>("view");
        QTest::newRow("094 MSE") << "mse" << "32768,32768;32768,32768" << "loss_mean" << "pow(x0 - x1, 2)" << "cols=32768,rows=32768";
        QTest::newRow("096 smooth L1") << "smooth_l1" << "32768,32768;32768,32768" << "loss_mean"
                                       << "where(abs(x0 - x1) < 1, 0.5 * abs(x0 - x1) * abs(x0 - x1) / 1, abs(x0 - x1) - 0.5 * 1)"
                                       << "cols=32768,rows=32768";
        QTest::newRow("098 KL batchmean") << "kl" << "16384,16384;16384,16384" << "loss_batchmean"
                                          << "where(x1 == 0, 0, x1 * log(x1)) - x1 * log(x0)" << "cols=16384,rows=16384";
        QTest::newRow("098 KL batchmean over three dimensions") << "kl" << "8,16,64;8,16,64" << "loss_batchmean"
                                                                << "where(x1 == 0, 0, x1 * log(x1)) - x1 * log(x0)" << "cols=1024,rows=8";
        QTest::newRow("099 triplet") << "triplet" << "32768,8192;32768,8192;32768,8192" << "triplet_margin_loss"
                                     << "max(1 + positive - negative, 0)" << "cols=8192,rows=32768";
        QTest::newRow("100 hinge") << "hinge" << "32768,32768;32768" << "loss_mean" << "max(1 - x0 * x1, 0)" << "cols=32768,rows=32768";
        QTest::newRow("100 hinge over three dimensions") << "hinge" << "4,6,10;10" << "loss_mean" << "max(1 - x0 * x1, 0)" << "cols=10,rows=24";
    }

    void kernelBenchLossesFitAFamily()
    {
        QFETCH(QString, graph);
        QFETCH(QString, shapes);
        QFETCH(QString, key);
        QFETCH(QString, expression);
        QFETCH(QString, view);
        ProblemSignature sig;
        sig.name = "kb";
        sig.modulePath = "/abs/kb.pt";
        for (const auto &s : shapes.split(QLatin1Char(';'))) {
            TensorMeta t;
            for (const auto &d : s.split(QLatin1Char(',')))
                t.shape.push_back(d.toLongLong());
            t.dtype = "float32";
            sig.inputs.push_back(t);
        }
        TensorMeta scalar;
        scalar.dtype = "float32";
        sig.outputs = {scalar};
        using From = TracedValue::From;
        auto in = [](int i) { return TracedValue{From::Input, i, nullptr}; };
        auto node = [](int i) { return TracedValue{From::Node, i, nullptr}; };
        auto constant = [](nlohmann::json v) { return TracedValue{From::Constant, 0, std::move(v)}; };
        auto &g = sig.graph;
        if (graph == QStringLiteral("mse"))
            g.nodes = {{"aten::sub.Tensor", {in(0), in(1), constant(1)}}, {"aten::pow.Tensor_Scalar", {node(0), constant(2)}},
                       {"aten::mean", {node(1), constant(nullptr)}}};
        else if (graph == QStringLiteral("smooth_l1")) // F.smooth_l1_loss broadcasts first
            g.nodes = {{"prim::ListConstruct", {in(0), in(1)}}, {"aten::broadcast_tensors", {node(0)}}, {"prim::ListUnpack", {node(1)}},
                       {"aten::smooth_l1_loss", {node(2), node(2), constant(1), constant(1.0)}}};
        else if (graph == QStringLiteral("kl")) // F.kl_div's batchmean: the sum over size(input, 0)
            g.nodes = {{"aten::log", {in(0)}}, {"aten::kl_div", {node(0), in(1), constant(2), constant(false)}},
                       {"aten::size.int", {node(0), constant(0)}}, {"prim::NumToTensor.Scalar", {node(2)}},
                       {"aten::div.Tensor", {node(1), node(3)}}};
        else if (graph == QStringLiteral("triplet"))
            g.nodes = {{"prim::GetAttr", {}},
                       {"aten::triplet_margin_loss", {in(0), in(1), in(2), constant(1.0), constant(2.0), constant(1e-6), constant(false), constant(1)}}};
        else
            g.nodes = {{"aten::mul.Tensor", {in(0), in(1)}}, {"aten::rsub.Scalar", {node(0), constant(1), constant(1)}},
                       {"aten::clamp", {node(1), constant(0), constant(nullptr)}}, {"aten::mean", {node(2), constant(nullptr)}}};
        g.outputs = {node(int(g.nodes.size()) - 1)};
        std::string keys;
        for (const auto &c : familyCardsForProblem(sig)) {
            keys += c.key + " ";
            if (c.key != "problem.kb." + key.toStdString())
                continue;
            QCOMPARE(QString::fromStdString(c.expression), expression);
            std::string got;
            for (const auto &[k, v] : c.shape)
                got += (got.empty() ? "" : ",") + k + "=" + std::to_string(v);
            QCOMPARE(QString::fromStdString(got), view);
            for (DType dt : {DType::F32, DType::BF16}) {
                auto card = c;
                for (auto &t : card.inputs)
                    t.dtype = dt;
                card.outputs.front().dtype = dt;
                for (const char *backend : {"cpu", "cuda"}) {
                    const auto templates = TemplateLibrary::builtin().forFamily(card.family, backend);
                    QCOMPARE(templates.size(), size_t(1));
                    const auto *t = templates.front();
                    const auto p = t->seed(card);
                    QCOMPARE(t->valid(p, card), dt == DType::F32 || std::string(backend) == "cuda");
                    if (t->launch && t->valid(p, card))
                        QCOMPARE(t->launch(p, card).at("kernels").size(), size_t(2));
                }
            }
            return;
        }
        QFAIL(("no card problem.kb." + key.toStdString() + " among " + keys).c_str());
    }

    // What the loss patterns refuse, each with its reason: no fused card, and the forward keeps its other cards.
    void lossPatternsSayWhyNot_data()
    {
        QTest::addColumn<QString>("graph");
        QTest::addColumn<QString>("why");
        QTest::newRow("reduction none") << "mse_none" << "reduction none";
        QTest::newRow("mean in float64") << "mean_dtype" << "with a dtype";
        QTest::newRow("a sum over a constant") << "div_constant" << "divides by something other than a sum over size(x, 0)";
        QTest::newRow("a softmax") << "softmax" << "not a mean, a sum or a loss";
        QTest::newRow("a [rows, 1] target") << "column_target" << "neither of the largest input's shape nor one row";
        QTest::newRow("triplet with the 1-norm") << "triplet_p1" << "other than the 2-norm";
        QTest::newRow("a ListUnpack of nothing") << "bad_unpack" << "could not be read as a loss";
    }

    void lossPatternsSayWhyNot()
    {
        QFETCH(QString, graph);
        QFETCH(QString, why);
        using From = TracedValue::From;
        auto in = [](int i) { return TracedValue{From::Input, i, nullptr}; };
        auto node = [](int i) { return TracedValue{From::Node, i, nullptr}; };
        auto constant = [](nlohmann::json v) { return TracedValue{From::Constant, 0, std::move(v)}; };
        ProblemSignature sig;
        sig.name = "p";
        sig.modulePath = "/abs/p.pt";
        TensorMeta x, scalar;
        x.shape = {64, 100};
        x.dtype = scalar.dtype = "float32";
        sig.inputs = {x, x};
        sig.outputs = {scalar};
        auto &g = sig.graph;
        if (graph == QStringLiteral("mse_none"))
            g.nodes = {{"aten::mse_loss", {in(0), in(1), constant(0)}}};
        else if (graph == QStringLiteral("mean_dtype"))
            g.nodes = {{"aten::sub.Tensor", {in(0), in(1), constant(1)}}, {"aten::mean", {node(0), constant(7)}}};
        else if (graph == QStringLiteral("div_constant"))
            g.nodes = {{"aten::mse_loss", {in(0), in(1), constant(2)}}, {"aten::div.Scalar", {node(0), constant(64)}}};
        else if (graph == QStringLiteral("softmax"))
            g.nodes = {{"aten::softmax.int", {in(0), constant(-1), constant(nullptr)}}};
        else if (graph == QStringLiteral("column_target")) {
            sig.inputs[1].shape = {64, 1};
            g.nodes = {{"aten::mse_loss", {in(0), in(1), constant(1)}}};
        } else if (graph == QStringLiteral("triplet_p1")) {
            sig.inputs.push_back(x);
            g.nodes = {{"aten::triplet_margin_loss", {in(0), in(1), in(2), constant(1.0), constant(1.0), constant(1e-6), constant(false), constant(1)}}};
        } else
            g.nodes = {{"prim::ListUnpack", {}}, {"aten::mse_loss", {node(0), node(0), constant(1)}}};
        g.outputs = {node(int(g.nodes.size()) - 1)};
        std::string reason;
        const bool triplet = graph.startsWith(QStringLiteral("triplet"));
        QVERIFY(!(triplet ? tripletProblemCard(sig, &reason) : lossProblemCard(sig, &reason)));
        QVERIFY2(reason.find(why.toStdString()) != std::string::npos, reason.c_str());
        for (const auto &c : familyCardsForProblem(sig))
            QVERIFY2(c.family.rfind("loss_", 0) != 0 && c.key.find(".traced") == std::string::npos, c.key.c_str());
    }
};

QTEST_GUILESS_MAIN(TestTemplates)
#include "tst_templates.moc"
