// The knowledge base: SQLite's FTS5, the notes shipped in resources/knowledge (compiled in), malformed
// notes refused with their file and line, retrieval by architecture, family and bottleneck, user notes
// beside the shipped ones, and the lesson a real CPU search writes when it ends, which the next
// search of the same operator starts from.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <set>

#include "knowledge/knowledge_base.h"
#include "knowledge/lessons.h"
#include "ops/workload.h"
#include "pool/worker_pool.h"
#include "proposers/list_proposer.h"
#include "proposers/template_proposer.h"
#include "protocol/ptxas_log.h"
#include "search/search_engine.h"
#include "store/session_store.h"
#include "test_support.h"
#include "util/error.h"

using namespace kforge;
using namespace kforge::knowledge;
using J = nlohmann::json;

namespace {

std::string titles(const std::vector<Passage> &ps)
{
    std::string out;
    for (const auto &p : ps)
        out += (out.empty() ? "" : " | ") + p.note->title;
    return out;
}

bool hasTitle(const std::vector<Passage> &ps, const std::string &part)
{
    for (const auto &p : ps)
        if (p.note->title.find(part) != std::string::npos)
            return true;
    return false;
}

void writeFile(const QString &path, const std::string &text)
{
    QDir().mkpath(QFileInfo(path).path());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(text.data(), qint64(text.size()));
}

const char *kGoodNote = "---\nkind: family\ntitle: A user's softmax trick\narch: sm_90\nfamily: softmax\nbottleneck: latency\n---\n"
                        "Prefetch the next row with zebrafish loads.\n";

} // namespace

class TestKnowledge : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;

