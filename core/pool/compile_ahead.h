#pragma once
// The worker's side of the pool's prepare hints (protocol "prepare"): builds compiled ahead on a few
// threads of their own while the device verifies and times the candidate before them, and claimed by
// the evaluation of the same source and compile options (the key). Generic over the build, so that the
// CPU tests exercise it without a GPU; the CUDA device holds one for its NVRTC builds.
//
// - A hint for a key already held, or being compiled by a claim, does nothing: no source is compiled
//   twice.
// - A claim of a build being compiled waits for it; of one still queued (every thread busy), compiles
//   it at once on the claimer's thread instead of behind the other hints; of one not held, compiles it.
// - Bounded: at most maxBuilds held (queued, compiling, or done and unclaimed). A hint past that drops
//   the oldest that no thread is compiling, or is itself dropped when every held one is compiling.
// - Hints arrive in the order the pool queues evaluations and a worker takes them in that order, so the
//   claim of a hinted build drops every build hinted before it that is not compiling: those were hints
//   for evaluations another worker took, and will never be claimed here.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/hash.h"

namespace kforge {

template<class Build>
class CompileAhead {
public:
    using Compile = std::function<Build()>;
    struct Claimed {
        Build build;
        bool ahead = false;   // compiled (or started) by a hint's thread
        double waitedMs = -1; // how long the claim waited for that thread; -1 when not ahead
    };

    CompileAhead(int threads, size_t maxBuilds) : m_maxBuilds(std::max<size_t>(1, maxBuilds))
    {
        for (int i = 0; i < std::max(1, threads); ++i)
            m_threads.emplace_back([this] { work(); });
    }
    ~CompileAhead()
    {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_work.notify_all();
        for (auto &t : m_threads)
            t.join();
    }
    CompileAhead(const CompileAhead &) = delete;
    CompileAhead &operator=(const CompileAhead &) = delete;

    // The key of a source compiled with these options: what a hint and a claim are matched by.
    static std::string keyOf(const std::string &source, const std::vector<std::string> &options)
    {
        std::string k = source + "\n//";
        for (const auto &o : options)
            k += " " + o;
        return contentHash(k);
    }

    // False when the hint was dropped (every held build is compiling).
    bool hint(const std::string &key, Compile compile)
    {
        {
            std::lock_guard lock(m_mutex);
            for (const auto &e : m_entries)
                if (e->key == key)
                    return true;
            if (std::find(m_inline.begin(), m_inline.end(), key) != m_inline.end())
                return true; // a claim is compiling it in line
            if (m_entries.size() >= m_maxBuilds) {
                auto idle = m_entries.begin();
                while (idle != m_entries.end() && (*idle)->state == State::Compiling)
                    ++idle;
                if (idle == m_entries.end())
                    return false;
                m_entries.erase(idle);
                ++m_dropped;
            }
            auto e = std::make_shared<Entry>();
            e->key = key;
            e->compile = std::move(compile);
            m_entries.push_back(std::move(e));
        }
        m_work.notify_one();
        return true;
    }

    Claimed claim(const std::string &key, const Compile &compile)
    {
        std::unique_lock lock(m_mutex);
        std::shared_ptr<Entry> mine;
        const auto found = std::find_if(m_entries.begin(), m_entries.end(), [&](const auto &e) { return e->key == key; });
        if (found != m_entries.end()) {
            // Hinted before this one and not compiling: another worker's evaluations. (An unhinted claim
            // says nothing of the order, so it drops nothing.)
            for (auto it = m_entries.begin(); it != found;)
                if ((*it)->state != State::Compiling) {
                    it = m_entries.erase(it);
                    ++m_dropped;
                } else {
                    ++it;
                }
            mine = *found;
            m_entries.erase(found);
        }
        Claimed c;
        if (!mine || mine->state == State::Queued) {
            m_inline.push_back(key);
            lock.unlock();
            struct Done { // the key leaves m_inline however the compile ends
                CompileAhead &self;
                const std::string &key;
                ~Done()
                {
                    std::lock_guard g(self.m_mutex);
                    self.m_inline.erase(std::find(self.m_inline.begin(), self.m_inline.end(), key));
                }
            } done{*this, key};
            c.build = compile(); // also a queued one: at once, here, rather than behind the other hints
            return c;
        }
        const auto t0 = std::chrono::steady_clock::now();
        m_finished.wait(lock, [&] { return mine->state == State::Done; });
        c.ahead = true;
        c.waitedMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (mine->error)
            std::rethrow_exception(mine->error);
        c.build = std::move(*mine->build);
        return c;
    }

    size_t held() const
    {
        std::lock_guard lock(m_mutex);
        return m_entries.size();
    }
    // Held builds dropped unclaimed (never-evaluated hints, or pushed out by newer ones).
    size_t dropped() const
    {
        std::lock_guard lock(m_mutex);
        return m_dropped;
    }
    int threads() const { return int(m_threads.size()); }

private:
    enum class State { Queued, Compiling, Done };
    struct Entry {
        std::string key;
        Compile compile;
        State state = State::Queued;
        std::optional<Build> build;
        std::exception_ptr error;
    };

    void work()
    {
        // Below the thread that verifies and times: a compile ahead must not take its core.
        (void)::setpriority(PRIO_PROCESS, id_t(::syscall(SYS_gettid)), 10);
        std::unique_lock lock(m_mutex);
        for (;;) {
            std::shared_ptr<Entry> next;
            m_work.wait(lock, [&] {
                if (m_stop)
                    return true;
                for (const auto &e : m_entries)
                    if (e->state == State::Queued) {
                        next = e;
                        return true;
                    }
                return false;
            });
            if (m_stop)
                return;
            next->state = State::Compiling;
            auto compile = std::move(next->compile);
            lock.unlock();
            std::optional<Build> build;
            std::exception_ptr error;
            try {
                build = compile();
            } catch (...) {
                error = std::current_exception();
            }
            lock.lock();
            next->build = std::move(build);
            next->error = error;
            next->state = State::Done;
            m_finished.notify_all();
        }
    }

    const size_t m_maxBuilds;
    mutable std::mutex m_mutex;
    std::condition_variable m_work, m_finished;
    std::list<std::shared_ptr<Entry>> m_entries; // oldest hint first
    std::vector<std::string> m_inline;           // keys claims are compiling on their own threads
    size_t m_dropped = 0;
    bool m_stop = false;
    std::vector<std::thread> m_threads; // last: they start once everything above exists
};

} // namespace kforge
