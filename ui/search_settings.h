#pragma once
// How the window starts searches: the command line that starts one worker (local, over ssh, under
// srun), how many workers, which backend the candidates target, the node budget and the proposer
// (ui/provider_settings.h). Kept in QSettings under "search/" and "proposer/" (keys never: they are in
// the system keychain); the Settings dialog edits them and Search > Start uses them.
#include <QDialog>
#include <QString>

#include "ui/provider_settings.h"

class QComboBox;
class QLineEdit;
class QSpinBox;

namespace kforge::ui {

struct SearchSettings {
    QString workerCommand; // empty: kforge-worker beside kforge
    int workers = 1;
    QString backend = QStringLiteral("cpu"); // "cpu" or "cuda"
    int nodes = 24;
    ProposerSettings proposer; // under "proposer/"

    static SearchSettings load();
    void save() const;
    // The command lines the dialog offers as starting points: local, ssh, srun.
    static QList<QPair<QString, QString>> workerExamples();
};

class SettingsDialog : public QDialog {
    Q_OBJECT
public:
    // `keys` holds the providers' keys (null: the environment only).
    explicit SettingsDialog(const SearchSettings &settings, QWidget *parent = nullptr, KeyStore *keys = nullptr);

    SearchSettings settings() const;
    QLineEdit *commandEdit() const { return m_command; }
    QComboBox *exampleBox() const { return m_examples; }
    QSpinBox *workersBox() const { return m_workers; }
    QComboBox *backendBox() const { return m_backend; }
    QSpinBox *nodesBox() const { return m_nodes; }
    ProviderSettingsPage *proposerPage() const { return m_proposer; }

    void accept() override; // refused, with the reason on the page, while the proposer cannot run

private:
    QLineEdit *m_command;
    QComboBox *m_examples;
    QSpinBox *m_workers;
    QComboBox *m_backend;
    QSpinBox *m_nodes;
    ProviderSettingsPage *m_proposer;
};

} // namespace kforge::ui
