// The LLM proposer in the window: the provider picker in Settings, keys in the keychain (or for this
// run where no keychain is reachable) and never in QSettings or the session, "Sign in with OpenRouter"
// against tests/oauth_server.py (PKCE S256, state, the key endpoint), the LLM tab and the status bar's
// cost, and a search the window runs with the llm proposer against tests/llm_server.py.
#include <QComboBox>
#include <QDirIterator>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QUrlQuery>
#include <QtTest>

#include "llm/http.h"
#include "llm/reply.h"
#include "store/llm_calls.h"
#include "store/session_store.h"
#include "test_support.h"
#include "ui/keychain.h"
#include "ui/llm_call_view.h"
#include "ui/main_window.h"
#include "ui/node_inspector.h"
#include "ui/oauth_signin.h"
#include "ui/provider_settings.h"
#include "ui/search_settings.h"
#include "ui/session_context.h"

using namespace kforge;
using namespace kforge::ui;
using J = nlohmann::json;

namespace {

// Recognisable anywhere it should not be.
const char *kFakeKey = "sk-kforge-FAKE-KEY-5e1f0c2a9b7d4e66";

using test::hardsigmoidCard;

std::string llmData(const char *name)
{
    return test::readAll(QStringLiteral(KFORGE_TEST_KERNELS "/../data/llm/") + QString::fromLatin1(name)).toStdString();
}

// A helper server: python3 SCRIPT ARGS..., which prints "PORT n" when it listens.
bool startServer(QProcess &p, const QString &script, const QStringList &args, int &port)
{
    p.setProgram(QStringLiteral("python3"));
    p.setArguments(QStringList{QStringLiteral(KFORGE_TEST_KERNELS "/../") + script} + args);
    p.start();
    if (!p.waitForStarted(10000) || !p.waitForReadyRead(10000))
        return false;
    const auto line = QString::fromUtf8(p.readLine()).trimmed();
    port = line.startsWith(QStringLiteral("PORT ")) ? line.mid(5).toInt() : 0;
    return port > 0;
}

// The authorization URL with its callback's state or its challenge replaced, as another page (or a
// code made for another verifier) would hand the browser.
QUrl tampered(const QUrl &url, const QString &state, const QByteArray &challenge)
{
    const QUrlQuery q(url);
    QUrl callback(q.queryItemValue(QStringLiteral("callback_url"), QUrl::FullyDecoded));
    if (!state.isNull())
        callback.setQuery(QUrlQuery{{QStringLiteral("state"), state}});
    const QByteArray c = challenge.isEmpty() ? q.queryItemValue(QStringLiteral("code_challenge")).toLatin1() : challenge;
    QUrl out = url;
    out.setQuery(QString::fromLatin1("callback_url=" + QUrl::toPercentEncoding(callback.toString(QUrl::FullyEncoded)) +
                                     "&code_challenge=" + c + "&code_challenge_method=S256"),
                 QUrl::StrictMode);
    return out;
}

KeyStore::Result readKey(KeyStore &keys, const QString &provider)
{
    KeyStore::Result out;
    bool done = false;
    QObject context;
    keys.read(provider, &context, [&](const KeyStore::Result &r) {
        out = r;
        done = true;
    });
    if (!QTest::qWaitFor([&] { return done; }, 30000))
        out.error = QStringLiteral("the key store did not answer in 30 s");
    return out;
}

} // namespace

