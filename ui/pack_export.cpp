#include "ui/pack_export.h"

#include <QFileInfo>
#include <QRegularExpression>

#include "util/paths.h"

namespace kforge::ui {

PackExportResult PackExportResult::fromCli(int exitCode, const QString &out, const QString &err, const QString &outDir)
{
    PackExportResult r;
    r.outDir = outDir;
    static const QRegularExpression skipped(QStringLiteral("^(\\S+)\\s+skipped: (.*)$"));
    static const QRegularExpression included(QStringLiteral("^(\\S+)\\s+(node \\d+, .*)$"));
    for (const QString &line : out.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        if (const auto m = skipped.match(line); m.hasMatch())
            r.skipped << m.captured(1) + QStringLiteral(": ") + m.captured(2);
        else if (const auto m2 = included.match(line); m2.hasMatch())
            r.included << m2.captured(1) + QStringLiteral(" ") + m2.captured(2);
    }
    r.ok = exitCode == 0;
    if (!r.ok) {
        QString e = err.trimmed();
        e.remove(QRegularExpression(QStringLiteral("^kforge-cli export: ")));
        r.error = e.isEmpty() ? QStringLiteral("kforge-cli export failed (exit code %1) and said nothing").arg(exitCode) : e;
    }
    return r;
}

QString PackExportResult::text() const
{
    QStringList lines;
    if (ok)
        lines << QStringLiteral("Wrote the pack %1: %2 kernel(s).").arg(outDir).arg(included.size());
    else
        lines << QStringLiteral("No pack was written: %1").arg(error);
    if (!included.isEmpty())
        lines << QString() << QStringLiteral("In the pack:") << included;
    if (!skipped.isEmpty())
        lines << QString() << QStringLiteral("Skipped:") << skipped;
    return lines.join(QLatin1Char('\n'));
}

QString defaultCliPath()
{
    const QString env = qEnvironmentVariable("KFORGE_CLI");
    return env.isEmpty() ? QString::fromStdString(executableDir()) + QStringLiteral("/kforge-cli") : env;
}

PackExporter::~PackExporter()
{
    if (m_process) { // a compile may still run: it is ended, and its half-written folder is the CLI's to leave unwritten
        m_process->disconnect(this);
        m_process->kill();
        m_process->waitForFinished(2000);
    }
}

bool PackExporter::start(const QString &sessionPath, const QString &outDir, const QString &cliPath)
{
    if (m_process)
        return false;
    auto fail = [this, outDir](const QString &why) {
        PackExportResult r;
        r.outDir = outDir;
        r.error = why;
        QMetaObject::invokeMethod(this, [this, r] { emit finished(r); }, Qt::QueuedConnection);
        return true;
    };
    if (!QFileInfo(cliPath).isExecutable())
        return fail(QStringLiteral("kforge-cli was not found at %1; install it beside kforge or set KFORGE_CLI to its path").arg(cliPath));
    auto *p = new QProcess(this);
    m_process = p;
    connect(p, &QProcess::finished, this, [this, p, outDir](int code, QProcess::ExitStatus status) {
        const QString out = QString::fromLocal8Bit(p->readAllStandardOutput());
        const QString err = QString::fromLocal8Bit(p->readAllStandardError());
        p->deleteLater();
        m_process = nullptr;
        emit finished(PackExportResult::fromCli(status == QProcess::NormalExit ? code : -1, out, err, outDir));
    });
    connect(p, &QProcess::errorOccurred, this, [this, p, outDir, cliPath](QProcess::ProcessError e) {
        if (e != QProcess::FailedToStart)
            return; // a crash is answered by finished()
        p->deleteLater();
        m_process = nullptr;
        PackExportResult r;
        r.outDir = outDir;
        r.error = QStringLiteral("could not run %1: %2").arg(cliPath, p->errorString());
        emit finished(r);
    });
    p->start(cliPath, {QStringLiteral("export"), sessionPath, QStringLiteral("--out"), outDir});
    return true;
}

} // namespace kforge::ui
