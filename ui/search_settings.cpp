#include "ui/search_settings.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

#include "util/paths.h"

namespace kforge::ui {

SearchSettings SearchSettings::load()
{
    QSettings s;
    SearchSettings out;
    out.workerCommand = s.value(QStringLiteral("search/workerCommand")).toString();
    out.workers = std::clamp(s.value(QStringLiteral("search/workers"), 1).toInt(), 1, 256);
    out.backend = s.value(QStringLiteral("search/backend"), QStringLiteral("cpu")).toString();
    if (out.backend != QLatin1String("cpu") && out.backend != QLatin1String("cuda"))
        out.backend = QStringLiteral("cpu");
    out.nodes = std::clamp(s.value(QStringLiteral("search/nodes"), 24).toInt(), 1, 1000000);
    out.proposer = ProposerSettings::load();
    return out;
}

void SearchSettings::save() const
{
    QSettings s;
    s.setValue(QStringLiteral("search/workerCommand"), workerCommand);
    s.setValue(QStringLiteral("search/workers"), workers);
    s.setValue(QStringLiteral("search/backend"), backend);
    s.setValue(QStringLiteral("search/nodes"), nodes);
    proposer.save();
}

QList<QPair<QString, QString>> SearchSettings::workerExamples()
{
    return {
        {QStringLiteral("Local (kforge-worker beside kforge)"), QString()},
        {QStringLiteral("Local, explicit path"), QString::fromStdString(defaultWorkerCommand())},
        {QStringLiteral("Over ssh"), QStringLiteral("ssh -T gpu-host /opt/kforge/bin/kforge-worker")},
        {QStringLiteral("Slurm (srun, one GPU)"), QStringLiteral("srun --ntasks=1 --gres=gpu:1 --quiet kforge-worker")},
    };
}

SettingsDialog::SettingsDialog(const SearchSettings &settings, QWidget *parent, KeyStore *keys)
    : QDialog(parent), m_command(new QLineEdit(this)), m_examples(new QComboBox(this)), m_workers(new QSpinBox(this)),
      m_backend(new QComboBox(this)), m_nodes(new QSpinBox(this)), m_proposer(new ProviderSettingsPage(settings.proposer, keys, this))
{
    setWindowTitle(QStringLiteral("kforge settings"));
    setObjectName(QStringLiteral("settingsDialog"));
    m_command->setText(settings.workerCommand);
    m_command->setPlaceholderText(QString::fromStdString(defaultWorkerCommand()));
    m_command->setMinimumWidth(460);
    m_command->setToolTip(QStringLiteral("A shell command line that starts one worker speaking kforge's protocol on its "
                                         "standard input and output; it runs once per worker slot"));
    m_examples->addItem(QStringLiteral("Examples…"));
    for (const auto &[label, command] : SearchSettings::workerExamples())
        m_examples->addItem(label, command);
    connect(m_examples, &QComboBox::activated, this, [this](int index) {
        if (index > 0)
            m_command->setText(m_examples->itemData(index).toString());
        m_examples->setCurrentIndex(0);
    });
    m_workers->setRange(1, 256);
    m_workers->setValue(settings.workers);
    m_workers->setToolTip(QStringLiteral("Worker processes evaluating candidates at once (for cuda, one per GPU)"));
    m_backend->addItem(QStringLiteral("CPU (C++ kernels in the sandbox)"), QStringLiteral("cpu"));
    m_backend->addItem(QStringLiteral("CUDA (needs a GPU on the worker's host)"), QStringLiteral("cuda"));
    m_backend->setCurrentIndex(std::max(0, m_backend->findData(settings.backend)));
    m_nodes->setRange(1, 1000000);
    m_nodes->setValue(settings.nodes);

    auto *form = new QFormLayout;
    auto *commandRow = new QHBoxLayout;
    commandRow->addWidget(m_command, 1);
    commandRow->addWidget(m_examples);
    form->addRow(QStringLiteral("Worker command:"), commandRow);
    auto *hint = new QLabel(QStringLiteral("<small>Empty starts kforge-worker from kforge's own folder. Over ssh or "
                                           "srun the command must reach a kforge-worker of the same version.</small>"),
                            this);
    hint->setWordWrap(true);
    form->addRow(QString(), hint);
    form->addRow(QStringLiteral("Workers:"), m_workers);
    form->addRow(QStringLiteral("Default backend:"), m_backend);
    form->addRow(QStringLiteral("Nodes per search:"), m_nodes);

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_proposer);
    layout->addWidget(buttons);
}

SearchSettings SettingsDialog::settings() const
{
    SearchSettings s;
    s.workerCommand = m_command->text().trimmed();
    s.workers = m_workers->value();
    s.backend = m_backend->currentData().toString();
    s.nodes = m_nodes->value();
    s.proposer = m_proposer->settings();
    return s;
}

void SettingsDialog::accept()
{
    if (m_proposer->validate())
        QDialog::accept();
}

} // namespace kforge::ui
