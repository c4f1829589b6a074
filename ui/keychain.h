#pragma once
// Provider keys for the GUI: kept in the system keychain through QtKeychain (one entry per provider
// under the service "kforge"), never in QSettings, the session file or a log. Where the keychain
// cannot be reached (no Secret Service on the session bus, a locked or refused keychain) a key the
// person typed or got from the OpenRouter sign-in is kept in memory until kforge quits, the error
// says why, and the provider's environment variable still works.
//
// Every call answers later on `context`'s thread (a keychain is a D-Bus round trip, or a prompt).
#include <QHash>
#include <QObject>
#include <QString>
#include <functional>

namespace kforge::ui {

class KeyStore : public QObject {
    Q_OBJECT
public:
    enum class Source { None, ThisRun, Keychain, Environment };
    struct Result {
        QString key;    // empty: none found
        Source source = Source::None;
        QString error;  // why the keychain could not do it, in words; empty when it could
    };
    using Callback = std::function<void(const Result &)>;

    // `service` names the keychain entries' service; empty: the application's name ("kforge"; a test
    // program's own name, so tests never touch a person's keys).
    explicit KeyStore(QString service = QString(), QObject *parent = nullptr);

    // This run's key, else the keychain's, else the provider's environment variable.
    void read(const QString &provider, QObject *context, Callback done);
    // Into the keychain and for this run; on a keychain error the key is still kept for this run.
    void write(const QString &provider, const QString &key, QObject *context, Callback done);
    // Out of the keychain and this run (the environment is the person's own).
    void remove(const QString &provider, QObject *context, Callback done);

    QString service() const { return m_service; }
    // Where a read key came from, for the Settings page: "in the system keychain", "from OPENAI_API_KEY", ...
    static QString describe(const QString &provider, Source source);

signals:
    // What became of a key a person stored (the keychain has it, or only this run does and why), for
    // the window's status bar: the Settings dialog may be closed by the time the keychain answers.
    void notice(const QString &text);

private:
    QString m_service;
    QHash<QString, Result> m_known; // keys stored in this run, and where they went: the keychain or only here
};

} // namespace kforge::ui
