#include "pool/worker_process.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "util/error.h"

namespace kforge {

WorkerProcess::WorkerProcess(std::string command, std::string stderrLog, std::map<std::string, std::string> env)
    : m_command(std::move(command)), m_stderrLog(std::move(stderrLog)), m_env(std::move(env))
{
}

WorkerProcess::~WorkerProcess()
{
    kill();
}

void WorkerProcess::start()
{
    kill();
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
        throw Error(std::string("cannot create a socket pair for the worker: ") + std::strerror(errno));
    const int errFd = ::open(m_stderrLog.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        if (errFd >= 0)
            ::close(errFd);
        throw Error(std::string("cannot start worker '") + m_command + "': " + std::strerror(errno));
    }
    if (pid == 0) {
        // Child: its own process group, so kill() reaches whatever the command line started.
        ::setpgid(0, 0);
        ::dup2(fds[1], 0);
        ::dup2(fds[1], 1);
        if (errFd >= 0)
            ::dup2(errFd, 2);
        for (const auto &[k, v] : m_env)
            ::setenv(k.c_str(), v.c_str(), 1);
        // exec: the worker (or ssh, or srun) replaces the shell, so its pid is ours to watch and signal.
        const std::string line = "exec " + m_command;
        ::execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char *>(nullptr));
        ::_exit(127);
    }
    ::setpgid(pid, pid);
    ::close(fds[1]);
    if (errFd >= 0)
        ::close(errFd);
    m_fd = fds[0];
    m_pid = pid;
    m_reaped = false;
    m_status = 0;
    m_buffer.clear();
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
    for (;;) {
        const auto nl = m_buffer.find('\n');
        if (nl != std::string::npos) {
            line = m_buffer.substr(0, nl);
            m_buffer.erase(0, nl + 1);
            return Read::Line;
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

std::string WorkerProcess::stderrTail(size_t maxBytes) const
{
    std::ifstream in(m_stderrLog, std::ios::binary);
    if (!in)
        return {};
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (all.size() > maxBytes)
        all = all.substr(all.size() - maxBytes);
    while (!all.empty() && (all.back() == '\n' || all.back() == ' '))
        all.pop_back();
    return all;
}

} // namespace kforge
