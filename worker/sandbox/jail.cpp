#include "worker/sandbox/jail.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kforge::sandbox {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }
double usSince(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

bool executable(const std::string &p)
{
    return !p.empty() && ::access(p.c_str(), X_OK) == 0 && fs::is_regular_file(p);
}

// A child set up between fork and exec with async-signal-safe calls only: fds 0-2 and the listed
// descriptors at their places, every other descriptor closed, default signal handling.
struct Spawn {
    std::vector<std::string> argv;
    int in = -1, out = -1, err = -1;      // -1: /dev/null
    std::vector<std::pair<int, int>> fds; // source -> place (places >= 3)
    int64_t dataLimit = 0;
    int64_t fileLimit = 0;
};

pid_t spawn(const Spawn &s, std::string *error)
{
    std::vector<char *> argv;
    for (const auto &a : s.argv)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull < 0) {
        *error = std::string("cannot open /dev/null: ") + std::strerror(errno);
        return -1;
    }
    std::vector<int> sources = {s.in < 0 ? devnull : s.in, s.out < 0 ? devnull : s.out, s.err < 0 ? devnull : s.err};
    std::vector<int> places = {0, 1, 2};
    for (const auto &[from, to] : s.fds) {
        sources.push_back(from);
        places.push_back(to);
    }
    const int highest = *std::max_element(places.begin(), places.end());
    const pid_t pid = ::fork();
    if (pid < 0) {
        *error = std::string("fork failed: ") + std::strerror(errno);
        ::close(devnull);
        return -1;
    }
    if (pid == 0) {
        // Above every place first, so no dup2 overwrites a source still needed.
        int moved[64];
        const size_t n = std::min(sources.size(), size_t(64));
        for (size_t i = 0; i < n; ++i)
            if ((moved[i] = ::fcntl(sources[i], F_DUPFD, highest + 1 + 64)) < 0)
                ::_exit(126);
        for (size_t i = 0; i < n; ++i)
            if (::dup2(moved[i], places[i]) < 0)
                ::_exit(126);
        ::close_range(unsigned(highest + 1), UINT_MAX, 0);
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        for (int sig = 1; sig < NSIG; ++sig)
            ::sigaction(sig, &dfl, nullptr);
        sigset_t none;
        ::sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        if (s.dataLimit > 0) {
            const struct rlimit rl = {rlim_t(s.dataLimit), rlim_t(s.dataLimit)};
            ::setrlimit(RLIMIT_DATA, &rl);
        }
        if (s.fileLimit > 0) {
            const struct rlimit rl = {rlim_t(s.fileLimit), rlim_t(s.fileLimit)};
            ::setrlimit(RLIMIT_FSIZE, &rl);
        }
        // The jail dies with the worker (bwrap's --die-with-parent takes it from there).
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        // Not even bwrap gets the worker's environment: its pid 1 in the jail would keep it in
        // /proc/1/environ.
        char *noEnvironment[] = {nullptr};
        ::execve(argv[0], argv.data(), noEnvironment);
        ::_exit(127);
    }
    ::close(devnull);
    return pid;
}

void addTree(std::vector<std::string> &args, const char *path)
{
    std::error_code ec;
    const auto st = fs::symlink_status(path, ec);
    if (ec || !fs::exists(st))
        return;
    if (fs::is_symlink(st)) {
        const auto target = fs::read_symlink(path, ec);
        if (!ec)
            args.insert(args.end(), {"--symlink", target.string(), path});
    } else if (fs::is_directory(st)) {
        args.insert(args.end(), {"--ro-bind", path, path});
    }
}

} // namespace

std::vector<std::string> bwrapJailArgs(const std::string &bwrap, int64_t tmpBytes)
{
    std::vector<std::string> a = {bwrap,          "--unshare-all", "--die-with-parent", "--new-session", "--clearenv",
                                  "--cap-drop",   "ALL",           "--hostname",        "kforge-jail"};
    for (auto &b : bwrapBaseArgs())
        a.push_back(std::move(b));
    a.insert(a.end(), {"--dev", "/dev", "--remount-ro", "/dev", "--proc", "/proc", "--size", std::to_string(tmpBytes), "--tmpfs", "/tmp"});
    return a;
}

