// A workload's timeline before and after a pack: `kforge-cli profile W.json --pack P` writes
// W.with-pack.json in the workload format; opening W.json shows it under the workload's own profile
// at once, with the operators whose time moved marked in the timeline.
#include <QDockWidget>
#include <QFile>
#include <QImage>
#include <QMainWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "ops/operator_card.h"
#include "ui/operator_table.h"
#include "ui/session_context.h"
#include "ui/theme.h"
#include "ui/timeline_view.h"
#include "ui/workload_context.h"
#include "ui/workload_panels.h"
#include "workload/workload_file.h"

using namespace kforge;
using namespace kforge::ui;

namespace {

// A model of 20 layers, each a GELU and a softmax call; geluUs is one GELU call's time.
void writeProfile(const QString &path, double geluUs)
{
    WorkloadFile w;
    w.name = "two-ops";
    w.model.kind = "torchscript";
    w.model.path = "two-ops.pt";
    w.inputs.push_back({{64, 1024}, "float32", "randn"});
    double t = 0;
    for (int layer = 0; layer < 20; ++layer)
        for (const auto &[op, dur] : {std::pair<const char *, double>{"aten::gelu", geluUs}, {"aten::softmax", 30.0}}) {
            CapturedCall c;
            c.op = op;
            CallArg x;
            x.name = "self";
            x.kind = "tensor";
            TensorMeta meta;
            meta.shape = {64, 1024};
            meta.strides = {1024, 1};
            meta.dtype = "float32";
            x.tensors.push_back(meta);
            c.args = {x};
            c.startUs = t;
            c.durUs = dur;
            t += dur + 1;
            w.calls.push_back(c);
        }
    auto gelu = makeCard("gelu", {{"rows", 64}, {"cols", 1024}}); // the card of the GELU pattern
    gelu.calls = 20;
    gelu.workloadMs = 20 * geluUs / 1000;
    w.cards = {gelu};
    saveWorkloadFile(w, path.toStdString());
}

} // namespace

class TestGuiProfile : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString path(const char *name) const { return m_dir.filePath(QString::fromLatin1(name)); }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QStandardPaths::setTestModeEnabled(true);
    }

    void packProfileBeside_data()
    {
        QTest::addColumn<QString>("workload");
        QTest::addColumn<QStringList>("files"); // what exists in the folder
        QTest::addColumn<QString>("expected");
        QTest::newRow("beside") << QStringLiteral("a.json") << QStringList{QStringLiteral("a.json"), QStringLiteral("a.with-pack.json")} << QStringLiteral("a.with-pack.json");
        QTest::newRow("none written") << QStringLiteral("b.json") << QStringList{QStringLiteral("b.json")} << QStringLiteral("");
        QTest::newRow("another workload's") << QStringLiteral("c.json") << QStringList{QStringLiteral("c.json"), QStringLiteral("d.with-pack.json")} << QStringLiteral("");
        QTest::newRow("the second profile itself") << QStringLiteral("e.with-pack.json") << QStringList{QStringLiteral("e.with-pack.json"), QStringLiteral("e.with-pack.with-pack.json")} << QStringLiteral("");
        QTest::newRow("no .json suffix") << QStringLiteral("f") << QStringList{QStringLiteral("f"), QStringLiteral("f.with-pack.json")} << QStringLiteral("f.with-pack.json");
    }
    void packProfileBeside()
    {
        QFETCH(QString, workload);
        QFETCH(QStringList, files);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        for (const auto &f : files) {
            QFile file(dir.filePath(f));
            QVERIFY(file.open(QIODevice::WriteOnly));
        }
        QCOMPARE(WorkloadPanels::packProfileBeside(dir.filePath(workload)), expected.isEmpty() ? QString() : dir.filePath(expected));
    }

    // The pack halves GELU: opening the workload brings its profile with the pack up under it, GELU's
    // pattern changed and faster, softmax's not, and the timeline marks GELU's calls in both tracks.
    void openingAWorkloadShowsItsProfileWithThePack()
    {
        writeProfile(path("w.json"), 40);
        writeProfile(path("w.with-pack.json"), 20);
        QMainWindow window;
        SessionContext session;
        WorkloadPanels panels(&window, &session);
        window.resize(1400, 800);
        window.show();
        QSignalSpy compared(panels.context(), &WorkloadContext::comparisonChanged);
        QCOMPARE(panels.openAndWait(path("w.json")), QString());
        QVERIFY(compared.count() > 0 || compared.wait(10000));
        const auto *c = panels.context()->comparison();
        QVERIFY(c);
        QCOMPARE(panels.context()->after()->path(), path("w.with-pack.json").toStdString());
        int changed = 0;
        for (const auto &o : c->operators) {
            if (o.op == "aten::gelu") {
                QVERIFY(o.changed);
                QCOMPARE(o.beforeUs, 800.0);
                QCOMPARE(o.afterUs, 400.0);
            } else {
                QVERIFY2(!o.changed, o.op.c_str());
            }
            changed += o.changed;
        }
        QCOMPARE(changed, 1);
        QVERIFY(panels.clearAfterAction()->isEnabled());

        auto *timeline = panels.timeline();
        timeline->fit();
        QImage image(timeline->viewport()->size(), QImage::Format_ARGB32_Premultiplied);
        timeline->viewport()->render(&image);
        QVERIFY2(timeline->lastFrame().markers >= 2, qPrintable(QString::number(timeline->lastFrame().markers)));

        // The operator table says the same: GELU's card with its time with the pack, marked faster.
        auto *model = panels.table()->model();
        QCOMPARE(model->rowCount(), 1);
        const auto cell = model->index(0, int(OperatorColumn::WithPack));
        QVERIFY2(cell.data().toString().endsWith(QStringLiteral("(2.00x)")), qPrintable(cell.data().toString()));
        QCOMPARE(cell.data(Qt::ForegroundRole).value<QColor>(), theme().good);
        QVERIFY(model->rows().front().changed);
        QCOMPARE(model->rows().front().afterUs, 400.0);
    }

    // Without a profile with the pack beside it, a workload is shown alone.
    void aWorkloadWithoutOneIsShownAlone()
    {
        writeProfile(path("alone.json"), 40);
        QMainWindow window;
        SessionContext session;
        WorkloadPanels panels(&window, &session);
        QSignalSpy compared(panels.context(), &WorkloadContext::comparisonChanged);
        QCOMPARE(panels.openAndWait(path("alone.json")), QString());
        QVERIFY(!compared.wait(500));
        QVERIFY(!panels.context()->comparison());
        QVERIFY(!panels.clearAfterAction()->isEnabled());
        QCOMPARE(panels.table()->model()->index(0, int(OperatorColumn::WithPack)).data().toString(), QStringLiteral("—"));
    }
};

QTEST_MAIN(TestGuiProfile)
#include "tst_guiprofile.moc"
