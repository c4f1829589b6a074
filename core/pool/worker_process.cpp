#include "pool/worker_process.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/error.h"
#include "util/redact.h"
#include "util/text.h"

extern char **environ;

namespace kforge {

namespace {

constexpr const char *kAllowedNames[] = {"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR",
                                         "LD_LIBRARY_PATH", "CXX", "CC", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "SSH_AUTH_SOCK"};
constexpr const char *kAllowedPrefixes[] = {"LC_",   "CUDA_", "NVIDIA_", "KFORGE_", "SLURM_", "TORCH_", "PYTORCH_", "OMP_",
                                            "MKL_",  "OPENBLAS_", "HIP_", "ROCR_", "HSA_", "ASAN_", "UBSAN_", "LSAN_"};

void writeAll(int fd, const char *data, size_t n)
{
    while (n > 0) {
        const ssize_t w = ::write(fd, data, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        data += w;
        n -= size_t(w);
    }
}

} // namespace

bool allowedInWorkerEnvironment(std::string_view name)
{
    if (name.empty() || looksLikeSecretName(name))
        return false;
    for (const char *n : kAllowedNames)
        if (name == n)
            return true;
    for (const char *p : kAllowedPrefixes)
        if (name.starts_with(p) && name.size() > std::strlen(p))
            return true;
    return false;
}

std::vector<std::string> workerEnvironment(const std::map<std::string, std::string> &extra, char **from)
{
    std::map<std::string, std::string> env;
    for (char **e = from ? from : environ; e && *e; ++e) {
        const char *eq = std::strchr(*e, '=');
        if (!eq)
            continue;
        std::string name(*e, size_t(eq - *e));
        if (allowedInWorkerEnvironment(name))
            env[std::move(name)] = eq + 1;
    }
    for (const auto &[k, v] : extra)
        if (!k.empty() && k.find('=') == std::string::npos && !looksLikeSecretName(k))
            env[k] = v;
    std::vector<std::string> out;
    out.reserve(env.size());
    for (const auto &[k, v] : env)
        out.push_back(k + "=" + v);
    return out;
}

WorkerProcess::WorkerProcess(std::string command, std::string stderrLog, std::map<std::string, std::string> env,
                             WorkerLimits limits)
    : m_command(std::move(command)), m_stderrLog(std::move(stderrLog)), m_env(std::move(env)), m_limits(limits)
{
    m_limits.maxLineBytes = std::max<size_t>(m_limits.maxLineBytes, 1024);
    m_limits.tailBytes = std::max<size_t>(m_limits.tailBytes, 1024);
}

WorkerProcess::~WorkerProcess()
{
    kill();
}

void WorkerProcess::start()
{
    kill();
    // Everything the child needs is built here: between fork and exec only async-signal-safe calls.
    const std::string line = "exec " + m_command;
    const auto envStrings = workerEnvironment(m_env);
    std::vector<char *> envp;
    for (const auto &s : envStrings)
        envp.push_back(const_cast<char *>(s.c_str()));
    envp.push_back(nullptr);
    char sh[] = "sh", dashC[] = "-c";
    char *const argv[] = {sh, dashC, const_cast<char *>(line.c_str()), nullptr};

    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
        throw Error(std::string("cannot create a socket pair for the worker: ") + std::strerror(errno));
    int errPipe[2];
    if (::pipe2(errPipe, O_CLOEXEC) != 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        throw Error(std::string("cannot create a pipe for the worker's stderr: ") + std::strerror(errno));
    }
    if (::pipe2(m_stopPipe, O_CLOEXEC) != 0) {
        for (int fd : {fds[0], fds[1], errPipe[0], errPipe[1]})
            ::close(fd);
        throw Error(std::string("cannot create a pipe: ") + std::strerror(errno));
    }
    const int logFd = m_stderrLog.empty() ? -1 : ::open(m_stderrLog.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
        const int err = errno;
        for (int fd : {fds[0], fds[1], errPipe[0], errPipe[1], m_stopPipe[0], m_stopPipe[1], logFd})
            if (fd >= 0)
                ::close(fd);
        m_stopPipe[0] = m_stopPipe[1] = -1;
        throw Error(std::string("cannot start worker '") + m_command + "': " + std::strerror(err));
    }
    if (pid == 0) {
        // Child: its own process group, so kill() reaches whatever the command line started.
        ::setpgid(0, 0);
        // Die with the parent, even when it is SIGKILLed. If it is already gone, the signal was missed.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent)
            ::_exit(125);
        ::dup2(fds[1], 0);
        ::dup2(fds[1], 1);
        ::dup2(errPipe[1], 2);
        // No other descriptor of ours (a session file, another worker's socket) reaches the worker.
        bool closed = false;
#ifdef SYS_close_range
        closed = ::syscall(SYS_close_range, 3u, ~0u, 4u /* CLOSE_RANGE_CLOEXEC */) == 0;
#endif
        if (!closed)
            for (int fd = 3; fd < 65536; ++fd)
                ::fcntl(fd, F_SETFD, FD_CLOEXEC);
        // Default dispositions and an empty mask: what a parent ignores or blocks is not the worker's business.
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        for (int sig = 1; sig < NSIG; ++sig)
            if (sig != SIGKILL && sig != SIGSTOP)
                ::sigaction(sig, &dfl, nullptr);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        // exec: the worker (or ssh, or srun) replaces the shell, so its pid is ours to watch and signal.
        ::execve("/bin/sh", argv, envp.data());
        ::_exit(127);
    }
    ::setpgid(pid, pid);
    ::close(fds[1]);
    ::close(errPipe[1]);
    m_fd = fds[0];
    m_pid = pid;
    m_reaped = false;
    m_status = 0;
    m_buffer.clear();
    m_scanned = 0;
    {
        std::lock_guard lock(m_errMutex);
        m_errTail.clear();
        m_errBytes = 0;
        m_logged = 0;
        m_errDone = false;
    }
    m_drain = std::thread([this, errFd = errPipe[0], stopFd = m_stopPipe[0], logFd] { drain(errFd, stopFd, logFd); });
}

void WorkerProcess::drain(int errFd, int stopFd, int logFd)
{
    const size_t cap = m_limits.maxLogBytes;
    bool stopping = false;
    std::vector<char> buf(65536);
    for (;;) {
        pollfd p[2] = {{errFd, POLLIN, 0}, {stopFd, POLLIN, 0}};
        // Once asked to stop, take what is already in the pipe and no more.
        const int r = ::poll(p, stopping ? 1 : 2, stopping ? 0 : -1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        if (!stopping && (p[1].revents & (POLLIN | POLLHUP))) {
            stopping = true;
            continue;
        }
        if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        const ssize_t n = ::read(errFd, buf.data(), buf.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        std::lock_guard lock(m_errMutex);
        m_errBytes += uint64_t(n);
        if (logFd >= 0 && m_logged < cap) {
            const size_t w = std::min<size_t>(size_t(n), cap - m_logged);
            writeAll(logFd, buf.data(), w);
            m_logged += w;
        }
        m_errTail.append(buf.data(), size_t(n));
        if (m_errTail.size() > 2 * m_limits.tailBytes)
            m_errTail.erase(0, m_errTail.size() - m_limits.tailBytes);
    }
    {
        std::lock_guard lock(m_errMutex);
        if (logFd >= 0 && m_errBytes > m_logged) {
            // The file keeps the head and, past the cap, the tail: where a crash's cause is.
            const auto tail = tailOf(m_errTail, m_limits.tailBytes);
            const uint64_t dropped = m_errBytes - m_logged - std::min<uint64_t>(tail.size(), m_errBytes - m_logged);
            const std::string note = "\n[kforge: the worker wrote " + std::to_string(m_errBytes) + " bytes to stderr; this log keeps the first "
                                   + std::to_string(m_logged) + ", drops " + std::to_string(dropped) + " and ends with the last "
                                   + std::to_string(tail.size()) + "]\n";
            writeAll(logFd, note.data(), note.size());
            writeAll(logFd, tail.data(), tail.size());
        }
        m_errDone = true;
    }
    m_errCv.notify_all();
    ::close(errFd);
    if (logFd >= 0)
        ::close(logFd);
}

void WorkerProcess::stopDrain(int waitMs)
{
    if (!m_drain.joinable())
        return;
    {
        // Let it reach the end of the pipe by itself when the writers are gone; a descendant that
        // escaped the process group and still holds stderr open must not hold us up for longer.
        std::unique_lock lock(m_errMutex);
        m_errCv.wait_for(lock, std::chrono::milliseconds(waitMs), [this] { return m_errDone; });
    }
    const char c = 's';
    if (::write(m_stopPipe[1], &c, 1) < 0) {
    }
    m_drain.join();
    ::close(m_stopPipe[0]);
    ::close(m_stopPipe[1]);
    m_stopPipe[0] = m_stopPipe[1] = -1;
}

bool WorkerProcess::reap(int waitMs)
{
    if (m_reaped)
        return true;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(waitMs);
    for (;;) {
        const pid_t r = ::waitpid(m_pid, &m_status, WNOHANG);
        if (r == m_pid || (r < 0 && errno == ECHILD)) {
            m_reaped = true;
            return true;
        }
        if (std::chrono::steady_clock::now() >= deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

bool WorkerProcess::isRunning()
{
    return m_pid > 0 && !reap(0);
}

bool WorkerProcess::writeLine(const std::string &line)
{
    if (m_fd < 0)
        return false;
    std::string data = line;
    data.push_back('\n');
    size_t off = 0;
    while (off < data.size()) {
        const ssize_t n = ::send(m_fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        off += size_t(n);
    }
    return true;
}

WorkerProcess::Read WorkerProcess::readLine(std::string &line, int timeoutMs)
{
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    const size_t cap = m_limits.maxLineBytes;
    for (;;) {
        const auto nl = m_buffer.find('\n', m_scanned);
        if (nl != std::string::npos) {
            if (nl > cap) {
                m_overlongBytes = nl;
                m_overlongNewline = true;
                m_buffer.clear();
                m_scanned = 0;
                return Read::Overlong;
            }
            line = m_buffer.substr(0, nl);
            m_buffer.erase(0, nl + 1);
            m_scanned = 0;
            return Read::Line;
        }
        m_scanned = m_buffer.size();
        if (m_buffer.size() > cap) {
            m_overlongBytes = m_buffer.size();
            m_overlongNewline = false;
            m_buffer.clear();
            m_scanned = 0;
            return Read::Overlong;
        }
        if (m_fd < 0)
            return Read::Eof;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            return Read::Timeout;
        pollfd p{m_fd, POLLIN, 0};
        const int r = ::poll(&p, 1, int(std::min<long long>(left.count(), 200)));
        if (r < 0 && errno != EINTR)
            return Read::Eof;
        if (r <= 0)
            continue;
        char buf[65536];
        const ssize_t n = ::recv(m_fd, buf, sizeof buf, 0);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
            return Read::Eof;
        if (n > 0)
            m_buffer.append(buf, size_t(n));
    }
}

void WorkerProcess::kill()
{
    if (m_fd >= 0) {
        ::close(m_fd);
        m_fd = -1;
    }
    if (m_pid > 0 && !m_reaped) {
        // SIGTERM first: srun cancels its job step on it and ssh closes the remote session, so no
        // worker is left running on another machine. SIGKILL whatever has not gone after a grace period.
        ::kill(-m_pid, SIGTERM);
        if (!reap(1500)) {
            ::kill(-m_pid, SIGKILL);
            ::kill(m_pid, SIGKILL);
            reap(5000);
        }
    }
    stopDrain(500);
    m_buffer.clear();
    m_scanned = 0;
}

std::string WorkerProcess::exitDescription(int waitMs)
{
    if (m_pid <= 0)
        return "never started";
    if (!reap(waitMs))
        return "still running";
    if (WIFEXITED(m_status)) {
        const int code = WEXITSTATUS(m_status);
        std::string s = "exited with status " + std::to_string(code);
        // A wrapper (ssh, srun, a shell) reports a worker killed by signal N as status 128 + N.
        if (code > 128 && code < 128 + 32)
            s += " (signal " + std::to_string(code - 128) + ", " + strsignal(code - 128) + ", in the worker behind it)";
        return s;
    }
    if (WIFSIGNALED(m_status)) {
        const int sig = WTERMSIG(m_status);
        return "killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
    }
    return "ended";
}

std::string WorkerProcess::lastWords(size_t maxBytes)
{
    std::unique_lock lock(m_errMutex);
    if (m_reaped)
        m_errCv.wait_for(lock, std::chrono::milliseconds(300), [this] { return m_errDone; });
    // Redact a little more than is kept, so a secret cut at the edge is cut off, not half shown.
    const std::string raw(tailOf(m_errTail, maxBytes + 512));
    lock.unlock();
    std::string text = printable(redactSecrets(raw));
    text = std::string(tailOf(text, maxBytes));
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.pop_back();
    return text;
}

uint64_t WorkerProcess::stderrBytes() const
{
    std::lock_guard lock(m_errMutex);
    return m_errBytes;
}

uint64_t WorkerProcess::loggedBytes() const
{
    std::lock_guard lock(m_errMutex);
    return m_logged;
}

} // namespace kforge