class TestGuiLlm : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QProcess m_llm;
    QProcess m_oauth;
    int m_llmPort = 0;
    int m_oauthPort = 0;
    QNetworkAccessManager m_browser;

    QString path(const QString &name) const { return m_dir.filePath(name); }
    std::string llmBase() const { return "http://127.0.0.1:" + std::to_string(m_llmPort); }
    QString oauthBase() const { return QStringLiteral("http://127.0.0.1:%1").arg(m_oauthPort); }

    J llmControl(const char *route, const J &body = J::object())
    {
        llm::HttpRequest r;
        r.url = llmBase() + route;
        r.body = body.dump();
        r.headers = {{"Content-Type", "application/json"}};
        const auto res = llm::httpPost(r);
        return res.failure == llm::TransportFailure::None ? J::parse(res.response.body, nullptr, false) : J();
    }

    J issuedKeys()
    {
        auto *reply = m_browser.get(QNetworkRequest(QUrl(oauthBase() + QStringLiteral("/__issued"))));
        QSignalSpy done(reply, &QNetworkReply::finished);
        if (!reply->isFinished())
            done.wait(10000);
        reply->deleteLater();
        return J::parse(reply->readAll().toStdString(), nullptr, false);
    }

    // The person's browser: follows the authorization URL and OpenRouter's redirect to the loopback.
    void visit(const QUrl &url)
    {
        auto *reply = m_browser.get(QNetworkRequest(url));
        connect(reply, &QNetworkReply::finished, reply, &QObject::deleteLater);
    }

    ProviderSettingsPage *settingsPage(MainWindow &w, SettingsDialog *&dialog)
    {
        dialog = w.openSettingsDialog();
        auto *page = dialog->proposerPage();
        SignInEndpoints e;
        e.authorize = QUrl(oauthBase() + QStringLiteral("/auth"));
        e.keys = QUrl(oauthBase() + QStringLiteral("/api/v1/auth/keys"));
        page->setSignInEndpoints(e);
        return page;
    }

    // Every file under the test folder and the settings file, searched for the key.
    void verifyKeyInNoFile(const QString &where)
    {
        QSettings().sync();
        QStringList files{QSettings().fileName()};
        QDirIterator it(m_dir.path(), QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
        while (it.hasNext())
            files << it.next();
        for (const auto &f : files)
            QVERIFY2(!test::readAll(f).contains(kFakeKey), qPrintable(where + QStringLiteral(": the key is in ") + f));
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QStandardPaths::setTestModeEnabled(true); // settings, layouts and recent files stay out of the user's
        QSettings().clear();
        qunsetenv("OPENAI_API_KEY");
        qunsetenv("OPENROUTER_API_KEY");
        QVERIFY2(startServer(m_llm, QStringLiteral("llm_server.py"), {QStringLiteral(KFORGE_TEST_KERNELS "/../data/llm")}, m_llmPort),
                 "tests/llm_server.py did not start");
        QVERIFY2(startServer(m_oauth, QStringLiteral("oauth_server.py"), {}, m_oauthPort), "tests/oauth_server.py did not start");
    }

    void cleanupTestCase()
    {
        // Whatever reached a real keychain under this program's service goes again.
        KeyStore keys;
        for (const char *p : {"openai", "openrouter", "anthropic"}) {
            bool done = false;
            QObject context;
            keys.remove(QString::fromLatin1(p), &context, [&](const KeyStore::Result &) { done = true; });
            if (!QTest::qWaitFor([&] { return done; }, 30000))
                qWarning("the key store did not answer removing the %s key", p);
        }
        for (QProcess *p : {&m_llm, &m_oauth}) {
            p->kill();
            p->waitForFinished(5000);
        }
    }

    void pkce()
    {
        // RFC 7636, appendix B.
        QCOMPARE(pkceChallenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"), QByteArray("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
        const QByteArray a = pkceVerifier(), b = pkceVerifier();
        QCOMPARE(a.size(), 43);
        QVERIFY(a != b);
        static const QRegularExpression unreserved(QStringLiteral("^[A-Za-z0-9_-]{43}$"));
        QVERIFY2(unreserved.match(QString::fromLatin1(a)).hasMatch(), a.constData());
    }

    void promptText_data()
    {
        QTest::addColumn<QString>("body");
        QTest::addColumn<QString>("expected");
        QTest::newRow("openai") << QStringLiteral(R"({"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"U"}]})")
                                << QStringLiteral("━━ system ━━\nS\n\n━━ user ━━\nU");
        QTest::newRow("anthropic") << QStringLiteral(R"({"system":"S","messages":[{"role":"user","content":[{"type":"text","text":"U1"},{"type":"text","text":"U2"}]},{"role":"assistant","content":"A"}]})")
                                   << QStringLiteral("━━ system ━━\nS\n\n━━ user ━━\nU1\nU2\n\n━━ assistant ━━\nA");
        QTest::newRow("gemini") << QStringLiteral(R"({"systemInstruction":{"parts":[{"text":"S"}]},"contents":[{"role":"user","parts":[{"text":"U"}]},{"role":"model","parts":[{"text":"M"}]}]})")
                                << QStringLiteral("━━ system ━━\nS\n\n━━ user ━━\nU\n\n━━ model ━━\nM");
        QTest::newRow("not json") << QStringLiteral("plain words") << QStringLiteral("plain words");
        QTest::newRow("no conversation") << QStringLiteral(R"({"x":1})") << QStringLiteral(R"({"x":1})");
    }

    void promptText()
    {
        QFETCH(QString, body);
        QFETCH(QString, expected);
        QCOMPARE(ui::promptText(body.toStdString()), expected);
    }

    void costLine_data()
    {
        QTest::addColumn<int>("calls");
        QTest::addColumn<int>("unpriced");
        QTest::addColumn<double>("cost");
        QTest::addColumn<int>("attempts");
        QTest::addColumn<QString>("expected");
        QTest::newRow("one priced") << 1 << 0 << 0.0061 << 1 << QStringLiteral("1 call · 100 in / 20 out tokens · $0.0061 · 1 attempt");
        QTest::newRow("dollars") << 3 << 0 << 12.5 << 4 << QStringLiteral("3 calls · 100 in / 20 out tokens · $12.50 · 4 attempts");
        QTest::newRow("none priced") << 2 << 2 << 0.0 << 0 << QStringLiteral("2 calls · 100 in / 20 out tokens · unknown");
        QTest::newRow("some priced") << 3 << 1 << 0.02 << 0 << QStringLiteral("3 calls · 100 in / 20 out tokens · $0.0200 + 1 unpriced");
    }

    void costLine()
    {
        QFETCH(int, calls);
        QFETCH(int, unpriced);
        QFETCH(double, cost);
        QFETCH(int, attempts);
        QFETCH(QString, expected);
        LlmTotals t;
        t.calls = calls;
        t.unpriced = unpriced;
        t.cost = cost;
        t.inputTokens = 100;
        t.outputTokens = 20;
        QCOMPARE(ui::costLine(t, attempts), expected);
    }

    void proposerChoice_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("provider");
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("baseUrl");
        QTest::addColumn<QString>("problem"); // a part of it; empty: none
        QTest::addColumn<QString>("spec");
        QTest::newRow("templates") << "templates" << "openrouter" << "" << "" << "" << "templates";
        QTest::newRow("no model") << "llm" << "anthropic" << "" << "" << "Choose a model" << "llm:anthropic/";
        QTest::newRow("bad url") << "llm" << "openai" << "gpt-4.1" << "localhost:8000" << "not an http" << "llm:openai/gpt-4.1";
        QTest::newRow("openrouter model with a slash") << "llm" << "openrouter" << "deepseek/deepseek-chat" << "" << ""
                                                       << "llm:openrouter/deepseek/deepseek-chat";
        QTest::newRow("compatible server") << "llm" << "openai" << "qwen" << "http://gpu7:8000/v1" << "" << "llm:openai/qwen";
    }

    void proposerChoice()
    {
        QFETCH(QString, kind);
        QFETCH(QString, provider);
        QFETCH(QString, model);
        QFETCH(QString, baseUrl);
        QFETCH(QString, problem);
        QFETCH(QString, spec);
        ProposerSettings s;
        s.kind = kind;
        s.provider = provider;
        s.model = model;
        s.baseUrl = baseUrl;
        QVERIFY2(problem.isEmpty() ? s.problem().isEmpty() : s.problem().contains(problem), qPrintable(s.problem()));
        QCOMPARE(QString::fromStdString(s.choice().spec), spec);
        QCOMPARE(QString::fromStdString(s.choice().baseUrl), kind == QLatin1String("llm") ? baseUrl : QString());
    }

    // Settings keep the choice in QSettings; a typed key goes to the keychain or, where none answers,
    // is kept for this run with the reason on the page. The settings file never holds it.
    void settingsKeepTheChoiceAndNotTheKey()
    {
        MainWindow w;
        SettingsDialog *dialog = nullptr;
        auto *page = settingsPage(w, dialog);
        // The dialog closes on OK before the keychain answers: its answer goes to the window's status bar.
        QSignalSpy notice(w.searchController()->keyStore(), &KeyStore::notice);
        page->kindBox()->setCurrentIndex(page->kindBox()->findData(QStringLiteral("llm")));
        page->providerBox()->setCurrentIndex(page->providerBox()->findData(QStringLiteral("anthropic")));
        page->modelEdit()->clear();
        dialog->accept(); // no model: refused, nothing saved
        QVERIFY(dialog->isVisible());
        QVERIFY(!QSettings().contains(QStringLiteral("proposer/kind")));

        page->modelEdit()->setText(QStringLiteral("claude-sonnet-4-5"));
        page->budgetBox()->setValue(2.5);
        page->keyEdit()->setText(QString::fromLatin1(kFakeKey));
        dialog->accept();
        QVERIFY(page->keyEdit()->text().isEmpty()); // the field lets go of it at once
        QCOMPARE(QSettings().value(QStringLiteral("proposer/kind")).toString(), QStringLiteral("llm"));
        QCOMPARE(QSettings().value(QStringLiteral("proposer/provider")).toString(), QStringLiteral("anthropic"));
        QCOMPARE(QSettings().value(QStringLiteral("proposer/model")).toString(), QStringLiteral("claude-sonnet-4-5"));
        QCOMPARE(QSettings().value(QStringLiteral("proposer/budget")).toDouble(), 2.5);
        QCOMPARE(w.searchSettings().proposer.label(), QStringLiteral("llm:anthropic/claude-sonnet-4-5"));
        QVERIFY(notice.wait(30000) || !notice.isEmpty());
        const QString status = notice.last().at(0).toString();
        QCOMPARE(w.statusBar()->currentMessage(), status);
        const auto r = readKey(*w.searchController()->keyStore(), QStringLiteral("anthropic"));
        QCOMPARE(r.key, QString::fromLatin1(kFakeKey));
        if (r.source == KeyStore::Source::ThisRun)
            QVERIFY2(status.contains(QStringLiteral("for this run only")) && status.contains(QStringLiteral("ANTHROPIC_API_KEY")),
                     qPrintable(status));
        else
            QVERIFY2(r.source == KeyStore::Source::Keychain && status.contains(QStringLiteral("in the system keychain")), qPrintable(status));
        verifyKeyInNoFile(QStringLiteral("after Settings"));
        QSettings().remove(QStringLiteral("proposer"));
    }

    // Without a Secret Service (CI has no session bus) writing fails with a reason and the key still
    // serves this run; the environment still serves every run.
    void keychainFailureKeepsTheKeyForThisRun()
    {
        KeyStore keys;
        KeyStore::Result written;
        bool done = false;
        keys.write(QStringLiteral("openai"), QString::fromLatin1(kFakeKey), this, [&](const KeyStore::Result &r) {
            written = r;
            done = true;
        });
        QVERIFY(QTest::qWaitFor([&] { return done; }, 30000));
        if (written.error.isEmpty())
            QSKIP("a system keychain answered here: the failure path needs a machine without a Secret Service");
        QCOMPARE(written.source, KeyStore::Source::ThisRun);
        QVERIFY2(written.error.contains(QStringLiteral("keychain")), qPrintable(written.error));
        QCOMPARE(readKey(keys, QStringLiteral("openai")).key, QString::fromLatin1(kFakeKey));
        KeyStore fresh; // another run: the keychain is still unreachable, the environment is not
        const auto none = readKey(fresh, QStringLiteral("openai"));
        QVERIFY(none.key.isEmpty());
        QVERIFY2(!none.error.isEmpty(), "the keychain's failure to read was not reported");
        qputenv("OPENAI_API_KEY", "sk-from-the-environment-0000");
        const auto env = readKey(fresh, QStringLiteral("openai"));
        qunsetenv("OPENAI_API_KEY");
        QCOMPARE(env.key, QStringLiteral("sk-from-the-environment-0000"));
        QCOMPARE(env.source, KeyStore::Source::Environment);
    }

    void keychainStoresAndReadsBack()
    {
        KeyStore keys;
        KeyStore::Result written;
        bool done = false;
        keys.write(QStringLiteral("openrouter"), QString::fromLatin1(kFakeKey), this, [&](const KeyStore::Result &r) {
            written = r;
            done = true;
        });
        QVERIFY(QTest::qWaitFor([&] { return done; }, 30000));
        if (!written.error.isEmpty()) {
            if (qEnvironmentVariableIsSet("KFORGE_EXPECT_KEYCHAIN")) // under tests/with_keyring.sh a skip would hide a failure
                QFAIL(qPrintable(QStringLiteral("the test's own Secret Service did not keep the key: ") + written.error));
            QSKIP(qPrintable(QStringLiteral("needs a Secret Service on the D-Bus session bus (a desktop keychain; ctest runs "
                                            "tst_guillm_keychain with one of its own): ") +
                             written.error));
        }
        KeyStore fresh; // a new run reads it from the keychain, not from memory
        const auto r = readKey(fresh, QStringLiteral("openrouter"));
        QCOMPARE(r.key, QString::fromLatin1(kFakeKey));
        QCOMPARE(r.source, KeyStore::Source::Keychain);
    }

    void signInExchangesTheCode()
    {
        MainWindow w;
        SettingsDialog *dialog = nullptr;
        auto *page = settingsPage(w, dialog);
        QUrl opened;
        page->setBrowser([&](const QUrl &url) {
            opened = url;
            visit(url);
        });
        QSignalSpy finished(page, &ProviderSettingsPage::signInFinished);
        QSignalSpy keyStatus(page, &ProviderSettingsPage::keyStatusChanged);
        page->signInButton()->click();
        QVERIFY(finished.wait(20000));
        QVERIFY2(finished.last().at(0).toBool(), qPrintable(finished.last().at(1).toString()));
        const QUrlQuery q(opened);
        QCOMPARE(q.queryItemValue(QStringLiteral("code_challenge_method")), QStringLiteral("S256"));
        const QUrl callback(q.queryItemValue(QStringLiteral("callback_url"), QUrl::FullyDecoded));
        QCOMPARE(callback.host(), QStringLiteral("127.0.0.1"));
        QVERIFY(!QUrlQuery(callback).queryItemValue(QStringLiteral("state")).isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(keyStatus.size() > 0 && keyStatus.last().at(0).toString().contains(QStringLiteral("Signed in")), 30000);
        const auto issued = issuedKeys();
        QVERIFY(issued.is_array() && !issued.empty());
        const auto r = readKey(*w.searchController()->keyStore(), QStringLiteral("openrouter"));
        QCOMPARE(r.key.toStdString(), issued.back().get<std::string>());
        QCOMPARE(page->providerBox()->currentData().toString(), QStringLiteral("openrouter"));
        QCOMPARE(page->kindBox()->currentData().toString(), QStringLiteral("llm"));
        QVERIFY(!page->signIn()->isActive());
        QVERIFY(!page->signInStatus().contains(r.key)); // shown nowhere
        QVERIFY(!page->keyStatus().contains(r.key));
    }

    void signInRefusesAnotherState()
    {
        MainWindow w;
        SettingsDialog *dialog = nullptr;
        auto *page = settingsPage(w, dialog);
        page->setBrowser([&](const QUrl &url) { visit(tampered(url, QStringLiteral("forged-state"), {})); });
        const auto before = issuedKeys().size();
        QSignalSpy finished(page, &ProviderSettingsPage::signInFinished);
        page->signInButton()->click();
        QVERIFY(finished.wait(20000));
        QVERIFY(!finished.last().at(0).toBool());
        QVERIFY2(page->signInStatus().contains(QStringLiteral("state")), qPrintable(page->signInStatus()));
        QCOMPARE(issuedKeys().size(), before); // the code was never exchanged
        QVERIFY(page->signInButton()->isEnabled()); // the person can try again
    }

    void signInShowsTheServersVerifierRefusal()
    {
        MainWindow w;
        SettingsDialog *dialog = nullptr;
        auto *page = settingsPage(w, dialog);
        // The server is given a challenge for another verifier, so kforge's verifier does not match it.
        page->setBrowser([&](const QUrl &url) { visit(tampered(url, QString(), pkceChallenge(pkceVerifier()))); });
        const auto before = issuedKeys().size();
        QSignalSpy finished(page, &ProviderSettingsPage::signInFinished);
        page->signInButton()->click();
        QVERIFY(finished.wait(20000));
        QVERIFY(!finished.last().at(0).toBool());
        QVERIFY2(page->signInStatus().contains(QStringLiteral("HTTP 403")) &&
                     page->signInStatus().contains(QStringLiteral("Invalid code_verifier")),
                 qPrintable(page->signInStatus()));
        QCOMPARE(issuedKeys().size(), before);
    }

    void missingKeySaysWhereToPutIt()
    {
        MainWindow w;
        SearchSettings s = w.searchSettings();
        s.proposer.kind = QStringLiteral("llm");
        s.proposer.provider = QStringLiteral("gemini");
        s.proposer.model = QStringLiteral("gemini-2.5-pro");
        w.setSearchSettings(s, false);
        QSignalSpy finished(w.searchController(), &SearchController::finished);
        auto request = SearchRequest::demo(2, 1);
        request.sessionPath = path(QStringLiteral("nokey.kforge"));
        request.workerCommand = QStringLiteral("false"); // never reached: the key is missing first
        request.proposer = s.proposer.choice();
        QVERIFY(w.startSearch(request));
        QVERIFY(finished.wait(30000));
        const QString e = w.lastSearchError();
        QVERIFY2(e.contains(QStringLiteral("needs an API key")) && e.contains(QStringLiteral("Search > Settings")) &&
                     e.contains(QStringLiteral("GEMINI_API_KEY")),
                 qPrintable(e));
    }

    // Stopped while the key is being read (a keychain may be waiting for the person to unlock it): the
    // search never starts, finished() says stopped, and the window can close.
    void stopWhileTheKeyIsRead()
    {
        MainWindow w;
        SearchSettings s = w.searchSettings();
        s.proposer.kind = QStringLiteral("llm");
        s.proposer.provider = QStringLiteral("openrouter");
        s.proposer.model = QStringLiteral("deepseek/deepseek-chat");
        auto request = SearchRequest::demo(2, 1);
        request.sessionPath = path(QStringLiteral("stopped-early.kforge"));
        request.workerCommand = QStringLiteral("false");
        request.proposer = s.proposer.choice();
        QSignalSpy finished(w.searchController(), &SearchController::finished);
        QVERIFY(w.startSearch(request));
        QVERIFY(w.searchController()->isRunning());
        w.stopSearch(); // before the key store has answered: its answers are queued
        QVERIFY(!w.searchController()->isRunning());
        QVERIFY(finished.wait(5000));
        QCOMPARE(finished.first().at(0).value<SearchProgress>().stopReason, std::string("stopped"));
        QTest::qWait(200); // the key's answer arrives and is dropped
        QCOMPARE(finished.size(), 1);
        QVERIFY(!QFile::exists(request.sessionPath)); // no search ran
        QVERIFY(w.lastSearchError().isEmpty());
    }

    // The window's search with the llm proposer on the CPU backend: the key typed in Settings reaches
    // the provider's header and nothing else; the accepted kernel is the replayed reply's; the LLM tab
    // shows the exact prompt, the reply and the cost, and the status bar the session's total.
    void llmSearchInTheWindow()
    {
        if (test::workerCommand().empty())
            QSKIP("kforge-worker is not built (configure with KFORGE_BUILD_WORKER=ON)");
        auto script = J::array({{{"file", "openai_wrong.json"}}});
        for (int i = 0; i < 8; ++i)
            script.push_back({{"file", "openai_first.sse"}, {"stream", true}});
        llmControl("/__script", {{"responses", script}});

        MainWindow w;
        w.resize(1400, 850);
        w.show();
        SettingsDialog *dialog = nullptr;
        auto *page = settingsPage(w, dialog);
        page->kindBox()->setCurrentIndex(page->kindBox()->findData(QStringLiteral("llm")));
        page->providerBox()->setCurrentIndex(page->providerBox()->findData(QStringLiteral("openai")));
        page->modelEdit()->setText(QStringLiteral("gpt-4.1"));
        page->baseUrlEdit()->setText(QString::fromStdString(llmBase() + "/v1"));
        page->keyEdit()->setText(QString::fromLatin1(kFakeKey));
        QSignalSpy notice(w.searchController()->keyStore(), &KeyStore::notice);
        dialog->accept();
        QVERIFY(notice.wait(30000) || !notice.isEmpty());

        SearchRequest request;
        request.sessionPath = path(QStringLiteral("llm-search.kforge"));
        request.workerCommand = QString::fromStdString(test::workerCommand());
        request.card = hardsigmoidCard(16, 256);
        request.workloadName = QStringLiteral("single operator");
        // One wrong kernel, then four chances for the replayed one to beat ATen by more than the noise
        // (the 2-core machines running this also build).
        request.options.maxNodes = 5;
        request.options.eval.benchSamples = 30;
        request.options.eval.warmup = 2;
        request.proposer = w.searchSettings().proposer.choice(); // no key: the window's key store gives it
        QVERIFY(request.proposer.apiKey.empty());
        QSignalSpy done(&w, &MainWindow::searchFinished);
        QVERIFY(w.startSearch(request));
        QVERIFY(done.wait(240000));
        QVERIFY2(w.lastSearchError().isEmpty(), qPrintable(w.lastSearchError()));
        // packaging/llm_screenshots.sh pictures this session.
        if (const QString keep = qEnvironmentVariable("KFORGE_TEST_KEEP_SESSION"); !keep.isEmpty()) {
            for (const char *part : {"", "-wal", "-shm"}) { // the file and its write-ahead log, which holds the last commits
                const QString from = request.sessionPath + QLatin1String(part), to = keep + QLatin1String(part);
                QFile::remove(to);
                QVERIFY(!QFile::exists(from) || QFile::copy(from, to));
            }
        }

        // Every call carried the key in its header, as the provider wants it.
        const auto reqs = llmControl("/__requests");
        QCOMPARE(reqs.size(), size_t(5));
        for (const auto &r : reqs)
            QCOMPARE(r["headers"].value("authorization", std::string()), std::string("Bearer ") + kFakeKey);

        const auto replayed = J::parse(llmData("openai_first.json"))["choices"][0]["message"]["content"].get<std::string>();
        const auto expected = llm::parseReply(replayed, "cpu");
        SessionStore reader(request.sessionPath.toStdString(), SessionStore::Mode::ReadOnly);
        LlmCallLog log(reader, false);
        const auto session = w.context()->snapshot()->session();
        QCOMPARE(session.proposer, std::string("llm:openai/gpt-4.1"));
        int64_t acceptedId = 0;
        for (const auto &n : reader.nodes(session.id))
            if (n.status == "accepted" && reader.nodeDetail(n.id)->candidate.source == expected.candidate.source)
                acceptedId = n.id;
        QStringList seen;
        for (const auto &n : reader.nodes(session.id))
            seen << QStringLiteral("#%1 %2 %3: %4").arg(n.id).arg(QString::fromStdString(n.templateId), QString::fromStdString(n.status),
                                                       QString::fromStdString(n.summary));
        QVERIFY2(acceptedId, qPrintable(QStringLiteral("no accepted node holds the replayed kernel: ") + seen.join(QStringLiteral("; "))));

        // The LLM tab of that node: the prompt as sent, the reply, the cost.
        w.context()->select(acceptedId);
        auto *inspector = w.inspector();
        QVERIFY(inspector->llmTabVisible());
        QVERIFY(inspector->showPanel(QStringLiteral("llm")));
        const auto calls = log.nodeCalls(acceptedId);
        QCOMPARE(calls.size(), size_t(1));
        const auto &call = calls.front();
        auto *view = inspector->llmView();
        QCOMPARE(view->request(), QString::fromStdString(call.request)); // the exact request
        QCOMPARE(view->response(), QString::fromStdString(call.response)); // the whole response
        QCOMPARE(view->reply(), QString::fromStdString(replayed));
        // What the provider received for this node is what the tab shows, role by role.
        const auto stored = J::parse(call.request);
        const auto sent = std::find_if(reqs.begin(), reqs.end(), [&](const J &r) { return J::parse(r["body"].get<std::string>()) == stored; });
        QVERIFY2(sent != reqs.end(), "the stored request is none of those the provider received");
        QCOMPARE(view->prompt(), ui::promptText((*sent)["body"].get<std::string>()));
        QVERIFY(view->prompt().contains(QStringLiteral("aten::hardsigmoid(Tensor self) -> Tensor")));
        // openai_first.sse's usage, priced at gpt-4.1's $2 in and $8 out per million tokens.
        QCOMPARE(call.inputTokens, int64_t(1843));
        QCOMPARE(call.outputTokens, int64_t(412));
        const double cost = (1843 * 2.0 + 412 * 8.0) / 1e6;
        QVERIFY(std::abs(call.cost - cost) < 1e-12);
        QVERIFY2(view->summary().contains(QStringLiteral("1843 in / 412 out tokens")) &&
                     view->summary().contains(ui::money(cost)) && view->summary().contains(QStringLiteral("1 attempt")),
                 qPrintable(view->summary()));

        // The status bar: the session's total.
        auto *costLabel = w.statusBar()->findChild<QLabel *>(QStringLiteral("llmCost"));
        QVERIFY(costLabel);
        QVERIFY(costLabel->isVisible());
        const auto totals = log.sessionTotals(session.id);
        QCOMPARE(totals.calls, 5);
        QCOMPARE(costLabel->text(), QStringLiteral("LLM: ") + ui::costLine(totals, 0));

        // A template node has no LLM tab.
        w.context()->select(reader.nodes(session.id).front().id); // the baseline
        QVERIFY(!inspector->llmTabVisible());

        verifyKeyInNoFile(QStringLiteral("after an LLM search"));
    }
};

QTEST_MAIN(TestGuiLlm)
#include "tst_guillm.moc"
