#pragma once
// Runs a core search on its own thread and reports back on the GUI thread.
//
// The search thread owns everything that writes: the SessionStore connection, the WorkerPool and
// the SearchEngine. It hands results to the GUI as queued signals carrying copies, so no GUI object
// is ever touched from it. Each run gets a job id; reports from a job that is no longer current, or
// that arrive after the controller is gone, are dropped.
#include <QObject>
#include <QPointer>
#include <QString>
#include <memory>

#include "ops/operator_card.h"
#include "pool/worker_pool.h"
#include "proposers/proposer_factory.h"
#include "search/campaign.h"
#include "search/search_engine.h"
#include "store/session_store.h"

class QThread;

namespace kforge::ui {
class KeyStore;
}

Q_DECLARE_METATYPE(kforge::NodeRecord)
Q_DECLARE_METATYPE(kforge::SearchProgress)
Q_DECLARE_METATYPE(kforge::PoolEvent)
Q_DECLARE_METATYPE(kforge::SessionInfo)

namespace kforge::ui {

// One operator of a campaign and the nodes the plan gives it.
struct CampaignStep {
    OperatorCard card;
    int nodes = 0;
};

struct SearchRequest {
    QString sessionPath;   // created when missing; a new session is added to an existing file
    QString workerCommand; // empty: defaultWorkerCommand()
    int workers = 1;
    QString backend = QStringLiteral("cpu"); // what the candidates target: "cpu" or "cuda"
    OperatorCard card;     // what to search; the demo workload's first operator by default
    QString workloadName;
    SearchOptions options;
    // templates by default; for an LLM with no key given, start() reads the provider's key from the
    // key store (keychain, this run, environment) on the GUI thread first.
    ProposerChoice proposer;
    // Go on with the file's last search instead of starting one: SearchEngine rebuilds its tree and
    // evaluates its unfinished nodes again; card, backend and session come from the file.
    bool resume = false;
    // A campaign (core/search/campaign.h): one session, every step's operator added up front and searched
    // in order with its share of the nodes; options.maxNodes is then the plan's total. Empty: one search
    // of `card`. The steps are stored with the session (option campaign_plan), so a resume goes on with
    // the operators whose share is not yet spent.
    std::vector<CampaignStep> campaign;

    static SearchRequest demo(int maxNodes = 24, int workers = 1);
    // The campaign that runs `plan` over the workload's cards (the operators the plan gives nodes to).
    static SearchRequest campaignOf(const std::vector<OperatorCard> &cards, const CampaignPlan &plan, const QString &workloadName);
    // The request that resumes the last search in the file, from the options the search stored (as
    // kforge-cli search --resume reads them). Throws kforge::Error when there is nothing to resume.
    static SearchRequest resumeOf(const QString &sessionPath);
};

class SearchController : public QObject {
    Q_OBJECT
public:
    explicit SearchController(QObject *parent = nullptr);
    // Asks a running search to stop and waits for its thread: in-flight evaluations finish first, so
    // this can take as long as one evaluation.
    ~SearchController() override;

    // False (and nothing started) when a search is already running.
    bool start(const SearchRequest &request);
    // Returns at once. now == false (pause): no new proposals, finished() follows when the evaluations in
    // flight are done. now == true: finished() follows at once, the nodes in flight marked interrupted
    // (a resume evaluates them again). At once either way while the key is awaited.
    void stop(bool now = false);
    bool isRunning() const { return m_running; }
    bool stopRequested() const;
    // The providers' keys for LLM searches; the Settings dialog stores into the same one.
    KeyStore *keyStore() const { return m_keys; }

signals:
    // The session row exists in the file; the store can now be read by other connections.
    void sessionCreated(const QString &path, const kforge::SessionInfo &session);
    void nodeAdded(const kforge::NodeRecord &node);
    void nodeFinished(const kforge::NodeRecord &node);
    void progress(const kforge::SearchProgress &progress);
    void workerEvent(const kforge::PoolEvent &event);
    void finished(const kforge::SearchProgress &progress);
    // A campaign moved on to its step `index`, the session's operator operatorId (also sent for a single
    // search, as step 0). Progress and node reports that follow are that operator's.
    void stepStarted(int index, qint64 operatorId);
    // The search could not start or broke off (no worker, unwritable file, ...); finished() follows.
    void failed(const QString &message);

private:
    struct Job;
    void launch(SearchRequest request);
    void runJob(std::shared_ptr<Job> job, SearchRequest request);

    KeyStore *m_keys;
    std::shared_ptr<Job> m_job;
    QPointer<QThread> m_thread;
    quint64 m_jobId = 0;
    bool m_running = false;
};

} // namespace kforge::ui
