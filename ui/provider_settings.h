#pragma once
// Which proposer the window's searches run, and the Settings page that picks it: the offline
// templates, or an LLM with its provider, model, base URL and money budget (kept in QSettings under
// "proposer/"), and the provider's key, which lives in the system keychain (ui/keychain.h) and never
// in QSettings. OpenRouter's key can come from "Sign in with OpenRouter" (ui/oauth_signin.h).
#include <QGroupBox>
#include <QString>
#include <functional>

#include "proposers/proposer_factory.h"
#include "ui/oauth_signin.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace kforge::ui {

class KeyStore;

struct ProposerSettings {
    QString kind = QStringLiteral("templates"); // "templates" or "llm"
    QString provider = QStringLiteral("openrouter");
    QString model;
    QString baseUrl; // empty: the provider's public endpoint
    double budget = 0; // money for the calls; 0: none

    bool isLlm() const { return kind == QLatin1String("llm"); }
    static ProposerSettings load();
    void save() const;
    // What core/proposers/proposer_factory.h builds; the key is filled in when the search starts.
    ProposerChoice choice() const;
    // Empty, or what is wrong ("choose a model"), in words.
    QString problem() const;
    // One line for tooltips and the status bar: "templates" or "llm:openrouter/deepseek/deepseek-chat".
    QString label() const;
    // The providers offered, as (label, provider) pairs.
    static QList<QPair<QString, QString>> providers();
};

class ProviderSettingsPage : public QGroupBox {
    Q_OBJECT
public:
    ProviderSettingsPage(const ProposerSettings &settings, KeyStore *keys, QWidget *parent = nullptr);

    ProposerSettings settings() const;
    // Shows the problem and returns false when the choice cannot run; stores a typed key.
    bool validate();

    // Tests point the sign-in at a local server and open its URL themselves instead of a browser.
    void setSignInEndpoints(const SignInEndpoints &endpoints) { m_endpoints = endpoints; }
    void setBrowser(std::function<void(const QUrl &)> open) { m_browser = std::move(open); }

    QComboBox *kindBox() const { return m_kind; }
    QComboBox *providerBox() const { return m_provider; }
    QLineEdit *modelEdit() const { return m_model; }
    QLineEdit *baseUrlEdit() const { return m_baseUrl; }
    QDoubleSpinBox *budgetBox() const { return m_budget; }
    QLineEdit *keyEdit() const { return m_key; }
    QPushButton *saveKeyButton() const { return m_saveKey; }
    QPushButton *forgetKeyButton() const { return m_forgetKey; }
    QPushButton *signInButton() const { return m_signIn; }
    QString keyStatus() const;
    QString signInStatus() const;
    OpenRouterSignIn *signIn() const { return m_signInFlow; }

signals:
    void keyStatusChanged(const QString &text);
    void signInFinished(bool ok, const QString &text);

private:
    void updateEnabled();
    void updateHints();
    void refreshKeyStatus();
    void saveKey(const QString &provider, const QString &key, const QString &how);
    void startSignIn();
    void showStatus(QLabel *label, const QString &text);
    QString currentProvider() const;

    KeyStore *m_keys;
    QComboBox *m_kind;
    QComboBox *m_provider;
    QLineEdit *m_model;
    QLineEdit *m_baseUrl;
    QDoubleSpinBox *m_budget;
    QLabel *m_priceHint;
    QLineEdit *m_key;
    QPushButton *m_saveKey;
    QPushButton *m_forgetKey;
    QLabel *m_keyStatus;
    QPushButton *m_signIn;
    QLabel *m_signInStatus;
    QLabel *m_problem;
    SignInEndpoints m_endpoints;
    std::function<void(const QUrl &)> m_browser;
    OpenRouterSignIn *m_signInFlow = nullptr;
};

} // namespace kforge::ui
