#pragma once
// Exports a pack from a session by running `kforge-cli export SESSION --out DIR` (the one place that
// chooses the nodes and compiles them) in a QProcess, so the GUI thread never waits for a compiler.
#include <QObject>
#include <QPointer>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace kforge::ui {

struct PackExportResult {
    bool ok = false;
    QString outDir;
    QStringList included; // "softmax_... node 7, 1.42x, cpu (accepted by hand)"
    QStringList skipped;  // "layer_norm_...: no node was accepted"
    QString error;        // what went wrong, as the user can act on it; empty when ok

    // Reads the CLI's report (its line formats are app/cli/pack_commands.cpp's).
    static PackExportResult fromCli(int exitCode, const QString &out, const QString &err, const QString &outDir);
    QString text() const; // for the window: what went in, what was skipped and why, or the error
};

// kforge-cli beside this executable (as the worker is found), or $KFORGE_CLI.
QString defaultCliPath();

class PackExporter : public QObject {
    Q_OBJECT
public:
    explicit PackExporter(QObject *parent = nullptr) : QObject(parent) {}
    ~PackExporter() override;
    // False when an export is already running; finished() follows otherwise, also when the CLI is missing.
    bool start(const QString &sessionPath, const QString &outDir, const QString &cliPath = defaultCliPath());
    bool isRunning() const { return m_process != nullptr; }

signals:
    void finished(const kforge::ui::PackExportResult &result);

private:
    QPointer<QProcess> m_process;
};

} // namespace kforge::ui

Q_DECLARE_METATYPE(kforge::ui::PackExportResult)
