#include "ui/search_controller.h"

#include <QFile>
#include <QFileInfo>
#include <QMetaObject>
#include <QThread>
#include <algorithm>
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

SearchRequest SearchRequest::campaignOf(const std::vector<OperatorCard> &cards, const CampaignPlan &plan, const QString &workloadName)
{
    SearchRequest r;
    r.workloadName = workloadName;
    r.options.maxNodes = 0;
    for (const auto &item : plan.items) {
        const auto card = std::find_if(cards.begin(), cards.end(), [&](const OperatorCard &c) { return c.key == item.key; });
        if (item.nodes <= 0 || card == cards.end())
            continue;
        r.campaign.push_back({*card, item.nodes});
        r.options.maxNodes += item.nodes;
    }
    if (!r.campaign.empty())
        r.card = r.campaign.front().card;
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
    r.options = was.options; // nodes, seed, samples, deadline, roots and the MCTS constants as it ran
    r.proposer.spec = was.proposerSpec;
    r.proposer.baseUrl = was.baseUrl;
    r.proposer.budget = was.budgetUsd;
    if (was.campaign) // its plan's steps, matched to the session's operators by key
        for (const auto &step : was.steps)
            r.campaign.push_back({step.op.card, step.nodes});
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
            m_post([t = total(p)](SearchController *c) { emit c->progress(t); });
        }
        // A campaign's report counts the steps before this one too; the best is the best of any.
        SearchProgress total(SearchProgress p) const
        {
            p.evaluated += m_base.evaluated;
            p.failed += m_base.failed;
            p.accepted += m_base.accepted;
            if (m_base.bestSpeedup > p.bestSpeedup) {
                p.bestSpeedup = m_base.bestSpeedup;
                p.bestNode = m_base.bestNode;
            }
            return p;
        }
        void setBase(const SearchProgress &p) { m_base = p; }
        void workerEvent(const PoolEvent &e) override
        {
            m_post([e](SearchController *c) { emit c->workerEvent(e); });
        }

    private:
        decltype(post) &m_post;
        SearchProgress m_base;
    };

    SearchProgress last;
    int64_t marked = 0; // the session this run marked running
    const bool fileExisted = QFileInfo::exists(r.sessionPath);
    try {
        SessionStore store(r.sessionPath.toStdString());
        const auto proposer = makeProposer(r.proposer, store, r.backend.toStdString()); // a missing key fails before any worker starts
        r.proposer.apiKey.clear(); // the proposer's client holds it now; this copy goes nowhere
        PoolOptions po(r.workerCommand.isEmpty() ? defaultWorkerCommand() : r.workerCommand.toStdString(), r.workers);
        WorkerPool pool(po);
        pool.start(); // before the session exists, so a worker that never starts leaves no empty session
        pool.requireBackend(r.backend.toStdString()); // and one without the backend says why, before any node

        // The steps to run: a campaign's, or the one search as a single step.
        std::vector<CampaignStep> steps = r.campaign;
        if (steps.empty())
            steps.push_back({r.card, r.options.maxNodes});
        SessionInfo info;
        std::vector<int64_t> opIds;
        if (r.resume) { // the file's last search and its operators, as resumeOf() read them
            const auto sessions = store.sessions();
            const auto ops = sessions.empty() ? std::vector<OperatorRecord>{} : store.operators(sessions.back().id);
            if (ops.empty())
                throw Error("'" + store.path() + "' holds no search to resume");
            info = sessions.back();
            if (r.campaign.empty()) {
                steps.front().card = ops.front().card;
                opIds.push_back(ops.front().id);
            }
            for (const auto &step : r.campaign)
                for (const auto &op : ops)
                    if (op.card.key == step.card.key) {
                        opIds.push_back(op.id);
                        break;
                    }
            if (opIds.size() != steps.size())
                throw Error("'" + store.path() + "' no longer holds every operator of its campaign");
            store.setSessionStatus(info.id, "running");
            info.status = "running";
        } else {
            info.name = r.campaign.empty() ? "search " + r.card.key : "campaign " + r.workloadName.toStdString();
            info.workload = r.workloadName.toStdString();
            info.backend = r.backend.toStdString();
            info.proposer = proposer->name();
            info.status = "running";
            // What a resume needs to go on with the same search (the keys kforge-cli search writes).
            info.options = resumeOptions(r.options, pool.size(), r.proposer.spec, r.proposer.baseUrl, r.proposer.budget);
            if (!r.campaign.empty()) {
                std::vector<std::pair<std::string, int>> plan;
                for (const auto &step : r.campaign)
                    plan.push_back({step.card.key, step.nodes});
                setCampaignPlan(info.options, plan);
            }
            info.createdAt = nowSeconds();
            info.id = store.createSession(info);
            for (const auto &step : steps) // every operator up front: the tree shows the whole campaign
                opIds.push_back(store.addOperator(info.id, step.card));
        }
        marked = info.id;
        const QString path = QString::fromStdString(store.path());
        post([path, info](SearchController *c) { emit c->sessionCreated(path, info); });

        Forwarder forwarder(post);
        for (size_t i = 0; i < steps.size(); ++i) {
            {
                std::lock_guard lock(job->mutex);
                if (job->stop && i > 0) { // a pause or stop between two operators: the rest wait for a resume
                    last.stopReason = job->stopNow ? "interrupted" : "stopped";
                    break;
                }
            }
            post([i, op = qint64(opIds[i])](SearchController *c) { emit c->stepStarted(int(i), op); });
            SearchOptions options = r.options;
            options.maxNodes = steps[i].nodes;
            SearchEngine engine(store, pool, *proposer, options);
            SearchProgress step;
            {
                EngineHandle handle(job->mutex, job->engine, job->stop, job->stopNow, engine);
                step = engine.run(info.id, opIds[i], steps[i].card, &forwarder);
            }
            last = forwarder.total(step);
            forwarder.setBase(last);
            // Stopped now, the evaluations in flight are not waited for (their nodes are marked
            // interrupted); the pool is aborted while this engine, which their answers would reach, lives.
            if (step.stopReason == "interrupted")
                pool.abort();
            if (step.stopReason == "interrupted" || step.stopReason == "stopped")
                break;
        }
        const bool interrupted = last.stopReason == "interrupted";
        store.setSessionStatus(info.id, last.stopReason == "stopped" || interrupted ? "stopped" : "finished");
        if (interrupted)
            pool.abort(); // also when the stop came between two operators: nothing is in flight then
        else
            pool.shutdown();
    } catch (const std::exception &e) {
        const QString message = QString::fromStdString(e.what());
        if (marked) { // a search that broke off is not running: say so in the file, so it can be resumed
            try {
                SessionStore(r.sessionPath.toStdString()).setSessionStatus(marked, "stopped");
            } catch (const std::exception &) {
            }
        } else if (!fileExisted) {
            // Refused before any session (no worker offers the backend, a worker that never starts): the
            // file this run created holds nothing, and is not left behind. A file that was there stays.
            for (const char *suffix : {"", "-wal", "-shm"})
                QFile::remove(r.sessionPath + QLatin1String(suffix));
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
