#include "ui/provider_settings.h"

#include <QComboBox>
#include <QDesktopServices>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QPushButton>
#include <QSettings>
#include <QUrl>

#include "llm/client.h"
#include "llm/prices.h"
#include "ui/keychain.h"
#include "ui/theme.h"

namespace kforge::ui {

namespace {

QString modelExample(const QString &provider)
{
    if (provider == QLatin1String("openrouter"))
        return QStringLiteral("e.g. deepseek/deepseek-chat or anthropic/claude-sonnet-4.5");
    if (provider == QLatin1String("anthropic"))
        return QStringLiteral("e.g. claude-sonnet-4-5");
    if (provider == QLatin1String("gemini"))
        return QStringLiteral("e.g. gemini-2.5-pro");
    if (provider == QLatin1String("openai"))
        return QStringLiteral("e.g. gpt-4.1");
    return QStringLiteral("the served model's name");
}

} // namespace

ProposerSettings ProposerSettings::load()
{
    QSettings s;
    ProposerSettings out;
    out.kind = s.value(QStringLiteral("proposer/kind"), out.kind).toString() == QLatin1String("llm") ? QStringLiteral("llm")
                                                                                                   : QStringLiteral("templates");
    const QString provider = s.value(QStringLiteral("proposer/provider"), out.provider).toString();
    for (const auto &p : providers())
        if (p.second == provider)
            out.provider = provider;
    out.model = s.value(QStringLiteral("proposer/model")).toString();
    out.baseUrl = s.value(QStringLiteral("proposer/baseUrl")).toString();
    out.budget = std::max(0.0, s.value(QStringLiteral("proposer/budget"), 0.0).toDouble());
    return out;
}

void ProposerSettings::save() const
{
    QSettings s;
    s.setValue(QStringLiteral("proposer/kind"), kind);
    s.setValue(QStringLiteral("proposer/provider"), provider);
    s.setValue(QStringLiteral("proposer/model"), model);
    s.setValue(QStringLiteral("proposer/baseUrl"), baseUrl);
    s.setValue(QStringLiteral("proposer/budget"), budget);
}

ProposerChoice ProposerSettings::choice() const
{
    ProposerChoice c;
    if (!isLlm())
        return c;
    c.spec = "llm:" + provider.toStdString() + "/" + model.toStdString();
    c.baseUrl = baseUrl.toStdString();
    c.budget = budget;
    c.keyHint = "store one in Search > Settings";
    return c;
}

QString ProposerSettings::problem() const
{
    if (!isLlm())
        return {};
    if (model.trimmed().isEmpty())
        return QStringLiteral("Choose a model for %1.").arg(provider);
    try {
        llm::parseProviderSpec(provider.toStdString() + "/" + model.toStdString());
    } catch (const std::exception &e) {
        return QString::fromStdString(e.what());
    }
    if (!baseUrl.isEmpty()) {
        const QUrl url(baseUrl, QUrl::StrictMode);
        if (!url.isValid() || (url.scheme() != QLatin1String("http") && url.scheme() != QLatin1String("https")) || url.host().isEmpty())
            return QStringLiteral("The base URL '%1' is not an http:// or https:// address.").arg(baseUrl);
    }
    return {};
}

QString ProposerSettings::label() const
{
    return isLlm() ? QString::fromStdString(choice().spec) : QStringLiteral("templates");
}

QList<QPair<QString, QString>> ProposerSettings::providers()
{
    return {
        {QStringLiteral("OpenRouter"), QStringLiteral("openrouter")},
        {QStringLiteral("OpenAI (or any OpenAI-compatible server: set its base URL)"), QStringLiteral("openai")},
        {QStringLiteral("Anthropic"), QStringLiteral("anthropic")},
        {QStringLiteral("Google Gemini"), QStringLiteral("gemini")},
        {QStringLiteral("vLLM (local, OpenAI-compatible)"), QStringLiteral("vllm")},
        {QStringLiteral("llama.cpp server (local)"), QStringLiteral("llamacpp")},
        {QStringLiteral("Ollama (local)"), QStringLiteral("ollama")},
    };
}

ProviderSettingsPage::ProviderSettingsPage(const ProposerSettings &settings, KeyStore *keys, QWidget *parent)
    : QGroupBox(QStringLiteral("Proposer"), parent), m_keys(keys), m_kind(new QComboBox(this)), m_provider(new QComboBox(this)),
      m_model(new QLineEdit(this)), m_baseUrl(new QLineEdit(this)), m_budget(new QDoubleSpinBox(this)), m_priceHint(new QLabel(this)),
      m_key(new QLineEdit(this)), m_saveKey(new QPushButton(QStringLiteral("Save key"), this)),
      m_forgetKey(new QPushButton(QStringLiteral("Forget"), this)), m_keyStatus(new QLabel(this)),
      m_signIn(new QPushButton(QStringLiteral("Sign in with OpenRouter"), this)), m_signInStatus(new QLabel(this)),
      m_problem(new QLabel(this))
{
    setObjectName(QStringLiteral("proposerSettings"));
    m_kind->addItem(QStringLiteral("Templates (offline, the built-in families)"), QStringLiteral("templates"));
    m_kind->addItem(QStringLiteral("LLM (any operator; calls a model)"), QStringLiteral("llm"));
    m_kind->setCurrentIndex(settings.isLlm() ? 1 : 0);
    for (const auto &[label, provider] : ProposerSettings::providers())
        m_provider->addItem(label, provider);
    m_provider->setCurrentIndex(std::max(0, m_provider->findData(settings.provider)));
    m_model->setText(settings.model);
    m_baseUrl->setText(settings.baseUrl);
    m_budget->setRange(0, 1e6);
    m_budget->setDecimals(2);
    m_budget->setSingleStep(0.5);
    m_budget->setPrefix(QStringLiteral("$"));
    m_budget->setSpecialValueText(QStringLiteral("no budget"));
    m_budget->setValue(settings.budget);
    m_budget->setToolTip(QStringLiteral("The search stops once its LLM calls have cost this much (prices: resources/llm/prices.json, "
                                        "overridden by ~/.config/kforge/prices.json)"));
    m_key->setEchoMode(QLineEdit::Password);
    m_key->setClearButtonEnabled(true);
    m_key->setPlaceholderText(QStringLiteral("Paste a key to store it in the system keychain"));
    m_forgetKey->setToolTip(QStringLiteral("Remove this provider's key from the system keychain"));
    m_signIn->setToolTip(QStringLiteral("Opens OpenRouter in the browser; the key it gives goes to the system keychain"));
    for (auto *l : {m_keyStatus, m_signInStatus, m_priceHint, m_problem}) {
        l->setWordWrap(true);
        l->setTextFormat(Qt::PlainText);
    }
    // Room for a keychain's answer from the start: it arrives after the dialog is laid out.
    m_keyStatus->setMinimumHeight(m_keyStatus->fontMetrics().lineSpacing() * 3 + 2);
    m_keyStatus->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_problem->setStyleSheet(QStringLiteral("color: %1").arg(htmlColour(theme(palette()).bad)));
    m_problem->hide();

    auto *keyRow = new QHBoxLayout;
    keyRow->addWidget(m_key, 1);
    keyRow->addWidget(m_saveKey);
    keyRow->addWidget(m_forgetKey);
    auto *form = new QFormLayout(this);
    form->addRow(QStringLiteral("Proposer:"), m_kind);
    form->addRow(QStringLiteral("Provider:"), m_provider);
    form->addRow(QStringLiteral("Model:"), m_model);
    form->addRow(QStringLiteral("Base URL:"), m_baseUrl);
    form->addRow(QStringLiteral("Budget:"), m_budget);
    form->addRow(QString(), m_priceHint);
    form->addRow(QStringLiteral("API key:"), keyRow);
    form->addRow(QString(), m_keyStatus);
    form->addRow(QString(), m_signIn);
    form->addRow(QString(), m_signInStatus);
    form->addRow(m_problem);

    connect(m_kind, &QComboBox::currentIndexChanged, this, &ProviderSettingsPage::updateEnabled);
    connect(m_provider, &QComboBox::currentIndexChanged, this, [this] {
        updateHints();
        refreshKeyStatus();
    });
    connect(m_model, &QLineEdit::textChanged, this, &ProviderSettingsPage::updateHints);
    connect(m_saveKey, &QPushButton::clicked, this, [this] {
        if (!m_key->text().trimmed().isEmpty())
            saveKey(currentProvider(), m_key->text().trimmed(), QStringLiteral("Key saved"));
    });
    connect(m_forgetKey, &QPushButton::clicked, this, [this] {
        if (!m_keys)
            return;
        const QString provider = currentProvider();
        m_keys->remove(provider, this, [this, provider](const KeyStore::Result &r) {
            QString text = QStringLiteral("Key removed. Now: %1").arg(KeyStore::describe(provider, r.source));
            if (!r.error.isEmpty())
                text = QStringLiteral("Could not remove the key from the keychain: %1").arg(r.error);
            showStatus(m_keyStatus, text);
            emit keyStatusChanged(text);
        });
    });
    connect(m_signIn, &QPushButton::clicked, this, &ProviderSettingsPage::startSignIn);
    updateEnabled();
    updateHints();
    refreshKeyStatus();
}

QString ProviderSettingsPage::currentProvider() const
{
    return m_provider->currentData().toString();
}

ProposerSettings ProviderSettingsPage::settings() const
{
    ProposerSettings s;
    s.kind = m_kind->currentData().toString();
    s.provider = currentProvider();
    s.model = m_model->text().trimmed();
    s.baseUrl = m_baseUrl->text().trimmed();
    s.budget = m_budget->value();
    return s;
}

QString ProviderSettingsPage::keyStatus() const
{
    return m_keyStatus->text();
}

QString ProviderSettingsPage::signInStatus() const
{
    return m_signInStatus->text();
}

bool ProviderSettingsPage::validate()
{
    const QString problem = settings().problem();
    m_problem->setText(problem);
    m_problem->setVisible(!problem.isEmpty());
    if (!problem.isEmpty())
        return false;
    if (!m_key->text().trimmed().isEmpty()) // typed and not yet saved: OK means keep it
        saveKey(currentProvider(), m_key->text().trimmed(), QStringLiteral("Key saved"));
    return true;
}

void ProviderSettingsPage::updateEnabled()
{
    const bool llm = m_kind->currentData().toString() == QLatin1String("llm");
    for (QWidget *w : std::initializer_list<QWidget *>{m_provider, m_model, m_baseUrl, m_budget})
        w->setEnabled(llm);
}

void ProviderSettingsPage::updateHints()
{
    const QString provider = currentProvider();
    m_model->setPlaceholderText(modelExample(provider));
    try {
        m_baseUrl->setPlaceholderText(QString::fromStdString(llm::defaultBaseUrl(provider.toStdString())));
    } catch (const std::exception &) {
        m_baseUrl->setPlaceholderText(QString());
    }
    const QString model = m_model->text().trimmed();
    if (model.isEmpty()) {
        m_priceHint->clear();
        return;
    }
    try {
        const auto table = llm::PriceTable::load();
        if (const auto p = table.find(provider.toStdString(), model.toStdString()))
            m_priceHint->setText(QStringLiteral("Price: %1 %2 in, %3 out per million tokens")
                                     .arg(QString::fromStdString(table.currency()))
                                     .arg(p->inputPerMillion, 0, 'f', 2)
                                     .arg(p->outputPerMillion, 0, 'f', 2));
        else
            m_priceHint->setText(QStringLiteral("No price is known for this model: its cost shows as unknown, and a budget "
                                                "is refused when the search starts (add it to %1).")
                                     .arg(QString::fromStdString(llm::PriceTable::userFile())));
    } catch (const std::exception &e) {
        m_priceHint->setText(QString::fromStdString(e.what()));
    }
}

void ProviderSettingsPage::refreshKeyStatus()
{
    if (!m_keys) {
        m_keyStatus->setText(QStringLiteral("Key: from the environment only"));
        return;
    }
    const QString provider = currentProvider();
    m_keyStatus->setText(QStringLiteral("Key: looking in the system keychain…"));
    m_keys->read(provider, this, [this, provider](const KeyStore::Result &r) {
        if (provider != currentProvider())
            return; // the person picked another provider meanwhile
        QString text = QStringLiteral("Key: %1").arg(KeyStore::describe(provider, r.source));
        if (!r.error.isEmpty())
            text += QStringLiteral(". The keychain could not be read: %1").arg(r.error);
        showStatus(m_keyStatus, text);
        emit keyStatusChanged(text);
    });
}

void ProviderSettingsPage::saveKey(const QString &provider, const QString &key, const QString &how)
{
    m_key->clear(); // the field never holds a key longer than it takes to store it
    if (!m_keys)
        return;
    // Answered on the key store, which outlives this page: OK may close the dialog first.
    m_keys->write(provider, key, m_keys, [keys = m_keys, page = QPointer<ProviderSettingsPage>(this), provider, how](const KeyStore::Result &r) {
        const QString var = QString::fromStdString(llm::keyVariable(provider.toStdString()));
        const QString text = r.error.isEmpty()
                                 ? QStringLiteral("%1: %2 key is in the system keychain.").arg(how, provider)
                                 : QStringLiteral("%1 for this run only: %2. Until kforge quits the %3 key is kept in memory; "
                                                  "set %4 to have one in every run.")
                                       .arg(how, r.error, provider, var);
        emit keys->notice(text);
        if (page) {
            page->showStatus(page->m_keyStatus, text);
            emit page->keyStatusChanged(text);
        }
    });
}

// Answers arrive after the dialog is laid out: a longer one grows the window instead of being cut off.
void ProviderSettingsPage::showStatus(QLabel *label, const QString &text)
{
    label->setText(text);
    // A wrapped label's height depends on its width, which the dialog's size hint leaves out.
    if (label->width() > 0)
        label->setMinimumHeight(std::max(label->minimumHeight(), label->heightForWidth(label->width())));
    if (QWidget *w = window(); w->isVisible()) {
        if (QLayout *layout = w->layout())
            layout->activate();
        w->resize(w->size().expandedTo(w->sizeHint()));
    }
}

void ProviderSettingsPage::startSignIn()
{
    delete m_signInFlow;
    m_signInFlow = new OpenRouterSignIn(m_endpoints, this);
    connect(m_signInFlow, &OpenRouterSignIn::openBrowser, this, [this](const QUrl &url) {
        if (m_browser)
            m_browser(url);
        else if (!QDesktopServices::openUrl(url))
            showStatus(m_signInStatus, QStringLiteral("Open this address in a browser: %1").arg(url.toString()));
    });
    connect(m_signInFlow, &OpenRouterSignIn::succeeded, this, [this](const QString &key) {
        m_kind->setCurrentIndex(m_kind->findData(QStringLiteral("llm")));
        m_provider->setCurrentIndex(m_provider->findData(QStringLiteral("openrouter")));
        showStatus(m_signInStatus, QStringLiteral("Signed in with OpenRouter."));
        saveKey(QStringLiteral("openrouter"), key, QStringLiteral("Signed in with OpenRouter"));
        m_signIn->setEnabled(true);
        emit signInFinished(true, m_signInStatus->text());
    });
    connect(m_signInFlow, &OpenRouterSignIn::failed, this, [this](const QString &message) {
        showStatus(m_signInStatus, QStringLiteral("Sign-in failed: %1").arg(message));
        m_signIn->setEnabled(true);
        emit signInFinished(false, m_signInStatus->text());
    });
    m_signIn->setEnabled(false);
    m_signInStatus->setText(QStringLiteral("Waiting for OpenRouter in the browser…"));
    m_signInFlow->start();
}

} // namespace kforge::ui