private slots:
    void fts5IsAvailable()
    {
        std::string why;
        QVERIFY2(KnowledgeBase::fts5Available(&why), why.c_str());
    }

    // Every file in resources/knowledge is compiled in and parses; every GPU the notes promise has one.
    void shippedNotesLoad()
    {
        const KnowledgeBase kb = KnowledgeBase::load("");
        QVERIFY(kb.problems().empty());
        const QDir dir(QStringLiteral(KFORGE_SOURCE_DIR "/resources/knowledge"));
        const auto files = dir.entryList({QStringLiteral("*.md")}, QDir::Files);
        QVERIFY(!files.isEmpty());
        QCOMPARE(int(builtinNotes().size()), int(files.size()));
        QCOMPARE(kb.notes().size(), builtinNotes().size());
        for (const auto &b : builtinNotes())
            QVERIFY2(files.contains(QString::fromLatin1(b.name)), b.name);
        std::set<std::string> hardware;
        for (const auto &n : kb.notes()) {
            QVERIFY2(n.source.rfind("builtin:", 0) == 0, n.source.c_str());
            if (n.kind == Kind::Hardware)
                for (const auto &d : n.devices)
                    hardware.insert(d);
        }
        for (const char *d : {"H100", "H200", "A100", "L40S", "GB10", "RTX 4090"})
            QVERIFY2(hardware.count(d), d);
    }

    void malformedNoteNamesFileAndLine_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("error"); // what the message starts with
        QTest::newRow("no front matter") << QStringLiteral("# Title\nbody\n") << QStringLiteral("bad.md:1: a note starts with a front matter");
        QTest::newRow("unknown kind") << QStringLiteral("---\nkind: recipe\ntitle: t\n---\nbody\n")
                                      << QStringLiteral("bad.md:2: kind takes hardware, family or lesson, not 'recipe'");
        QTest::newRow("unknown key") << QStringLiteral("---\nkind: family\ntitle: t\ncolour: blue\n---\nbody\n")
                                     << QStringLiteral("bad.md:4: unknown front matter key 'colour'");
        QTest::newRow("not key: value") << QStringLiteral("---\nkind: family\njust words\n---\nbody\n")
                                        << QStringLiteral("bad.md:3: expected 'key: value' in the front matter, not 'just words'");
        QTest::newRow("key twice") << QStringLiteral("---\nkind: family\ntitle: a\ntitle: b\n---\nbody\n")
                                   << QStringLiteral("bad.md:4: title is given twice");
        QTest::newRow("bad architecture") << QStringLiteral("---\nkind: family\ntitle: t\narch: sm_90, hopper\n---\nbody\n")
                                          << QStringLiteral("bad.md:4: arch takes architectures such as sm_90");
        QTest::newRow("bad bottleneck") << QStringLiteral("---\nkind: family\ntitle: t\nbottleneck: memory_bound, slowness\n---\nbody\n")
                                        << QStringLiteral("bad.md:4: bottleneck takes memory_bound, compute_bound");
        QTest::newRow("empty list item") << QStringLiteral("---\nkind: family\ntitle: t\nfamily: softmax,,norm\n---\nbody\n")
                                         << QStringLiteral("bad.md:4: family has an empty item");
        QTest::newRow("bad number") << QStringLiteral("---\nkind: lesson\ntitle: t\narch: cpu\nsignature: s\nspeedup: fast\n---\nbody\n")
                                    << QStringLiteral("bad.md:6: speedup takes a number");
        QTest::newRow("not closed") << QStringLiteral("---\nkind: family\ntitle: t\nbody\n")
                                    << QStringLiteral("bad.md:4: expected 'key: value'");
        QTest::newRow("never closed") << QStringLiteral("---\nkind: family\ntitle: t\n")
                                      << QStringLiteral("bad.md:3: the front matter that starts on line 1 is not closed");
        QTest::newRow("no kind") << QStringLiteral("---\ntitle: t\n---\nbody\n") << QStringLiteral("bad.md:3: the front matter has no kind");
        QTest::newRow("no title") << QStringLiteral("---\nkind: family\n---\nbody\n") << QStringLiteral("bad.md:3: the front matter has no title");
        QTest::newRow("hardware without arch") << QStringLiteral("---\nkind: hardware\ntitle: t\n---\nbody\n")
                                               << QStringLiteral("bad.md:4: a hardware note names its architecture");
        QTest::newRow("hardware for any") << QStringLiteral("---\nkind: hardware\ntitle: t\narch: any\n---\nbody\n")
                                          << QStringLiteral("bad.md:5: a hardware note is for named architectures");
        QTest::newRow("lesson without signature") << QStringLiteral("---\nkind: lesson\ntitle: t\narch: cpu\n---\nbody\n")
                                                  << QStringLiteral("bad.md:5: a lesson names the operator signature");
        QTest::newRow("no body") << QStringLiteral("---\nkind: family\ntitle: t\n---\n\n  \n")
                                 << QStringLiteral("bad.md:5: the note has no text after its front matter");
    }

    void malformedNoteNamesFileAndLine()
    {
        QFETCH(QString, text);
        QFETCH(QString, error);
        std::string got;
        try {
            parseNote(text.toStdString(), "bad.md");
        } catch (const Error &e) {
            got = e.what();
        }
        QVERIFY2(got.rfind(error.toStdString(), 0) == 0, got.empty() ? "accepted" : got.c_str());
    }

    // A malformed user note is left out with its file and line; the good ones beside it still load.
    void userNotesExtendTheBase()
    {
        const QString dir = m_dir.filePath(QStringLiteral("user"));
        writeFile(dir + QStringLiteral("/mine.md"), kGoodNote);
        writeFile(dir + QStringLiteral("/sub/broken.md"), "---\nkind: family\ntitle: broken\nfamily: Soft Max\n---\nx\n");
        writeFile(dir + QStringLiteral("/readme.txt"), "not a note");
        qputenv("KFORGE_KNOWLEDGE_DIR", dir.toUtf8());
        QCOMPARE(userDir(), dir.toStdString());
        const auto kb = KnowledgeBase::load();
        qunsetenv("KFORGE_KNOWLEDGE_DIR");
        QCOMPARE(kb.notes().size(), builtinNotes().size() + 1);
        QCOMPARE(kb.problems().size(), size_t(1));
        const auto problem = kb.problems().front();
        QVERIFY2(problem.find("sub/broken.md:4: family takes family names") != std::string::npos, problem.c_str());

        Query q;
        q.arch = "sm_90";
        q.families = {"softmax"};
        q.text = "zebrafish";
        q.kinds = {Kind::Family};
        const auto r = kb.retrieve(q);
        QVERIFY2(!r.empty() && r.front().note->title == "A user's softmax trick", titles(r).c_str());
        QVERIFY(r.front().note->source.find("mine.md") != std::string::npos);
        // Not for another architecture.
        q.arch = "sm_80";
        QVERIFY(!hasTitle(kb.retrieve(q), "A user's softmax trick"));
    }

    void hardwareNoteForTheDevice_data()
    {
        QTest::addColumn<QString>("arch");
        QTest::addColumn<QString>("device");
        QTest::addColumn<QString>("title"); // "" when no hardware note applies
        QTest::newRow("H200") << QStringLiteral("sm_90") << QStringLiteral("NVIDIA H200") << QStringLiteral("NVIDIA H200");
        QTest::newRow("H200 NVL") << QStringLiteral("sm_90") << QStringLiteral("NVIDIA H200 NVL") << QStringLiteral("NVIDIA H200");
        QTest::newRow("H100 SXM") << QStringLiteral("sm_90") << QStringLiteral("NVIDIA H100 80GB HBM3") << QStringLiteral("NVIDIA H100");
        QTest::newRow("A100") << QStringLiteral("sm_80") << QStringLiteral("NVIDIA A100-SXM4-80GB") << QStringLiteral("NVIDIA A100");
        QTest::newRow("sm_80, no name") << QStringLiteral("sm_80") << QString() << QStringLiteral("NVIDIA A100");
        QTest::newRow("L40S") << QStringLiteral("sm_89") << QStringLiteral("NVIDIA L40S") << QStringLiteral("NVIDIA L40S");
        QTest::newRow("RTX 4090") << QStringLiteral("sm_89") << QStringLiteral("NVIDIA GeForce RTX 4090")
                                  << QStringLiteral("NVIDIA GeForce RTX 4090");
        QTest::newRow("GB10") << QStringLiteral("sm_121") << QStringLiteral("NVIDIA GB10") << QStringLiteral("NVIDIA GB10");
        QTest::newRow("cpu") << QStringLiteral("cpu") << QStringLiteral("AMD EPYC") << QString();
        QTest::newRow("unknown GPU") << QStringLiteral("sm_75") << QStringLiteral("Tesla T4") << QString();
    }

    void hardwareNoteForTheDevice()
    {
        QFETCH(QString, arch);
        QFETCH(QString, device);
        QFETCH(QString, title);
        const auto kb = KnowledgeBase::load("");
        const Note *n = kb.hardwareNote(arch.toStdString(), device.toStdString());
        if (title.isEmpty()) {
            QVERIFY2(!n, n ? n->title.c_str() : "");
            return;
        }
        QVERIFY(n);
        QVERIFY2(n->title.rfind(title.toStdString(), 0) == 0, n->title.c_str());
    }

    // What a prompt for an sm_90 device gets, against an sm_80 one: the H200's notes, not the A100's.
    void retrievalFollowsTheArchitecture()
    {
        const auto kb = KnowledgeBase::load("");
        Query q;
        q.arch = "sm_90";
        q.deviceName = "NVIDIA H200";
        q.families = familiesOf(makeCard("softmax", {{"rows", 8}, {"cols", 131072}}));
        q.text = "aten::_softmax softmax";
        q.limit = 20;
        auto r = kb.retrieve(q);
        QVERIFY2(!r.empty() && r.front().note->title.rfind("NVIDIA H200", 0) == 0, titles(r).c_str());
        QVERIFY2(hasTitle(r, "Vocabulary-length softmax rows on the H200"), titles(r).c_str());
        QVERIFY2(!hasTitle(r, "A100"), titles(r).c_str());

        q.arch = "sm_80";
        q.deviceName = "NVIDIA A100-SXM4-40GB";
        r = kb.retrieve(q);
        QVERIFY2(!r.empty() && r.front().note->title.rfind("NVIDIA A100", 0) == 0, titles(r).c_str());
        QVERIFY2(!hasTitle(r, "H200") && !hasTitle(r, "H100"), titles(r).c_str());
        QVERIFY2(hasTitle(r, "Row-wise softmax"), titles(r).c_str()); // notes for any architecture still come
    }

    void familyAndBottleneckFilters_data()
    {
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("bottleneck");
        QTest::addColumn<QString>("first");      // the first family note retrieved
        QTest::addColumn<QStringList>("present"); // among the retrieved
        QTest::addColumn<QStringList>("absent");
        const auto softmax = QStringLiteral("Row-wise softmax"), norm = QStringLiteral("Layer norm"), scan = QStringLiteral("Scans"),
                   reduction = QStringLiteral("Reductions"), elementwise = QStringLiteral("Elementwise"),
                   spills = QStringLiteral("Register spills"), occupancy = QStringLiteral("Low occupancy"),
                   roofline = QStringLiteral("near the memory roofline");
        QTest::newRow("softmax") << QStringLiteral("softmax") << QString() << softmax << QStringList{softmax}
                                 << QStringList{norm, scan, reduction};
        QTest::newRow("layer norm") << QStringLiteral("layer_norm") << QString() << norm << QStringList{norm} << QStringList{softmax, scan};
        QTest::newRow("group norm") << QStringLiteral("group_norm") << QString() << norm << QStringList{norm} << QStringList{scan};
        QTest::newRow("cumsum") << QStringLiteral("cumsum") << QString() << scan << QStringList{scan} << QStringList{softmax, norm};
        QTest::newRow("mean") << QStringLiteral("mean") << QString() << reduction << QStringList{reduction} << QStringList{scan};
        QTest::newRow("gelu") << QStringLiteral("gelu") << QString() << elementwise << QStringList{elementwise} << QStringList{norm};
        QTest::newRow("spilling softmax") << QStringLiteral("softmax") << QStringLiteral("register_spills") << softmax
                                          << QStringList{softmax, spills} << QStringList{occupancy, roofline};
        QTest::newRow("latency-bound norm") << QStringLiteral("layer_norm") << QStringLiteral("latency") << norm
                                            << QStringList{norm, occupancy} << QStringList{spills, roofline};
        QTest::newRow("memory-bound scan") << QStringLiteral("cumsum") << QStringLiteral("memory_bound") << scan
                                           << QStringList{scan, roofline} << QStringList{spills, occupancy};
    }

    void familyAndBottleneckFilters()
    {
        QFETCH(QString, family);
        QFETCH(QString, bottleneck);
        QFETCH(QString, first);
        QFETCH(QStringList, present);
        QFETCH(QStringList, absent);
        const auto kb = KnowledgeBase::load("");
        const auto card = makeCard(family.toStdString(), family == QStringLiteral("group_norm")
                                                             ? ShapeBindings{{"n", 2}, {"c", 8}, {"hw", 64}, {"groups", 2}}
                                                             : ShapeBindings{{"rows", 4}, {"cols", 64}});
        Query q;
        q.arch = "cpu";
        q.families = familiesOf(card);
        q.bottleneck = bottleneck.toStdString();
        q.text = card.atenOp + " " + card.family;
        q.kinds = {Kind::Family};
        q.limit = 20;
        const auto r = kb.retrieve(q);
        QVERIFY(!r.empty());
        QVERIFY2(r.front().note->title.rfind(first.toStdString(), 0) == 0, titles(r).c_str());
        for (const auto &p : present)
            QVERIFY2(hasTitle(r, p.toStdString()), qPrintable(p + QStringLiteral(" missing from ") + QString::fromStdString(titles(r))));
        for (const auto &a : absent)
            QVERIFY2(!hasTitle(r, a.toStdString()), qPrintable(a + QStringLiteral(" in ") + QString::fromStdString(titles(r))));
        QVERIFY2(!hasTitle(r, "H200"), titles(r).c_str()); // sm_90 notes are not for the CPU
    }

    void bottleneckOfANode_data()
    {
        QTest::addColumn<QString>("log");
        QTest::addColumn<QString>("profile");
        QTest::addColumn<double>("floorUs");
        QTest::addColumn<double>("medianUs");
        QTest::addColumn<QString>("expected");
        const auto spilled = QStringLiteral("ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
                                            "ptxas info    : Function properties for k\n"
                                            "ptxas         .     24 bytes stack frame, 16 bytes spill stores, 8 bytes spill loads\n"
                                            "ptxas info    : Used 255 registers, used 1 barriers, 380 bytes cmem[0]\n");
        QTest::newRow("spills") << spilled << QString() << 10.0 << 11.0 << QStringLiteral("register_spills");
        QTest::newRow("profiled, memory") << QString() << QStringLiteral(R"({"memory_throughput_pct":91,"compute_throughput_pct":30})")
                                          << 10.0 << 30.0 << QStringLiteral("memory_bound");
        QTest::newRow("profiled, compute") << QString() << QStringLiteral(R"({"memory_throughput_pct":20,"compute_throughput_pct":85})")
                                           << 10.0 << 30.0 << QStringLiteral("compute_bound");
        QTest::newRow("profiled, occupancy")
            << QString() << QStringLiteral(R"({"memory_throughput_pct":20,"compute_throughput_pct":15,"achieved_occupancy_pct":12})") << 10.0
            << 30.0 << QStringLiteral("occupancy");
        QTest::newRow("profiled, latency")
            << QString() << QStringLiteral(R"({"memory_throughput_pct":35,"compute_throughput_pct":15,"achieved_occupancy_pct":70})") << 10.0
            << 30.0 << QStringLiteral("latency");
        QTest::newRow("near the floor") << QString() << QString() << 10.0 << 12.0 << QStringLiteral("memory_bound");
        QTest::newRow("far from the floor") << QString() << QString() << 10.0 << 40.0 << QStringLiteral("latency");
        QTest::newRow("nothing known") << QString() << QString() << 0.0 << 0.0 << QString();
    }

    void bottleneckOfANode()
    {
        QFETCH(QString, log);
        QFETCH(QString, profile);
        QFETCH(double, floorUs);
        QFETCH(double, medianUs);
        QFETCH(QString, expected);
        NodeDetail d;
        d.node.status = "not_faster";
        d.verdict.status = VerdictStatus::NotFaster;
        d.verdict.compile.log = log.toStdString();
        d.verdict.rooflineUs = floorUs;
        d.verdict.candidate.summary.median = medianUs;
        if (!profile.isEmpty())
            d.profile = J::parse(profile.toStdString());
        QCOMPARE(QString::fromStdString(bottleneckOf(d)), expected);
        d.verdict.status = VerdictStatus::CompileError; // a failed node has no bottleneck
        QCOMPARE(QString::fromStdString(bottleneckOf(d)), QString());
    }

    void lessonRoundTrip()
    {
        Note n;
        n.kind = Kind::Lesson;
        n.title = "Lesson: aten::_softmax on sm_90, 1.8x over ATen";
        n.archs = {"sm_90"};
        n.families = {"softmax"};
        n.bottlenecks = {"memory_bound"};
        n.signature = "aten::_softmax(float32[rows,cols]) cols=4096,rows=8 #0011aabb";
        n.speedup = 1.8;
        n.roofline = 0.92;
        n.templateId = "cuda.softmax.rows";
        n.point = R"({"threads":256,"vec":4})";
        n.backend = "cuda";
        n.session = "/tmp/s.kforge";
        n.node = 12;
        n.body = "Won.\n\n```cuda\nextern \"C\" __global__ void k() {}\n```\n\nLaunch plan:\n```json\n{\"kernels\":[{\"name\":\"k\"}]}\n```\n";
        const auto back = parseNote(formatNote(n), "lesson.md");
        QCOMPARE(back.signature, n.signature);
        QCOMPARE(back.point, n.point);
        QCOMPARE(back.templateId, n.templateId);
        QCOMPARE(back.node, n.node);
        QVERIFY(std::abs(back.speedup - 1.8) < 1e-9);
        QVERIFY(std::abs(back.roofline - 0.92) < 1e-9);
        QCOMPARE(back.body, n.body);
        const auto c = lessonCandidate(back);
        QVERIFY(c);
        QCOMPARE(c->backend, std::string("cuda"));
        QCOMPARE(c->source, std::string("extern \"C\" __global__ void k() {}\n"));
        QCOMPARE(c->launch["kernels"][0]["name"].get<std::string>(), std::string("k"));
        n.body = "no code here\n";
        QVERIFY(!lessonCandidate(n));
    }

    void signatureTellsOperatorsApart()
    {
        const auto a = makeCard("softmax", {{"rows", 8}, {"cols", 1024}});
        const auto b = makeCard("softmax", {{"rows", 8}, {"cols", 2048}});
        const auto c = makeCard("log_softmax", {{"rows", 8}, {"cols", 1024}});
        const auto d = makeCard("softmax", {{"rows", 8}, {"cols", 1024}}, DType::F16);
        QCOMPARE(operatorSignature(a), operatorSignature(makeCard("softmax", {{"rows", 8}, {"cols", 1024}})));
        const std::set<std::string> all{operatorSignature(a), operatorSignature(b), operatorSignature(c), operatorSignature(d)};
        QCOMPARE(all.size(), size_t(4));
        QVERIFY2(operatorSignature(a).rfind("aten::_softmax(float32[rows,cols]) cols=1024,rows=8 #", 0) == 0, operatorSignature(a).c_str());
        QCOMPARE(deviceArch(J{{"backend", "cuda"}, {"sm", "sm_90"}}), std::string("sm_90"));
        QCOMPARE(deviceArch(J{{"backend", "cpu"}, {"name", "x"}}), std::string("cpu"));
        QCOMPARE(deviceArch(J()), std::string());
    }

    void signatureSplitsIntoOperatorAndShape_data()
    {
        QTest::addColumn<QString>("signature");
        QTest::addColumn<QString>("op");    // "" when it is not a signature
        QTest::addColumn<QString>("shape"); // k=v,...
        QTest::newRow("softmax") << QStringLiteral("aten::_softmax(float32[rows,cols]) cols=1024,rows=8 #0011aabb")
                                 << QStringLiteral("aten::_softmax(float32[rows,cols]) #0011aabb") << QStringLiteral("cols=1024,rows=8");
        QTest::newRow("two inputs") << QStringLiteral("aten::add.Tensor(float16[n,c], float16[n,c]) c=64,n=2 #ffee0011")
                                    << QStringLiteral("aten::add.Tensor(float16[n,c], float16[n,c]) #ffee0011") << QStringLiteral("c=64,n=2");
        QTest::newRow("fixed sizes, no symbols") << QStringLiteral("aten::relu(float32[4,8]) #12345678") << QStringLiteral("aten::relu(float32[4,8]) #12345678") << QStringLiteral("");
        QTest::newRow("no hash") << QStringLiteral("aten::relu(float32[n]) n=4") << QStringLiteral("") << QStringLiteral("");
        QTest::newRow("a size that is no number") << QStringLiteral("aten::relu(float32[n]) n=4x #12345678") << QStringLiteral("") << QStringLiteral("");
        QTest::newRow("a symbol without a name") << QStringLiteral("aten::relu(float32[n]) =4 #12345678") << QStringLiteral("") << QStringLiteral("");
        QTest::newRow("free text") << QStringLiteral("softmax of a big row") << QStringLiteral("") << QStringLiteral("");
    }

    void signatureSplitsIntoOperatorAndShape()
    {
        QFETCH(QString, signature);
        QFETCH(QString, op);
        QFETCH(QString, shape);
        const auto parts = splitSignature(signature.toStdString());
        QCOMPARE(parts.has_value(), !op.isEmpty());
        if (!parts)
            return;
        QCOMPARE(QString::fromStdString(parts->op), op);
        std::string got;
        for (const auto &[k, v] : parts->shape)
            got += (got.empty() ? "" : ",") + k + "=" + std::to_string(v);
        QCOMPARE(got, shape.toStdString());
        // What operatorSignature writes splits back into its card's shape.
        const auto card = makeCard("softmax", {{"rows", 8}, {"cols", 1024}});
        const auto own = splitSignature(operatorSignature(card));
        QVERIFY(own);
        QCOMPARE(own->shape, (std::map<std::string, int64_t>{{"cols", 1024}, {"rows", 8}}));
    }

    void shapesAreNearByRatio()
    {
        using S = std::map<std::string, int64_t>;
        QCOMPARE(shapeDistance(S{{"rows", 8}}, S{{"rows", 8}}), 0.0);
        QVERIFY(std::abs(shapeDistance(S{{"rows", 8}}, S{{"rows", 16}}) - std::log(2.0)) < 1e-12);
        QCOMPARE(shapeDistance(S{{"rows", 8}}, S{{"rows", 16}}), shapeDistance(S{{"rows", 16}}, S{{"rows", 8}}));
        QCOMPARE(shapeDistance(S{{"rows", 8}}, S{{"rows", 16}}), shapeDistance(S{{"rows", 8}}, S{{"rows", 4}}));
        // Twice the rows and twice the columns is farther than four times the rows alone? No: as far.
        QVERIFY(std::abs(shapeDistance(S{{"c", 2}, {"r", 2}}, S{{"c", 1}, {"r", 1}}) - shapeDistance(S{{"c", 1}, {"r", 4}}, S{{"c", 1}, {"r", 1}}))
                < 1e-12);
        QVERIFY(std::isinf(shapeDistance(S{{"rows", 8}}, S{{"cols", 8}})));
        QVERIFY(std::isinf(shapeDistance(S{{"rows", 8}}, S{{"rows", 8}, {"cols", 8}})));
        QVERIFY(std::isinf(shapeDistance(S{{"rows", 0}}, S{{"rows", 8}})));
    }

    // Without a lesson for its own signature, a search takes the same operator's at the nearest other
    // shape on the same architecture: never another operator's, dtype's or architecture's.
    void nearestLessonIsTheSameOperatorAtTheClosestShape()
    {
        auto lessonFor = [](const OperatorCard &card, const std::string &arch, double speedup, const std::string &point) {
            Note n;
            n.kind = Kind::Lesson;
            n.title = "Lesson";
            n.archs = {arch};
            n.families = {card.family};
            n.bottlenecks = {"any"};
            n.signature = operatorSignature(card);
            n.speedup = speedup;
            n.templateId = "cpu.softmax.rows";
            n.point = point;
            n.backend = "cpu";
            n.body = "```cpp\nint x;\n```\n";
            return n;
        };
        const auto want = makeCard("softmax", {{"rows", 64}, {"cols", 1024}});
        KnowledgeBase kb;
        kb.add(lessonFor(makeCard("softmax", {{"rows", 8}, {"cols", 1024}}), "cpu", 3.0, R"({"p":"far"})"));
        kb.add(lessonFor(makeCard("softmax", {{"rows", 128}, {"cols", 1024}}), "cpu", 1.2, R"({"p":"near, slower"})"));
        kb.add(lessonFor(makeCard("softmax", {{"rows", 32}, {"cols", 1024}}), "cpu", 1.5, R"({"p":"near, faster"})"));
        kb.add(lessonFor(makeCard("softmax", {{"rows", 64}, {"cols", 1024}}), "sm_90", 9.0, R"({"p":"other arch"})"));
        kb.add(lessonFor(makeCard("log_softmax", {{"rows", 64}, {"cols", 1024}}), "cpu", 9.0, R"({"p":"other operator"})"));
        kb.add(lessonFor(makeCard("softmax", {{"rows", 64}, {"cols", 1024}}, DType::F16), "cpu", 9.0, R"({"p":"other dtype"})"));
        double d = -1;
        const Note *n = kb.nearestLesson(operatorSignature(want), "cpu", &d);
        QVERIFY(n);
        QCOMPARE(n->point, std::string(R"({"p":"near, faster"})")); // 32 and 128 are as near: the faster
        QVERIFY(std::abs(d - std::log(2.0)) < 1e-12);
        QVERIFY(!kb.lesson(operatorSignature(want), "cpu"));
        QVERIFY(!kb.nearestLesson(operatorSignature(makeCard("softmax", {{"rows", 64}, {"cols", 1024}}, DType::BF16)), "cpu"));
        QVERIFY(!kb.nearestLesson("not a signature", "cpu"));
        // The signature's own lesson wins at distance 0, however slow.
        kb.add(lessonFor(want, "cpu", 1.01, R"({"p":"own"})"));
        n = kb.nearestLesson(operatorSignature(want), "cpu", &d);
        QVERIFY(n);
        QCOMPARE(n->point, std::string(R"({"p":"own"})"));
        QCOMPARE(d, 0.0);
    }

    // kforge-cli knowledge ranks the notes as a prompt would and names a malformed user note.
    void cliListsAndChecksNotes()
    {
#ifndef KFORGE_CLI_PATH
        QSKIP("no kforge-cli in this build");
#else
        auto run = [](const QStringList &args, QString &out, QString &err) {
            QProcess p;
            p.start(QStringLiteral(KFORGE_CLI_PATH), QStringList{QStringLiteral("knowledge")} + args);
            p.waitForFinished(60000);
            out = QString::fromUtf8(p.readAllStandardOutput());
            err = QString::fromUtf8(p.readAllStandardError());
            return p.exitCode();
        };
        const QString dir = m_dir.filePath(QStringLiteral("cli-notes"));
        writeFile(dir + QStringLiteral("/mine.md"), kGoodNote);
        QString out, err;
        QCOMPARE(run({QStringLiteral("--dir"), dir, QStringLiteral("--arch"), QStringLiteral("sm_90"), QStringLiteral("--device"),
                      QStringLiteral("NVIDIA H200"), QStringLiteral("--family"), QStringLiteral("softmax"), QStringLiteral("--limit"),
                      QStringLiteral("3")},
                     out, err),
                 0);
        const auto lines = out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QVERIFY2(lines.size() == 4 && lines[0].contains(QStringLiteral("NVIDIA H200 (Hopper")), qPrintable(out));
        QVERIFY2(lines[3].startsWith(QStringLiteral("3 of %1 notes").arg(builtinNotes().size() + 1)), qPrintable(out));
        writeFile(dir + QStringLiteral("/broken.md"), "---\nkind: family\ntitle: t\nbottleneck: slow\n---\nx\n");
        QCOMPARE(run({QStringLiteral("--dir"), dir}, out, err), 1);
        QVERIFY2(err.contains(QStringLiteral("broken.md:4: bottleneck takes")), qPrintable(err));
        QVERIFY2(out.contains(QStringLiteral("A user's softmax trick")), qPrintable(out)); // the good note still loads
        QCOMPARE(run({QStringLiteral("--bottleneck"), QStringLiteral("slow")}, out, err), 2);
        QVERIFY2(err.contains(QStringLiteral("option --bottleneck takes")), qPrintable(err));
#endif
    }

    // A real CPU search through the worker writes its winner as a lesson; the next search of the same
    // operator starts from it and the retrieval for that signature ranks it first.
    void lessonOfASearchWarmStartsTheNext()
    {
        if (test::workerCommand().empty())
            QSKIP("no kforge-worker in this build");
        const QString lessons = m_dir.filePath(QStringLiteral("lessons-home"));
        // 16 x 256: small enough that ATen's dispatch shows and a plain kernel wins on the CPU.
        const auto card = makeCard("softmax", {{"rows", 16}, {"cols", 256}});
        WorkerPool pool({test::workerCommand(), 1});
        pool.start();
        SearchOptions so;
        so.maxNodes = 6;
        so.eval.benchSamples = 21;
        so.eval.warmup = 1;
        so.lessonsDir = lessons.toStdString();
        so.backend = "cpu";

        // The first search evaluates a hand-written kernel (six chances to clear the noise of a busy
        // machine); the second is a template search, which the lesson's kernel precedes.
        Proposal hand{"hand.good_softmax", J{{"file", "good_softmax.cpp"}}, test::cpuKernel("good_softmax.cpp"), "row by row"};
        auto search = [&](const char *name, Proposer &proposer, SearchProgress &prog) {
            const auto file = m_dir.filePath(QString::fromLatin1(name)).toStdString();
            SessionStore store(file);
            const auto sid = store.createSession({0, name, "single operator", "cpu", proposer.name(), "running", {}, 0});
            const auto op = store.addOperator(sid, card);
            SearchEngine engine(store, pool, proposer, so);
            prog = engine.run(sid, op, card);
            return store.nodes(sid);
        };
        SearchProgress first, second;
        ListProposer hands({hand, hand, hand, hand, hand, hand});
        const auto firstNodes = search("first.kforge", hands, first);
        std::string statuses;
        for (const auto &n : firstNodes)
            statuses += n.status + " " + n.templateId + " " + n.summary + "\n";
        QVERIFY2(first.bestNode > 0, ("the hand-written kernel was never correct:\n" + statuses).c_str());
        // The search wrote a lesson exactly when the guard accepted a kernel. Where this machine was too
        // busy for that (the sandbox's round-trip floor is counted in a CPU kernel's time), a person
        // accepts the fastest correct node, as the window's Accept does and a pack would honour.
        QVERIFY2(first.lesson.empty() == (first.accepted == 0), (first.lessonNote + "\n" + statuses).c_str());
        if (first.lesson.empty()) {
            SessionStore store(m_dir.filePath(QStringLiteral("first.kforge")).toStdString());
            store.addDecision(first.bestNode, "accept", "user", "faster than ATen on this machine when it is idle");
            const auto l = lessonFromSearch(store, firstNodes.front().sessionId, firstNodes.front().operatorId, card, "cpu");
            QVERIFY(l);
            first.lesson = writeLesson(*l, lessons.toStdString());
        }
        QVERIFY(QFile::exists(QString::fromStdString(first.lesson)));
        QVERIFY(first.lesson.find("/lessons/cpu/") != std::string::npos);

        KnowledgeBase kb;
        kb.addFolder(lessons.toStdString());
        QVERIFY(kb.problems().empty());
        const Note *lesson = kb.lesson(operatorSignature(card), "cpu");
        QVERIFY(lesson);
        QVERIFY(!kb.lesson(operatorSignature(card), "sm_90"));
        QVERIFY(!kb.lesson(operatorSignature(makeCard("softmax", {{"rows", 16}, {"cols", 512}})), "cpu"));
        QVERIFY(std::abs(lesson->speedup - first.bestSpeedup) < 1e-3 * first.bestSpeedup);
        QCOMPARE(lesson->node, (long long)first.bestNode);
        const auto winner = std::find_if(firstNodes.begin(), firstNodes.end(), [&](const NodeRecord &n) { return n.id == first.bestNode; });
        QVERIFY(winner != firstNodes.end());
        QCOMPARE(lesson->templateId, winner->templateId);

        // Retrieval for the same signature puts the lesson first among notes and lessons.
        Query q;
        q.arch = "cpu";
        q.families = familiesOf(card);
        q.signature = operatorSignature(card);
        q.text = card.atenOp;
        q.kinds = {Kind::Family, Kind::Lesson};
        const auto all = KnowledgeBase::load(lessons.toStdString());
        const auto r = all.retrieve(q);
        QVERIFY2(!r.empty() && r.front().note->kind == Kind::Lesson, titles(r).c_str());

        // The next search evaluates the lesson's kernel first.
        TemplateProposer templates("cpu");
        const auto secondNodes = search("second.kforge", templates, second);
        QVERIFY(secondNodes.size() >= 2);
        const auto &warm = secondNodes[1];
        QCOMPARE(warm.expansion, std::string("warm_start"));
        QCOMPARE(warm.templateId, lesson->templateId);
        QCOMPARE(warm.parentId.value_or(0), secondNodes[0].id);
        QVERIFY2(warm.status == "accepted" || warm.status == "not_faster", warm.summary.c_str());
        const auto first_source = SessionStore(m_dir.filePath(QStringLiteral("first.kforge")).toStdString(), SessionStore::Mode::ReadOnly)
                                      .nodeDetail(first.bestNode)
                                      ->candidate.source;
        QCOMPARE(SessionStore(m_dir.filePath(QStringLiteral("second.kforge")).toStdString(), SessionStore::Mode::ReadOnly)
                     .nodeDetail(warm.id)
                     ->candidate.source,
                 first_source);
        pool.shutdown();
    }

    // A search with no lesson for its own shape takes the same operator's lesson at the nearest other
    // shape as the root's second child, after the proposer's first: a template lesson is re-made at this
    // shape by the template proposer (its point, this card's source); any other lesson's kernel is
    // taken as it was, for the guard to judge here.
    void lessonOfAnotherShapeWarmStartsTheSearch_data()
    {
        QTest::addColumn<QString>("templateId");
        QTest::addColumn<QString>("point");
        QTest::newRow("a template's point") << QStringLiteral("cpu.softmax.vector") << QStringLiteral(R"({"accumulators":1,"exp":"poly6","width":4})");
        QTest::newRow("a hand-written kernel") << QStringLiteral("hand.good_softmax") << QStringLiteral(R"({"file":"good_softmax.cpp"})");
    }

    void lessonOfAnotherShapeWarmStartsTheSearch()
    {
        QFETCH(QString, templateId);
        QFETCH(QString, point);
        if (test::workerCommand().empty())
            QSKIP("no kforge-worker in this build");
        const QString dir = m_dir.filePath(QStringLiteral("nearest-") + QString::fromLatin1(QTest::currentDataTag()).left(8));
        const auto there = makeCard("softmax", {{"rows", 16}, {"cols", 256}});
        const auto here = makeCard("softmax", {{"rows", 64}, {"cols", 256}});
        const auto &lib = TemplateLibrary::builtin();
        const KernelTemplate *t = lib.find(templateId.toStdString());
        const auto params = J::parse(point.toStdString());
        const std::string oldSource = t ? TemplateProposer("cpu").render(*t, params, there).candidate.source : test::cpuKernel("good_softmax.cpp").source;
        Note n;
        n.kind = Kind::Lesson;
        n.title = "Lesson: softmax at 16 rows";
        n.archs = {"cpu"};
        n.families = familiesOf(there);
        n.bottlenecks = {"any"};
        n.signature = operatorSignature(there);
        n.speedup = 1.7;
        n.templateId = templateId.toStdString();
        n.point = params.dump();
        n.backend = "cpu";
        n.body = "Won at 16 rows.\n\n```cpp\n" + oldSource + "```\n";
        QVERIFY(!writeLesson(n, dir.toStdString()).empty());

        WorkerPool pool({test::workerCommand(), 1});
        pool.start();
        SearchOptions so;
        so.maxNodes = 2;
        so.eval.benchSamples = 3;
        so.eval.warmup = 1;
        so.reverifyBest = false;
        so.lessonsDir = dir.toStdString();
        so.backend = "cpu";
        SessionStore store(dir.toStdString() + "/s.kforge");
        const auto sid = store.createSession({0, "nearest", "single operator", "cpu", "templates", "running", {}, 0});
        const auto op = store.addOperator(sid, here);
        TemplateProposer templates("cpu");
        SearchEngine engine(store, pool, templates, so);
        struct Added : SearchObserver {
            std::map<int64_t, std::string> why; // each node's rationale as it was made (its summary becomes the verdict's)
            void nodeAdded(const NodeRecord &n) override { why[n.id] = n.summary; }
        } added;
        engine.run(sid, op, here, &added);
        pool.shutdown();
        const auto nodes = store.nodes(sid);
        QCOMPARE(int(nodes.size()), 3);
        QVERIFY2(nodes[1].expansion != "warm_start", nodes[1].expansion.c_str()); // the proposer's own first
        QCOMPARE(nodes[1].parentId.value_or(0), nodes[0].id);
        const auto &warm = nodes[2];
        QCOMPARE(warm.expansion, std::string("warm_start"));
        QCOMPARE(warm.parentId.value_or(0), nodes[0].id);
        QCOMPARE(warm.templateId, templateId.toStdString());
        QCOMPARE(warm.params, params);
        QVERIFY(added.why.count(warm.id));
        const std::string why = added.why[warm.id];
        QVERIFY2(why.find("rows=16") != std::string::npos, why.c_str());
        const auto source = store.nodeDetail(warm.id)->candidate.source;
        if (t) {
            QCOMPARE(source, TemplateProposer("cpu").render(*t, params, here).candidate.source);
            QVERIFY2(why.find("another shape") != std::string::npos, why.c_str());
        } else {
            QCOMPARE(source, oldSource);
        }
    }
};

QTEST_GUILESS_MAIN(TestKnowledge)
#include "tst_knowledge.moc"
