// kforge-cli as a user runs it: a real process, its exit status, stdout and stderr. Covers the template
// listing with a card's seeds, rendering a point with its launch plan, and the errors bad input gets.
#include <QtTest>

#include <nlohmann/json.hpp>

namespace {

struct Run {
    int code = -1;
    QString out, err;
};

Run cli(const QStringList &args)
{
    QProcess p;
    p.start(QStringLiteral(KFORGE_CLI_PATH), args);
    Run r;
    if (!p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished();
        r.err = QStringLiteral("kforge-cli did not finish in 60 s");
        return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

// The seed line printed under a template's name in `kforge-cli templates`, or an empty string.
QString seedOf(const QString &listing, const QString &templateId)
{
    const auto lines = listing.split(QLatin1Char('\n'));
    for (qsizetype i = 0; i + 1 < lines.size(); ++i)
        if (lines[i].startsWith(templateId + QLatin1Char(' ')))
            for (qsizetype j = i + 1; j < lines.size() && lines[j].startsWith(QLatin1Char(' ')); ++j)
                if (lines[j].trimmed().startsWith(QStringLiteral("seed ")))
                    return lines[j].trimmed().mid(5).trimmed();
    return {};
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT
private slots:
    void templateSeedsForACard_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("templateId");
        QTest::addColumn<QString>("mustContain");
        QTest::addColumn<bool>("declines");
        const auto list = [](const char *family, const char *shape, const char *dtype) {
            return QStringList{QStringLiteral("templates"), QStringLiteral("--family"), QString::fromLatin1(family), QStringLiteral("--backend"),
                               QStringLiteral("cuda"), QStringLiteral("--shape"), QString::fromLatin1(shape), QStringLiteral("--dtype"),
                               QString::fromLatin1(dtype)};
        };
        // A 1 MiB row needs a cluster of 16 to keep three buffers per block, and asks for 90% of the SMs.
        QTest::newRow("262144-wide log-softmax: pipe in clusters of 16")
            << list("log_softmax", "rows=1024,cols=262144", "float32") << QStringLiteral("cuda.log_softmax.pipe")
            << QStringLiteral("\"cl\":16") << false;
        QTest::newRow("and the one-shot cluster template too")
            << list("log_softmax", "rows=1024,cols=262144", "float32") << QStringLiteral("cuda.log_softmax.cluster")
            << QStringLiteral("\"cl\":16") << false;
        QTest::newRow("4096-wide bf16 softmax: one block per row, 64 threads of 8 packs")
            << list("softmax", "rows=16384,cols=4096", "bfloat16") << QStringLiteral("cuda.softmax.pipe")
            << QStringLiteral("\"block\":64") << false;
        QTest::newRow("norm rows kernels hold 16 values per thread")
            << list("layer_norm", "rows=16384,cols=4096", "float32") << QStringLiteral("cuda.layer_norm.rows")
            << QStringLiteral("\"reg\":16") << false;
        // 33 float32 values are not a whole number of 16-byte packs: the bulk copy cannot serve the row.
        QTest::newRow("a row the bulk copy cannot serve is declined")
            << list("softmax", "rows=64,cols=33", "float32") << QStringLiteral("cuda.softmax.pipe") << QStringLiteral("\"stages\"")
            << true;
    }

    void templateSeedsForACard()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, templateId);
        QFETCH(QString, mustContain);
        QFETCH(bool, declines);
        const auto r = cli(args);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QString seed = seedOf(r.out, templateId);
        QVERIFY2(!seed.isEmpty(), qPrintable(templateId + QStringLiteral(" has no seed line in:\n") + r.out));
        QVERIFY2(seed.contains(mustContain), qPrintable(seed));
        QCOMPARE(seed.contains(QStringLiteral("(declines this card)")), declines);
    }

    void rendersAPointAndItsLaunchPlan()
    {
        QTemporaryDir dir;
        const QString plan = dir.filePath(QStringLiteral("plan.json"));
        const auto r = cli({QStringLiteral("templates"), QStringLiteral("--render"), QStringLiteral("cuda.layer_norm.pipe"), QStringLiteral("--params"),
                            QStringLiteral(R"({"cl":1,"block":256,"bps":2,"fill":100,"regp":4,"stages":4})"), QStringLiteral("--family"),
                            QStringLiteral("layer_norm"), QStringLiteral("--shape"), QStringLiteral("rows=16384,cols=8192"), QStringLiteral("--dtype"),
                            QStringLiteral("bfloat16"), QStringLiteral("--launch-out"), plan});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(r.out.contains(QStringLiteral("#define STAGES 4")));
        QVERIFY(r.out.contains(QStringLiteral("kf_pipe(")));
        QFile f(plan);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const auto j = nlohmann::json::parse(f.readAll().toStdString());
        const auto &k = j.at("kernels").at(0);
        QCOMPARE(QString::fromStdString(k.at("name").get<std::string>()), QStringLiteral("kf_pipe"));
        // A persistent grid: two blocks per SM of whatever device runs it, at most one per row.
        QCOMPARE(QString::fromStdString(k.at("grid").at(0).get<std::string>()), QStringLiteral("min(rows, max(1, sm_count * 2 * 100 / 100))"));
        QVERIFY(!k.contains("cluster"));
    }

    void badInputGetsASpecificError_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("a point outside the valid space")
            << QStringList{QStringLiteral("templates"), QStringLiteral("--render"), QStringLiteral("cuda.softmax.pipe"),
                           QStringLiteral("--params"), QStringLiteral(R"({"block":2048})"), QStringLiteral("--family"),
                           QStringLiteral("softmax"), QStringLiteral("--shape"), QStringLiteral("rows=64,cols=4096")}
            << QStringLiteral("is outside cuda.softmax.pipe's valid space for this card");
        QTest::newRow("parameters that are not JSON")
            << QStringList{QStringLiteral("templates"), QStringLiteral("--render"), QStringLiteral("cuda.softmax.pipe"),
                           QStringLiteral("--params"), QStringLiteral("{block:"), QStringLiteral("--family"), QStringLiteral("softmax")}
            << QStringLiteral("--params is not valid JSON");
        QTest::newRow("an unknown template")
            << QStringList{QStringLiteral("templates"), QStringLiteral("--render"), QStringLiteral("cuda.softmax.nope")}
            << QStringLiteral("no template 'cuda.softmax.nope'");
        QTest::newRow("a shape symbol that is not a number")
            << QStringList{QStringLiteral("card"), QStringLiteral("--family"), QStringLiteral("softmax"), QStringLiteral("--shape"),
                           QStringLiteral("rows=x")}
            << QStringLiteral("shape symbol 'rows' needs a whole number, not 'x'");
    }

    void badInputGetsASpecificError()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const auto r = cli(args);
        QVERIFY2(r.code != 0 && r.code != -1, qPrintable(QStringLiteral("exit %1").arg(r.code)));
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
