#include "ui/search_controller.h"

#include <QMetaObject>
#include <QThread>
#include <mutex>

#include "ops/workload.h"
#include "search/resume.h"
#include "llm/client.h"
#include "ui/keychain.h"
#include "util/error.h"
#include "util/paths.h"

namespace kforge::ui {

// Shared between the GUI thread (stop()) and the search thread (which publishes its engine).
struct SearchController::Job {
    quint64 id = 0;
    std::mutex mutex;
    SearchEngine *engine = nullptr;
    bool stop = false;
    bool stopNow = false;

    void requestStop(bool now)
    {
        std::lock_guard lock(mutex);
        stop = true;
        stopNow = stopNow || now;
        if (engine)
            engine->requestStop(stopNow);
    }
};

namespace {

// Publishes the engine to stop() for exactly as long as it lives, exceptions included.
class EngineHandle {
public:
    EngineHandle(std::mutex &m, SearchEngine *&slot, const bool &stop, const bool &now, SearchEngine &engine) : m_mutex(m), m_slot(slot)
    {
        std::lock_guard lock(m_mutex);
        m_slot = &engine;
        if (stop)
            engine.requestStop(now);
    }
    ~EngineHandle()
    {
        std::lock_guard lock(m_mutex);
        m_slot = nullptr;
    }

private:
    std::mutex &m_mutex;
    SearchEngine *&m_slot;
};

} // namespace

SearchRequest SearchRequest::demo(int maxNodes, int workers)
{
    SearchRequest r;
    const auto w = demoWorkload();
    r.card = w.operators.front();
    r.workloadName = QString::fromStdString(w.name);
    r.workers = workers;
    r.options.maxNodes = maxNodes;
    return r;
}

SearchRequest SearchRequest::resumeOf(const QString &sessionPath)
{
    // The same reading as kforge-cli search --resume (core/search/resume.h).
    const auto was = lastSearch(SessionStore(sessionPath.toStdString(), SessionStore::Mode::ReadOnly));
    SearchRequest r;
    r.resume = true;
    r.sessionPath = sessionPath;
    r.card = was.op.card;
    r.workloadName = QString::fromStdString(was.session.workload);
    r.backend = QString::fromStdString(was.session.backend);
    r.workers = was.workers;
    r.options.maxNodes = was.options.maxNodes;
    r.options.seed = was.options.seed;
    r.options.eval.benchSamples = was.options.eval.benchSamples;
    r.options.eval.deadlineMs = was.options.eval.deadlineMs;
    r.proposer.spec = was.proposerSpec;
    r.proposer.baseUrl = was.baseUrl;
    r.proposer.budget = was.budgetUsd;
    return r;
}

SearchController::SearchController(QObject *parent) : QObject(parent), m_keys(new KeyStore(QString(), this))
{
    qRegisterMetaType<kforge::NodeRecord>();
    qRegisterMetaType<kforge::SearchProgress>();
    qRegisterMetaType<kforge::PoolEvent>();
    qRegisterMetaType<kforge::SessionInfo>();
}

SearchController::~SearchController()
{
    if (m_job)
        m_job->requestStop(false);
    if (m_thread) {
        m_thread->wait(); // the thread posts to this object, so it must end before we do
        delete m_thread;
    }
}

bool SearchController::stopRequested() const
{
    if (!m_job)
        return false;
    std::lock_guard lock(m_job->mutex);
    return m_job->stop;
}

bool SearchController::start(const SearchRequest &request)
{
    if (m_running)
        return false;
    if (m_thread) { // the previous run's thread has posted its last report and is exiting
        m_thread->wait();
        delete m_thread;
    }
    m_job = std::make_shared<Job>();
    m_job->id = ++m_jobId;
    m_running = true;
    if (!request.proposer.isLlm() || !request.proposer.apiKey.empty()) {
        launch(request);
        return true;
    }
    std::string provider;
    try {
        provider = llm::parseProviderSpec(request.proposer.spec.substr(4)).provider;
    } catch (const std::exception &) {
        launch(request); // the search thread reports what is wrong with the choice
        return true;
    }
    // The keychain answers later; a newer start() or the controller's end drops this answer.
    m_keys->read(QString::fromStdString(provider), this, [this, id = m_jobId, request = SearchRequest(request)](const KeyStore::Result &r) mutable {
        if (id != m_jobId)
            return;
        request.proposer.apiKey = r.key.toStdString();
        if (!r.error.isEmpty())
            request.proposer.keyHint += " (" + r.error.toStdString() + ")";
        launch(request);
    });
    return true;
}

void SearchController::launch(SearchRequest request)
{
    m_thread = QThread::create([this, job = m_job, request] { runJob(job, request); });
    m_thread->setObjectName(QStringLiteral("kforge-search"));
    m_thread->start();
}

void SearchController::stop(bool now)
{
    if (m_job)
        m_job->requestStop(now);
    if (m_running && !m_thread) { // still waiting for the keychain: nothing runs, so nothing to wait for
        ++m_jobId; // the key's answer, when it comes, is dropped
        m_running = false;
        SearchProgress stopped;
        stopped.stopReason = "stopped";
        QMetaObject::invokeMethod(this, [this, stopped] { emit finished(stopped); }, Qt::QueuedConnection);
    }
}

// Runs on the search thread. It only reads `this` to post to it: the destructor joins this thread,
// so the object outlives every post, and Qt discards posts still queued when it is destroyed.
void SearchController::runJob(std::shared_ptr<Job> job, SearchRequest r)
{
    const quint64 id = job->id;
    auto post = [this, id](auto deliver) {
        QMetaObject::invokeMethod(
            this,
            [this, id, deliver] {
                if (id == m_jobId) // a report from a run that is no longer current is dropped
                    deliver(this);
            },
            Qt::QueuedConnection);
    };

    class Forwarder : public SearchObserver {
    public:
        explicit Forwarder(decltype(post) &p) : m_post(p) {}
        void nodeAdded(const NodeRecord &n) override
        {
            m_post([n](SearchController *c) { emit c->nodeAdded(n); });
        }
        void nodeFinished(const NodeRecord &n) override
        {
            m_post([n](SearchController *c) { emit c->nodeFinished(n); });
        }
        void progress(const SearchProgress &p) override
        {
            m_post([p](SearchController *c) { emit c->progress(p); });
        }
        void workerEvent(const PoolEvent &e) override
        {
            m_post([e](SearchController *c) { emit c->workerEvent(e); });
        }

    private:
        decltype(post) &m_post;
    };

    SearchProgress last;
    int64_t marked = 0; // the session this run marked running
    try {
        SessionStore store(r.sessionPath.toStdString());
        const auto proposer = makeProposer(r.proposer, store, r.backend.toStdString()); // a missing key fails before any worker starts
        r.proposer.apiKey.clear(); // the proposer's client holds it now; this copy goes nowhere
        PoolOptions po(r.workerCommand.isEmpty() ? defaultWorkerCommand() : r.workerCommand.toStdString(), r.workers);
        WorkerPool pool(po);
        pool.start(); // before the session exists, so a worker that never starts leaves no empty session

        SessionInfo info;
        int64_t opId = 0;
        if (r.resume) { // the file's last search and its operator, as resumeOf() read them
            const auto sessions = store.sessions();
            const auto ops = sessions.empty() ? std::vector<OperatorRecord>{} : store.operators(sessions.back().id);
            if (ops.empty())
                throw Error("'" + store.path() + "' holds no search to resume");
            info = sessions.back();
            opId = ops.front().id;
            r.card = ops.front().card;
            store.setSessionStatus(info.id, "running");
            info.status = "running";
        } else {
            info.name = "search " + r.card.key;
            info.workload = r.workloadName.toStdString();
            info.backend = r.backend.toStdString();
            info.proposer = proposer->name();
            info.status = "running";
            // What a resume needs to go on with the same search (the keys kforge-cli search writes).
            info.options = resumeOptions(r.options, pool.size(), r.proposer.spec, r.proposer.baseUrl, r.proposer.budget);
            info.createdAt = nowSeconds();
            info.id = store.createSession(info);
            opId = store.addOperator(info.id, r.card);
        }
        marked = info.id;
        const QString path = QString::fromStdString(store.path());
        post([path, info](SearchController *c) { emit c->sessionCreated(path, info); });

        SearchEngine engine(store, pool, *proposer, r.options);
        Forwarder forwarder(post);
        {
            EngineHandle handle(job->mutex, job->engine, job->stop, job->stopNow, engine);
            last = engine.run(info.id, opId, r.card, &forwarder);
        }
        const bool interrupted = last.stopReason == "interrupted";
        store.setSessionStatus(info.id, last.stopReason == "stopped" || interrupted ? "stopped" : "finished");
        if (interrupted)
            pool.abort(); // the evaluations in flight are not waited for: their nodes are marked interrupted
        else
            pool.shutdown();
    } catch (const std::exception &e) {
        const QString message = QString::fromStdString(e.what());
        if (marked) { // a search that broke off is not running: say so in the file, so it can be resumed
            try {
                SessionStore(r.sessionPath.toStdString()).setSessionStatus(marked, "stopped");
            } catch (const std::exception &) {
            }
        }
        post([message](SearchController *c) { emit c->failed(message); });
        if (last.stopReason.empty())
            last.stopReason = "failed";
    }
    post([last](SearchController *c) {
        c->m_running = false;
        emit c->finished(last);
    });
}

} // namespace kforge::ui
