#include "ui/search_controller.h"

#include <QMetaObject>
#include <QThread>
#include <mutex>

#include "ops/workload.h"
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

    void requestStop()
    {
        std::lock_guard lock(mutex);
        stop = true;
        if (engine)
            engine->requestStop();
    }
};

namespace {

// Publishes the engine to stop() for exactly as long as it lives, exceptions included.
class EngineHandle {
public:
    EngineHandle(std::mutex &m, SearchEngine *&slot, const bool &stop, SearchEngine &engine) : m_mutex(m), m_slot(slot)
    {
        std::lock_guard lock(m_mutex);
        m_slot = &engine;
        if (stop)
            engine.requestStop();
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
        m_job->requestStop();
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

void SearchController::stop()
{
    if (m_job)
        m_job->requestStop();
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
    try {
        SessionStore store(r.sessionPath.toStdString());
        const auto proposer = makeProposer(r.proposer, store, r.backend.toStdString()); // a missing key fails before any worker starts
        r.proposer.apiKey.clear(); // the proposer's client holds it now; this copy goes nowhere
        PoolOptions po(r.workerCommand.isEmpty() ? defaultWorkerCommand() : r.workerCommand.toStdString(), r.workers);
        WorkerPool pool(po);
        pool.start(); // before the session exists, so a worker that never starts leaves no empty session

        SessionInfo info;
        info.name = "search " + r.card.key;
        info.workload = r.workloadName.toStdString();
        info.backend = r.backend.toStdString();
        info.proposer = proposer->name();
        info.status = "running";
        info.options = {{"nodes", r.options.maxNodes}, {"workers", pool.size()}, {"seed", r.options.seed}};
        if (r.proposer.budget > 0)
            info.options["budget_usd"] = r.proposer.budget;
        info.createdAt = nowSeconds();
        info.id = store.createSession(info);
        const auto opId = store.addOperator(info.id, r.card);
        const QString path = QString::fromStdString(store.path());
        post([path, info](SearchController *c) { emit c->sessionCreated(path, info); });

        SearchEngine engine(store, pool, *proposer, r.options);
        Forwarder forwarder(post);
        {
            EngineHandle handle(job->mutex, job->engine, job->stop, engine);
            last = engine.run(info.id, opId, r.card, &forwarder);
        }
        store.setSessionStatus(info.id, last.stopReason == "stopped" ? "stopped" : "finished");
        pool.shutdown();
    } catch (const std::exception &e) {
        const QString message = QString::fromStdString(e.what());
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
