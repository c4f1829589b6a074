#include "ui/oauth_signin.h"

#include <QCryptographicHash>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QOAuthHttpServerReplyHandler>
#include <QRandomGenerator>
#include <QUrlQuery>

namespace kforge::ui {

namespace {

constexpr auto kBase64Url = QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals;
const QString kCallbackPath = QStringLiteral("/kforge/signin");

QByteArray randomBytes(int count)
{
    QByteArray bytes(count, Qt::Uninitialized);
    for (auto &b : bytes)
        b = char(QRandomGenerator::system()->bounded(256));
    return bytes;
}

// The error an OpenRouter-style JSON body carries: {"error": {"message": ...}}, {"error": "..."} or {"message": ...}.
QString bodyError(const QByteArray &body)
{
    const auto o = QJsonDocument::fromJson(body).object();
    const auto e = o.value(QStringLiteral("error"));
    if (e.isObject() && e.toObject().contains(QStringLiteral("message")))
        return e.toObject().value(QStringLiteral("message")).toString();
    if (e.isString())
        return e.toString();
    if (o.contains(QStringLiteral("message")))
        return o.value(QStringLiteral("message")).toString();
    return QString::fromUtf8(body.left(300)).simplified();
}

} // namespace

QByteArray pkceVerifier()
{
    return randomBytes(32).toBase64(kBase64Url);
}

QByteArray pkceChallenge(const QByteArray &verifier)
{
    return QCryptographicHash::hash(verifier, QCryptographicHash::Sha256).toBase64(kBase64Url);
}

OpenRouterSignIn::OpenRouterSignIn(SignInEndpoints endpoints, QObject *parent)
    : QObject(parent), m_endpoints(std::move(endpoints)), m_network(new QNetworkAccessManager(this))
{
    m_timeout.setSingleShot(true);
    m_timeout.setInterval(5 * 60 * 1000);
    connect(&m_timeout, &QTimer::timeout, this,
            [this] { fail(QStringLiteral("No answer from the browser in %1 minutes; sign in again.").arg(m_timeout.interval() / 60000)); });
}

OpenRouterSignIn::~OpenRouterSignIn() = default;

bool OpenRouterSignIn::start()
{
    cancel();
    m_handler = new QOAuthHttpServerReplyHandler(QHostAddress::LocalHost, 0, this);
    if (!m_handler->isListening()) {
        fail(QStringLiteral("Could not listen on a loopback port for OpenRouter's answer."));
        return false;
    }
    m_handler->setCallbackPath(kCallbackPath);
    m_handler->setCallbackText(QStringLiteral("kforge has OpenRouter's answer; you can close this page."));
    connect(m_handler, &QOAuthHttpServerReplyHandler::callbackReceived, this, &OpenRouterSignIn::onCallback);

    m_verifier = pkceVerifier();
    m_state = QString::fromLatin1(randomBytes(16).toBase64(kBase64Url));
    QUrl callback;
    callback.setScheme(QStringLiteral("http"));
    callback.setHost(QStringLiteral("127.0.0.1"));
    callback.setPort(m_handler->port());
    callback.setPath(kCallbackPath);
    callback.setQuery(QUrlQuery{{QStringLiteral("state"), m_state}});
    // Encoded by hand: the callback URL, query and all, is one percent-encoded value.
    const QByteArray query = "callback_url=" + QUrl::toPercentEncoding(callback.toString(QUrl::FullyEncoded)) +
                             "&code_challenge=" + pkceChallenge(m_verifier) + "&code_challenge_method=S256";
    m_authorizationUrl = m_endpoints.authorize;
    m_authorizationUrl.setQuery(QString::fromLatin1(query), QUrl::StrictMode);
    m_active = true;
    m_timeout.start();
    emit openBrowser(m_authorizationUrl);
    return true;
}

void OpenRouterSignIn::cancel()
{
    finish();
}

void OpenRouterSignIn::finish()
{
    m_active = false;
    m_timeout.stop();
    m_verifier.clear();
    if (m_handler) {
        m_handler->close();
        m_handler->deleteLater(); // it may be inside its own callbackReceived
        m_handler = nullptr;
    }
}

void OpenRouterSignIn::fail(const QString &message)
{
    finish();
    emit failed(message);
}

void OpenRouterSignIn::onCallback(const QVariantMap &values)
{
    if (!m_active)
        return; // one answer per sign-in
    if (values.value(QStringLiteral("state")).toString() != m_state) {
        fail(QStringLiteral("Refused an answer that did not carry this sign-in's state: it did not come from the sign-in "
                            "kforge started. Sign in again."));
        return;
    }
    if (const QString error = values.value(QStringLiteral("error")).toString(); !error.isEmpty()) {
        fail(QStringLiteral("OpenRouter did not sign you in: %1").arg(error));
        return;
    }
    const QString code = values.value(QStringLiteral("code")).toString();
    if (code.isEmpty()) {
        fail(QStringLiteral("OpenRouter's answer held no code; sign in again."));
        return;
    }
    m_handler->close(); // nothing else may answer this sign-in
    exchange(code);
}

void OpenRouterSignIn::exchange(const QString &code)
{
    QNetworkRequest request(m_endpoints.keys);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
    request.setTransferTimeout(30000);
    const QJsonObject body{{QStringLiteral("code"), code},
                           {QStringLiteral("code_verifier"), QString::fromLatin1(m_verifier)},
                           {QStringLiteral("code_challenge_method"), QStringLiteral("S256")}};
    auto *reply = m_network->post(request, QJsonDocument(body).toJson(QJsonDocument::Compact));
    connect(reply, &QNetworkReply::finished, this, [this, reply] {
        reply->deleteLater();
        if (!m_active)
            return;
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        const QByteArray data = reply->readAll();
        if (reply->error() != QNetworkReply::NoError && status == 0) {
            fail(QStringLiteral("Could not reach %1: %2").arg(m_endpoints.keys.host(), reply->errorString()));
            return;
        }
        const QString key = QJsonDocument::fromJson(data).object().value(QStringLiteral("key")).toString();
        if (status != 200 || key.isEmpty()) {
            fail(QStringLiteral("OpenRouter did not exchange the code for a key (HTTP %1): %2").arg(status).arg(bodyError(data)));
            return;
        }
        finish();
        emit succeeded(key);
    });
}

} // namespace kforge::ui
