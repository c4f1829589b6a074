#include "ui/keychain.h"

#include <QCoreApplication>
#include <QMetaObject>
#include <qt6keychain/keychain.h>

#include "llm/client.h"
#include "proposers/proposer_factory.h"

namespace kforge::ui {

namespace {

QString entryName(const QString &provider)
{
    return QStringLiteral("provider/") + provider;
}

KeyStore::Result fromEnvironment(const QString &provider, KeyStore::Result r)
{
    if (r.key.isEmpty()) {
        r.key = QString::fromStdString(keyFromEnvironment(provider.toStdString()));
        r.source = r.key.isEmpty() ? KeyStore::Source::None : KeyStore::Source::Environment;
    }
    return r;
}

// QtKeychain's own message, with what the person can do about it.
QString keychainError(const QKeychain::Job *job)
{
    const QString detail = job->errorString().isEmpty() ? QStringLiteral("error %1").arg(int(job->error())) : job->errorString();
    switch (job->error()) {
    case QKeychain::NoBackendAvailable:
        return QStringLiteral("no system keychain is available (%1)").arg(detail);
    case QKeychain::AccessDenied:
    case QKeychain::AccessDeniedByUser:
        return QStringLiteral("the system keychain refused access (%1)").arg(detail);
    default: // with no Secret Service on the session bus QtKeychain says only "Unknown error"
        return QStringLiteral("the system keychain failed (%1; is a Secret Service such as GNOME Keyring or KWallet running?)").arg(detail);
    }
}

void later(QObject *context, KeyStore::Callback done, KeyStore::Result r)
{
    QMetaObject::invokeMethod(context, [done = std::move(done), r = std::move(r)] { done(r); }, Qt::QueuedConnection);
}

} // namespace

KeyStore::KeyStore(QString service, QObject *parent) : QObject(parent), m_service(std::move(service))
{
    if (m_service.isEmpty())
        m_service = QCoreApplication::applicationName().isEmpty() ? QStringLiteral("kforge") : QCoreApplication::applicationName();
}

QString KeyStore::describe(const QString &provider, Source source)
{
    const QString var = QString::fromStdString(llm::keyVariable(provider.toStdString()));
    switch (source) {
    case Source::ThisRun:
        return QStringLiteral("kept until kforge quits (not in the keychain)");
    case Source::Keychain:
        return QStringLiteral("in the system keychain");
    case Source::Environment:
        return QStringLiteral("from %1").arg(var);
    case Source::None:
        break;
    }
    return var.isEmpty() ? QStringLiteral("none needed for a local server") : QStringLiteral("none (store one here or set %1)").arg(var);
}

void KeyStore::read(const QString &provider, QObject *context, Callback done)
{
    if (const auto it = m_known.constFind(provider); it != m_known.cend()) {
        later(context, std::move(done), it.value());
        return;
    }
    auto *job = new QKeychain::ReadPasswordJob(m_service, this);
    job->setAutoDelete(true);
    job->setInsecureFallback(false); // its fallback is a plain-text QSettings file: never
    job->setKey(entryName(provider));
    connect(job, &QKeychain::Job::finished, context, [provider, done = std::move(done)](QKeychain::Job *j) {
        Result r;
        if (j->error() == QKeychain::NoError) {
            r.key = static_cast<QKeychain::ReadPasswordJob *>(j)->textData();
            r.source = r.key.isEmpty() ? Source::None : Source::Keychain;
        } else if (j->error() != QKeychain::EntryNotFound) {
            r.error = keychainError(j);
        }
        done(fromEnvironment(provider, r));
    });
    job->start();
}

void KeyStore::write(const QString &provider, const QString &key, QObject *context, Callback done)
{
    m_known.insert(provider, {key, Source::ThisRun, {}}); // usable at once, whatever the keychain answers
    auto *job = new QKeychain::WritePasswordJob(m_service, this);
    job->setAutoDelete(true);
    job->setInsecureFallback(false);
    job->setKey(entryName(provider));
    job->setTextData(key);
    connect(job, &QKeychain::Job::finished, context, [this, provider, key, done = std::move(done)](QKeychain::Job *j) {
        const bool kept = j->error() == QKeychain::NoError;
        if (kept && m_known.value(provider).key == key)
            m_known[provider].source = Source::Keychain;
        done({key, kept ? Source::Keychain : Source::ThisRun, kept ? QString() : keychainError(j)});
    });
    job->start();
}

void KeyStore::remove(const QString &provider, QObject *context, Callback done)
{
    m_known.remove(provider);
    auto *job = new QKeychain::DeletePasswordJob(m_service, this);
    job->setAutoDelete(true);
    job->setInsecureFallback(false);
    job->setKey(entryName(provider));
    connect(job, &QKeychain::Job::finished, context, [provider, done = std::move(done)](QKeychain::Job *j) {
        Result r;
        if (j->error() != QKeychain::NoError && j->error() != QKeychain::EntryNotFound)
            r.error = keychainError(j);
        done(fromEnvironment(provider, r));
    });
    job->start();
}

} // namespace kforge::ui
