#pragma once
// "Sign in with OpenRouter": OAuth's authorization-code flow with PKCE (S256) and a loopback redirect.
//
//   1. a QOAuthHttpServerReplyHandler listens on 127.0.0.1 on a free port;
//   2. the browser opens {authorize}?callback_url=http://127.0.0.1:PORT/kforge/signin?state=S
//      &code_challenge=BASE64URL(SHA256(verifier))&code_challenge_method=S256;
//   3. OpenRouter sends the browser back to the callback with ?code=...; a callback whose state is
//      not this sign-in's is refused, so another page cannot hand kforge a code of its choosing;
//   4. the code is exchanged at {keys} by POSTing {code, code_verifier, code_challenge_method}; the
//      answer's "key" is an ordinary OpenRouter API key.
// The state rides in the callback URL because OpenRouter documents no state parameter of its own; a
// server that follows RFC 6749 keeps the callback's query too. Qt 6.4's QOAuth2AuthorizationCodeFlow
// has no PKCE, drops a wrong state with only a log line, and posts a form where OpenRouter takes
// JSON, so the flow is ours around Qt's loopback handler. The endpoints are settable for tests.
#include <QObject>
#include <QPointer>
#include <QTimer>
#include <QUrl>
#include <QVariantMap>

class QNetworkAccessManager;
class QOAuthHttpServerReplyHandler;

namespace kforge::ui {

struct SignInEndpoints {
    QUrl authorize = QUrl(QStringLiteral("https://openrouter.ai/auth"));
    QUrl keys = QUrl(QStringLiteral("https://openrouter.ai/api/v1/auth/keys"));
};

// RFC 7636: a verifier of 43 characters from 32 random bytes, and its S256 challenge.
QByteArray pkceVerifier();
QByteArray pkceChallenge(const QByteArray &verifier);

class OpenRouterSignIn : public QObject {
    Q_OBJECT
public:
    explicit OpenRouterSignIn(SignInEndpoints endpoints = {}, QObject *parent = nullptr);
    ~OpenRouterSignIn() override;

    // Listens and emits openBrowser(); false (and failed()) when no loopback port could be opened.
    bool start();
    void cancel();
    bool isActive() const { return m_active; }
    QUrl authorizationUrl() const { return m_authorizationUrl; }
    void setTimeout(int ms) { m_timeout.setInterval(ms); }

signals:
    void openBrowser(const QUrl &url);
    void succeeded(const QString &key);
    void failed(const QString &message);

private:
    void onCallback(const QVariantMap &values);
    void exchange(const QString &code);
    void finish();
    void fail(const QString &message);

    SignInEndpoints m_endpoints;
    QOAuthHttpServerReplyHandler *m_handler = nullptr;
    QNetworkAccessManager *m_network;
    QByteArray m_verifier;
    QString m_state;
    QUrl m_authorizationUrl;
    QTimer m_timeout;
    bool m_active = false;
};

} // namespace kforge::ui