namespace {

int64_t threadRunNanos(pid_t pid)
{
    if (pid <= 0)
        return -1;
    std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/schedstat");
    long long ns = -1;
    return (in >> ns) ? ns : -1;
}

std::string readAvailable(int fd, size_t cap)
{
    std::string out;
    if (fd < 0)
        return out;
    char buf[4096];
    for (;;) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 0) <= 0)
            break;
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0)
            break;
        if (out.size() < cap)
            out.append(buf, size_t(n));
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
        out.pop_back();
    return out;
}

std::string mib(int64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

} // namespace

std::string signalName(int sig)
{
    const char *abbrev = ::sigabbrev_np(sig);
    return (abbrev ? std::string("SIG") + abbrev : std::string("signal")) + " (" + std::to_string(sig) + ")";
}

std::string describeWaitStatus(int status, bool viaBwrap)
{
    if (WIFSIGNALED(status))
        return "signal " + signalName(WTERMSIG(status));
    if (WIFEXITED(status)) {
        const int code = WEXITSTATUS(status);
        if (viaBwrap && code > 128 && code < 128 + NSIG)
            return "signal " + signalName(code - 128);
        return "exit status " + std::to_string(code);
    }
    return "wait status " + std::to_string(status);
}

std::string findBwrap(std::string *why)
{
    // KFORGE_BWRAP names one explicitly (a host without the package: tools/gpu/prepare.sh unpacks
    // Debian's); then beside the running executable, the usual places, PATH.
    if (const char *env = std::getenv("KFORGE_BWRAP"); env && *env) {
        if (executable(env))
            return env;
        if (why)
            *why = std::string("KFORGE_BWRAP names ") + env + ", which is not an executable file";
        return {};
    }
    std::error_code ec;
    const auto self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec && executable((self.parent_path() / "bwrap").string()))
        return (self.parent_path() / "bwrap").string();
    for (const char *p : {"/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"})
        if (executable(p))
            return p;
    if (const char *path = std::getenv("PATH")) {
        std::string all = path;
        for (size_t pos = 0; pos <= all.size();) {
            const size_t end = std::min(all.find(':', pos), all.size());
            const std::string candidate = all.substr(pos, end - pos) + "/bwrap";
            if (all.substr(pos, end - pos).size() && executable(candidate))
                return candidate;
            pos = end + 1;
        }
    }
    if (why)
        *why = "bubblewrap (bwrap) is not installed: CPU candidates run only inside its sandbox "
               "(Debian and Ubuntu: apt-get install bubblewrap)";
    return {};
}

std::string findRunner(std::string *why)
{
    std::error_code ec;
    const auto self = fs::read_symlink("/proc/self/exe", ec);
    std::vector<std::string> tried;
    if (!ec) {
        tried.push_back((self.parent_path() / "kforge-cpu-runner").string());
    }
#ifdef KFORGE_CPU_RUNNER_PATH
    tried.push_back(KFORGE_CPU_RUNNER_PATH);
#endif
    for (const auto &p : tried)
        if (executable(p))
            return fs::canonical(p, ec).string();
    if (why) {
        *why = "kforge-cpu-runner, the CPU sandbox's runner, was not found (looked at";
        for (const auto &p : tried)
            *why += " " + p;
        *why += tried.empty() ? " nothing)" : ")";
#ifndef KFORGE_CPU_RUNNER_PATH
        *why += "; this build has no CPU sandbox (libseccomp was missing when it was configured)";
#endif
    }
    return {};
}

std::vector<std::string> bwrapBaseArgs()
{
    std::vector<std::string> a = {"--ro-bind", "/usr", "/usr"};
    for (const char *p : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"})
        addTree(a, p);
    if (fs::exists("/etc/ld.so.cache"))
        a.insert(a.end(), {"--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"});
    return a;
}

RunResult runCaptured(const std::vector<std::string> &argv, int timeoutMs, size_t capBytes, int64_t dataLimitBytes,
                      int64_t fileLimitBytes)
{
    RunResult r;
    int pipefd[2];
    if (::pipe2(pipefd, O_CLOEXEC) != 0) {
        r.output = std::string("cannot create a pipe: ") + std::strerror(errno);
        return r;
    }
    Spawn s;
    s.argv = argv;
    s.out = s.err = pipefd[1];
    s.dataLimit = dataLimitBytes;
    s.fileLimit = fileLimitBytes;
    std::string error;
    const pid_t pid = spawn(s, &error);
    ::close(pipefd[1]);
    if (pid < 0) {
        ::close(pipefd[0]);
        r.output = error;
        return r;
    }
    r.started = true;
    const auto t0 = Clock::now();
    char buf[8192];
    for (;;) {
        const int left = timeoutMs - int(msSince(t0));
        if (left <= 0) {
            r.timedOut = true;
            ::kill(pid, SIGKILL);
            break;
        }
        pollfd p{pipefd[0], POLLIN, 0};
        const int pr = ::poll(&p, 1, left);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            continue;
        const ssize_t n = ::read(pipefd[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        const size_t keep = std::min(size_t(n), capBytes - std::min(capBytes, r.output.size()));
        r.output.append(buf, keep);
        r.droppedBytes += size_t(n) - keep;
    }
    ::close(pipefd[0]);
    while (::waitpid(pid, &r.waitStatus, 0) < 0 && errno == EINTR) {
    }
    return r;
}

std::string probeSandbox()
{
    std::string why;
    const std::string bwrap = findBwrap(&why);
    const std::string runner = bwrap.empty() ? std::string() : findRunner(&why);
    if (bwrap.empty() || runner.empty())
        return why;
    auto argv = bwrapJailArgs(bwrap, 1 << 20);
    argv.insert(argv.end(), {"--ro-bind", runner, "/kforge/runner", "--remount-ro", "/", "/kforge/runner", "--probe"});
    const auto r = runCaptured(argv, 10000, 4096, 0);
    if (r.started && WIFEXITED(r.waitStatus) && WEXITSTATUS(r.waitStatus) == 0)
        return {};
    std::string out = r.output;
    while (!out.empty() && out.back() == '\n')
        out.pop_back();
    return "the CPU sandbox does not work on this host (" + (r.timedOut ? std::string("timed out") : describeWaitStatus(r.waitStatus, true)) +
           (out.empty() ? std::string(")") : "): " + out);
}

// ---- Arena ----

std::unique_ptr<Arena> Arena::create(int64_t bytes, std::string *error)
{
    bytes = std::max<int64_t>(bytes, 4096);
    const int fd = ::memfd_create("kforge-arena", MFD_CLOEXEC);
    if (fd < 0) {
        *error = std::string("memfd_create failed: ") + std::strerror(errno);
        return nullptr;
    }
    if (::ftruncate(fd, bytes) != 0) {
        *error = "cannot size the arena to " + mib(bytes) + ": " + std::strerror(errno);
        ::close(fd);
        return nullptr;
    }
    void *p = ::mmap(nullptr, size_t(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        *error = "cannot map the arena of " + mib(bytes) + ": " + std::strerror(errno);
        ::close(fd);
        return nullptr;
    }
    return std::unique_ptr<Arena>(new Arena(fd, static_cast<unsigned char *>(p), bytes));
}

Arena::~Arena()
{
    ::munmap(m_base, size_t(m_bytes));
    ::close(m_fd);
}

// ---- Jail ----

StartResult Jail::start(const JailOptions &o, const Arena &arena)
{
    StartResult res;
    const auto t0 = Clock::now();
    std::string why;
    const std::string bwrap = findBwrap(&why);
    const std::string runner = bwrap.empty() ? std::string() : findRunner(&why);
    if (bwrap.empty() || runner.empty()) {
        res.failure = StartResult::Failure::Unavailable;
        res.detail = why;
        return res;
    }
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        res.failure = StartResult::Failure::Unavailable;
        res.detail = std::string("socketpair failed: ") + std::strerror(errno);
        return res;
    }
    const int on = 1;
    ::setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof on); // the kernel names the runner's pid
    int errPipe[2];
    if (::pipe2(errPipe, O_CLOEXEC) != 0) {
        ::close(sv[0]);
        ::close(sv[1]);
        res.failure = StartResult::Failure::Unavailable;
        res.detail = std::string("pipe failed: ") + std::strerror(errno);
        return res;
    }
    Spawn s;
    s.argv = bwrapJailArgs(bwrap, o.fileBytes);
    s.argv.insert(s.argv.end(), {"--ro-bind", runner, "/kforge/runner", "--ro-bind", o.sharedObject, "/kforge/candidate.so",
                                 "--remount-ro", "/", "--chdir", "/tmp", "/kforge/runner", "--arena-bytes", std::to_string(arena.bytes()),
                                 "--memory-bytes", std::to_string(o.memoryBytes), "--cpu-seconds", std::to_string(o.cpuSeconds),
                                 "--file-bytes", std::to_string(o.fileBytes)});
    s.err = errPipe[1];
    s.fds = {{arena.fd(), wire::kArenaFd}, {sv[1], wire::kControlFd}};
    std::string error;
    const pid_t pid = spawn(s, &error);
    ::close(sv[1]);
    ::close(errPipe[1]);
    if (pid < 0) {
        ::close(sv[0]);
        ::close(errPipe[0]);
        res.failure = StartResult::Failure::Unavailable;
        res.detail = "cannot start the CPU sandbox: " + error;
        return res;
    }
    std::unique_ptr<Jail> j(new Jail());
    j->m_control = sv[0];
    j->m_bwrapPid = pid;
    j->m_stderr = errPipe[0];
    j->m_memoryBytes = o.memoryBytes;
    j->m_arenaBytes = arena.bytes();

    wire::Reply reply;
    pid_t sender = -1;
    const int got = j->receive(reply, o.startTimeoutMs, &sender);
    if (got == 1 && reply.type == wire::Type::Ready) {
        j->m_runnerPid = sender;
        j->m_startMillis = msSince(t0);
        j->calibrate();
        j->stopRunner();
        res.jail = std::move(j);
        return res;
    }
    if (got == 0) {
        j->kill();
        res.failure = StartResult::Failure::Timeout;
        res.detail = "the CPU sandbox did not come up within " + std::to_string(o.startTimeoutMs) + " ms (jail killed)";
        return res;
    }
    if (got == 1 && reply.type == wire::Type::LoadError) {
        res.failure = reply.code == 1 ? StartResult::Failure::NoEntry : StartResult::Failure::LoadFailed;
        res.detail = reply.text;
        j->kill();
        return res;
    }
    if (got == 1 && reply.type == wire::Type::Violation) {
        res.failure = StartResult::Failure::Violation;
        res.detail = std::string(reply.text) + " (while the candidate was being loaded)";
        j->reap(2000);
        return res;
    }
    if (got == 1 && reply.type == wire::Type::Fatal) {
        res.failure = reply.code == 2 ? StartResult::Failure::Violation : StartResult::Failure::Crashed;
        res.detail = std::string(reply.text) + " (while the candidate was being loaded)";
        j->reap(2000);
        return res;
    }
    // Closed without a word: bwrap itself failed (no user namespaces, a missing path), or Setup.
    const std::string said = got == 1 ? std::string(reply.text) : std::string();
    const std::string status = j->reap(2000);
    const std::string bw = readAvailable(j->m_stderr, 4096);
    res.failure = StartResult::Failure::Unavailable;
    res.detail = "the CPU sandbox could not start (" + status + ")";
    if (!said.empty())
        res.detail += ": " + said;
    if (!bw.empty())
        res.detail += ": " + bw;
    return res;
}

Jail::~Jail()
{
    continueRunner(); // so that it can read the quit
    if (m_bwrapPid > 0 && m_control >= 0) {
        wire::Request q;
        q.type = wire::Type::Quit;
        ::send(m_control, &q, offsetof(wire::Request, tensors), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    kill();
    if (m_control >= 0)
        ::close(m_control);
    if (m_stderr >= 0)
        ::close(m_stderr);
}

std::string Jail::reap(int graceMs)
{
    if (m_bwrapPid <= 0)
        return {};
    int status = 0;
    const auto t0 = Clock::now();
    for (;;) {
        const pid_t r = ::waitpid(m_bwrapPid, &status, WNOHANG);
        if (r == m_bwrapPid || (r < 0 && errno != EINTR))
            break;
        if (msSince(t0) >= graceMs) {
            ::kill(m_bwrapPid, SIGKILL);
            while (::waitpid(m_bwrapPid, &status, 0) < 0 && errno == EINTR) {
            }
            break;
        }
        ::usleep(1000);
    }
    m_bwrapPid = -1;
    m_runnerPid = -1;
    return describeWaitStatus(status, true);
}

std::string Jail::kill()
{
    if (m_bwrapPid <= 0)
        return {};
    // The runner's pid namespace ends with bwrap (--die-with-parent): every process the candidate
    // started goes with it, setsid or not.
    ::kill(m_bwrapPid, SIGKILL);
    return reap(0);
}

int Jail::receive(wire::Reply &reply, int timeoutMs, pid_t *senderPid)
{
    const auto t0 = Clock::now();
    for (;;) {
        const int left = timeoutMs < 0 ? -1 : std::max(0, timeoutMs - int(msSince(t0)));
        pollfd p{m_control, POLLIN, 0};
        const int pr = ::poll(&p, 1, left);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr == 0)
            return 0;
        if (pr < 0)
            return -1;
        break;
    }
    reply = wire::Reply{};
    iovec iov{&reply, sizeof reply};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n;
    while ((n = ::recvmsg(m_control, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
    }
    if (n <= 0)
        return -1;
    for (cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS && senderPid) {
            ucred cred;
            std::memcpy(&cred, CMSG_DATA(c), sizeof cred);
            *senderPid = cred.pid;
        } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            // Descriptors the jail tried to hand over: never kept.
            const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < count; ++i) {
                int fd;
                std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                ::close(fd);
            }
        }
    }
    reply.text[sizeof reply.text - 1] = 0;
    if (size_t(n) != sizeof reply || reply.magic != wire::kMagic || (msg.msg_flags & MSG_TRUNC)) {
        reply.type = wire::Type{0};
        std::snprintf(reply.text, sizeof reply.text, "a malformed %zd-byte message", n);
    }
    return 1;
}

CallOutcome Jail::ended(CallOutcome::Kind kind, const std::string &what)
{
    CallOutcome c;
    c.kind = kind;
    std::string words = what;
    // The runner may have said why before it died, unread yet: a thread the candidate left running can
    // trap between the check for stray messages and the request, and the request then finds the socket
    // closed. Its last message is still queued.
    wire::Reply last;
    if (words.empty() && receive(last, 0, nullptr) > 0 && (last.type == wire::Type::Violation || last.type == wire::Type::Fatal)) {
        c.kind = last.type == wire::Type::Violation || last.code == 2 ? CallOutcome::Kind::Violation : CallOutcome::Kind::Crashed;
        words = last.text;
    }
    const std::string status = reap(2000);
    c.detail = words.empty() ? "the candidate's process died (" + status + ")" : words;
    return c;
}

// The round trip of a call that runs nothing: its fastest of a few, at most kMaxPingMicros (a candidate's
// thread that slows the runner down must not buy itself a larger allowance). Left at 0, the most
// conservative, when a ping goes unanswered.
void Jail::calibrate()
{
    constexpr double kMaxPingMicros = 200;
    double best = -1;
    for (int i = 0; i < 9; ++i) {
        wire::Request ping{};
        ping.magic = wire::kMagic;
        ping.type = wire::Type::Ping;
        ping.seq = ++m_seq;
        const auto t0 = Clock::now();
        if (::send(m_control, &ping, sizeof ping, MSG_NOSIGNAL) != ssize_t(sizeof ping))
            return;
        wire::Reply pong;
        if (receive(pong, 1000, nullptr) != 1 || pong.type != wire::Type::Result || pong.seq != ping.seq)
            return;
        const double us = usSince(t0);
        best = best < 0 ? us : std::min(best, us);
    }
    m_pingMicros = std::clamp(best, 0.0, kMaxPingMicros);
}

void Jail::stopRunner()
{
    if (alive() && m_runnerPid > 0 && !m_runnerStopped && ::kill(m_runnerPid, SIGSTOP) == 0)
        m_runnerStopped = true;
}

void Jail::continueRunner()
{
    if (m_runnerStopped && m_runnerPid > 0)
        ::kill(m_runnerPid, SIGCONT);
    m_runnerStopped = false;
}

CallOutcome Jail::call(const std::vector<wire::Tensor> &inputs, const std::vector<wire::Tensor> &outputs,
                       const std::map<std::string, int64_t> &symbols, int timeoutMs)
{
    // Nothing of the candidate's runs between calls. A thread it leaves behind could finish the work
    // while the worker compares or times, so that the call is timed at the thread's start alone (a
    // softmax that did so measured 72 us against ATen's 5951 at 1024 x 4096, caught only by the roofline
    // floor), or take the cores the worker times the baseline on. It still runs from the reply to the
    // stop below, a moment the round-trip floor covers.
    continueRunner();
    CallOutcome c = callRunning(inputs, outputs, symbols, timeoutMs);
    stopRunner();
    return c;
}

CallOutcome Jail::callRunning(const std::vector<wire::Tensor> &inputs, const std::vector<wire::Tensor> &outputs,
                              const std::map<std::string, int64_t> &symbols, int timeoutMs)
{
    CallOutcome c;
    if (!alive()) {
        c.kind = CallOutcome::Kind::Crashed;
        c.detail = "the jail is no longer running";
        return c;
    }
    if (inputs.size() + outputs.size() > size_t(wire::kMaxTensors) || symbols.size() > size_t(wire::kMaxSymbols)) {
        c.kind = CallOutcome::Kind::Failed;
        c.detail = "more tensors or shape symbols than the CPU sandbox passes (" + std::to_string(wire::kMaxTensors) + ", " +
                   std::to_string(wire::kMaxSymbols) + ")";
        return c;
    }
    // Anything waiting now was written outside a call: only the candidate writes then.
    // A thread the candidate left running may also have died or trapped since the last call.
    wire::Reply stray;
    if (const int got = receive(stray, 0, nullptr); got < 0) {
        return ended(CallOutcome::Kind::Crashed, "");
    } else if (got > 0) {
        if (stray.type == wire::Type::Violation)
            return ended(CallOutcome::Kind::Violation, std::string(stray.text) + " (after kforge_entry had returned)");
        if (stray.type == wire::Type::Fatal)
            return ended(stray.code == 2 ? CallOutcome::Kind::Violation : CallOutcome::Kind::Crashed,
                         std::string(stray.text) + " (after kforge_entry had returned)");
        kill();
        c.kind = CallOutcome::Kind::Violation;
        c.detail = "the candidate wrote to the sandbox's control socket (a message arrived outside any call)";
        return c;
    }
    auto req = std::make_unique<wire::Request>();
    req->seq = ++m_seq;
    req->nIn = int32_t(inputs.size());
    req->nOut = int32_t(outputs.size());
    for (size_t i = 0; i < inputs.size(); ++i)
        req->tensors[i] = inputs[i];
    for (size_t i = 0; i < outputs.size(); ++i)
        req->tensors[inputs.size() + i] = outputs[i];
    for (const auto &[name, value] : symbols) {
        auto &s = req->symbols[req->nSym++];
        std::snprintf(s.name, sizeof s.name, "%s", name.c_str());
        s.value = value;
    }
    const int64_t cpu0 = threadRunNanos(m_runnerPid);
    const auto t0 = Clock::now();
    if (::send(m_control, req.get(), sizeof *req, MSG_NOSIGNAL) != ssize_t(sizeof *req))
        return ended(CallOutcome::Kind::Crashed, "");
    wire::Reply reply;
    const int got = receive(reply, timeoutMs, nullptr);
    c.workerMicros = usSince(t0);
    if (got == 0) {
        kill();
        c.kind = CallOutcome::Kind::Timeout;
        c.detail = "kforge_entry did not return within " + std::to_string(timeoutMs) + " ms; the jail and every process in it were killed";
        return c;
    }
    if (got < 0)
        return ended(CallOutcome::Kind::Crashed, "");
    switch (reply.type) {
    case wire::Type::Result:
        break;
    case wire::Type::Violation:
        return ended(CallOutcome::Kind::Violation, reply.text);
    case wire::Type::Fatal: {
        const std::string status = reap(2000);
        c.kind = reply.code == 2 ? CallOutcome::Kind::Violation : CallOutcome::Kind::Crashed;
        // The runner's words name the signal; the jail's status is worth saying only when it differs.
        c.detail = reply.text;
        if (status.find(signalName(reply.rc)) == std::string::npos)
            c.detail += " (then " + status + ")";
        return c;
    }
    default:
        kill();
        c.kind = CallOutcome::Kind::Violation;
        c.detail = std::string("the candidate wrote to the sandbox's control socket (") + reply.text + ")";
        return c;
    }
    if (reply.seq != req->seq) {
        kill();
        c.kind = CallOutcome::Kind::Violation;
        c.detail = "the candidate wrote to the sandbox's control socket (a reply to call " + std::to_string(reply.seq) + " during call " +
                   std::to_string(req->seq) + ")";
        return c;
    }
    // The runner's time is the sample, but it is said by a process the candidate shares, so it must
    // agree with what the kernel and the worker saw: no more than the round trip, no less than the
    // CPU time the calling thread spent, less the runner's own handling of the call and the error of
    // reading that CPU time. The handling (receive, describe, reply) reached 240 us on a loaded 2-core
    // machine. The error is larger: the kernel books a thread's run time only when it is scheduled out
    // or at its tick (4 ms at 250 Hz), so a reading taken while the runner is still on a CPU lags, and
    // a reading before the call that lags charges the call with time spent before it (an honest
    // 150 us call read 1413 us on a loaded CI machine). So a report is a forgery only when it hides
    // more than 5 ms and a tenth; a smaller one gains nothing past the round-trip floor below.
    constexpr double kRunTimeSlackMicros = 5000;
    const int64_t cpu1 = threadRunNanos(m_runnerPid);
    const double threadMicros = cpu0 >= 0 && cpu1 >= cpu0 ? double(cpu1 - cpu0) / 1000.0 : -1;
    if (!(reply.micros >= 0) || reply.micros > c.workerMicros + 50 ||
        (threadMicros >= 0 && reply.micros + kRunTimeSlackMicros + 0.1 * threadMicros < threadMicros)) {
        kill();
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "the reported time of %.1f us disagrees with the worker's round trip of %.1f us and the %.1f us its thread ran: "
                      "the report was forged",
                      reply.micros, c.workerMicros, threadMicros);
        c.kind = CallOutcome::Kind::Violation;
        c.detail = buf;
        return c;
    }
    c.rc = reply.rc;
    // Under-reporting buys little: the time is never less than the round trip less a no-op's, less a
    // slack for the worker's own wake-up, which on an idle 2-core machine still varied by up to 180 us
    // a call (so the floor cannot be the sample itself: it would charge honest short kernels for it).
    c.reportedMicros = reply.micros;
    constexpr double kWakeSlackMicros = 200;
    c.micros = std::max(reply.micros, c.workerMicros - m_pingMicros - kWakeSlackMicros - 0.1 * c.workerMicros);
    if (reply.rc != 0) {
        // A refusal that follows an allocation the memory limit refused is the limit's doing.
        c.kind = reply.code == 2 ? CallOutcome::Kind::Violation : CallOutcome::Kind::Failed;
        c.detail = "kforge_entry returned " + std::to_string(reply.rc);
        if (reply.text[0])
            c.detail += std::string(" ") + reply.text;
    }
    return c;
}

} // namespace kforge::sandbox
