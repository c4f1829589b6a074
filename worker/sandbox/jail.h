#pragma once
// The jail for CPU candidates, worker side. A candidate's shared object is loaded by
// kforge-cpu-runner inside bubblewrap (its own user, pid, network, IPC and UTS namespaces, an empty
// environment, a read-only file system with /usr and the loader's cache but no /etc/passwd, /home or
// compile cache, a small private /tmp) and confined by the runner with rlimits and a seccomp filter
// before any of its code runs. The worker and the runner share exactly two descriptors: a memfd arena
// for tensors and a SOCK_SEQPACKET control socket. Nothing here uses torch or Qt.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

#include "worker/sandbox/wire.h"

namespace kforge::sandbox {

// bubblewrap: $KFORGE_BWRAP, else beside the running executable, else /usr/bin, /bin, /usr/local/bin or
// PATH; empty with *why when missing.
std::string findBwrap(std::string *why);
// kforge-cpu-runner beside the running executable (/proc/self/exe), else where CMake built it;
// empty with *why when neither exists.
std::string findRunner(std::string *why);
// Starts kforge-cpu-runner --probe in a jail: it applies its limits and seccomp filter and exits. Empty
// when that works, else what failed (no bwrap, no runner, no user namespaces, no seccomp).
std::string probeSandbox();
// The read-only base of every jail: /usr, the /bin, /sbin and /lib* links (or folders), the loader's
// cache. No /etc/passwd, no /home, no /root, no caches.
std::vector<std::string> bwrapBaseArgs();
// bwrap with every namespace unshared, an empty environment, no capabilities, the base above, a
// read-only /dev and a private /tmp of `tmpBytes`. The caller adds its binds, "--remount-ro /" and
// the command.
std::vector<std::string> bwrapJailArgs(const std::string &bwrap, int64_t tmpBytes);

// The outcome of running a command in a jail to its end.
struct RunResult {
    bool started = false;   // false: fork or exec failed (output says why)
    int waitStatus = 0;     // as waitpid gave it
    bool timedOut = false;  // killed at the deadline
    std::string output;     // stdout and stderr together, at most capBytes of it
    size_t droppedBytes = 0; // output past capBytes, read and thrown away
};
// Runs argv (argv[0] a path) with stdin on /dev/null, stdout and stderr captured, every other
// descriptor closed, `dataLimitBytes` as RLIMIT_DATA and `fileLimitBytes` as RLIMIT_FSIZE (0: unchanged),
// killed after `timeoutMs`.
RunResult runCaptured(const std::vector<std::string> &argv, int timeoutMs, size_t capBytes, int64_t dataLimitBytes,
                      int64_t fileLimitBytes = 0);
// "exit status 3", "signal SIGSEGV (11)"; bwrap reports a child's signal N as status 128+N.
std::string describeWaitStatus(int status, bool viaBwrap);
std::string signalName(int sig);

// Memory shared with the jail: a memfd mapped here and, in the runner, at its own address.
class Arena {
public:
    static std::unique_ptr<Arena> create(int64_t bytes, std::string *error);
    ~Arena();
    Arena(const Arena &) = delete;
    Arena &operator=(const Arena &) = delete;
    unsigned char *base() const { return m_base; }
    int64_t bytes() const { return m_bytes; }
    int fd() const { return m_fd; }

private:
    Arena(int fd, unsigned char *base, int64_t bytes) : m_fd(fd), m_base(base), m_bytes(bytes) {}
    int m_fd;
    unsigned char *m_base;
    int64_t m_bytes;
};

struct JailOptions {
    std::string sharedObject;             // the candidate, bound read-only at /kforge/candidate.so
    int64_t memoryBytes = int64_t(2) << 30; // RLIMIT_DATA of the runner: heap, stacks, private maps
    int cpuSeconds = 600;                 // RLIMIT_CPU over the jail's life (the worker's deadlines come first)
    int64_t fileBytes = int64_t(64) << 20; // RLIMIT_FSIZE and the size of the private /tmp
    int startTimeoutMs = 10000;           // jail start, load and confinement
};

struct CallOutcome {
    enum class Kind { Ok, Failed, Crashed, Timeout, Violation };
    Kind kind = Kind::Ok;
    int rc = 0;
    double micros = -1;       // the call's time: the runner's own steady_clock time, but never much less than
                              // the worker's round trip less that of a call that runs nothing (jail.cpp)
    double workerMicros = -1; // the round trip as the worker saw it
    std::string detail;
    double reportedMicros = -1; // what the runner's clock said, which the candidate could bend
    bool ok() const { return kind == Kind::Ok; }
};

class Jail;

struct StartResult {
    enum class Failure { None, Unavailable, LoadFailed, NoEntry, Violation, Crashed, Timeout };
    std::unique_ptr<Jail> jail;
    Failure failure = Failure::None;
    std::string detail;
};

class Jail {
public:
    // Starts kforge-cpu-runner in a fresh jail on `arena` and waits until the candidate is loaded and
    // confined. Never falls back to running anything unconfined: a missing tool is a failure.
    static StartResult start(const JailOptions &options, const Arena &arena);
    ~Jail(); // asks the runner to quit, then kills the jail and reaps it
    Jail(const Jail &) = delete;
    Jail &operator=(const Jail &) = delete;

    // One call of kforge_entry. Tensors are arena offsets; `symbols` answer kforge_symbol(). A
    // timeout kills the jail (every process in it), as do a crash and a violation: alive() is then
    // false and the caller starts a new jail for the next call. Between calls (and from start to the
    // first) the runner is stopped (SIGSTOP): a thread the candidate left running can neither finish
    // the call's work after it returned nor take the cores the baseline is timed on.
    CallOutcome call(const std::vector<wire::Tensor> &inputs, const std::vector<wire::Tensor> &outputs,
                     const std::map<std::string, int64_t> &symbols, int timeoutMs);
    bool alive() const { return m_bwrapPid > 0; }
    pid_t runnerPid() const { return m_runnerPid; } // in the worker's pid namespace
    pid_t bwrapPid() const { return m_bwrapPid; }
    double startMillis() const { return m_startMillis; } // spawn to Ready
    // Kills every process of the jail and reaps it; returns the wait status ("" when already gone).
    std::string kill();

private:
    Jail() = default;
    void calibrate(); // times a few calls that run nothing (m_pingMicros)
    CallOutcome callRunning(const std::vector<wire::Tensor> &inputs, const std::vector<wire::Tensor> &outputs,
                            const std::map<std::string, int64_t> &symbols, int timeoutMs);
    void stopRunner();     // SIGSTOP: every thread of the runner's process
    void continueRunner(); // SIGCONT, when stopped
    CallOutcome ended(CallOutcome::Kind kind, const std::string &what); // the runner died: collect why
    int receive(wire::Reply &reply, int timeoutMs, pid_t *senderPid); // 1 packet, 0 timeout, -1 closed
    std::string reap(int graceMs);

    int m_control = -1;
    pid_t m_bwrapPid = -1;
    pid_t m_runnerPid = -1;
    int m_stderr = -1; // bwrap's own complaints, before the runner silences fds 0-2
    uint64_t m_seq = 0;
    double m_pingMicros = 0; // the round trip of a call that runs nothing (calibrate())
    int64_t m_memoryBytes = 0;
    int64_t m_arenaBytes = 0;
    double m_startMillis = 0;
    std::string m_lastWords;
    bool m_runnerStopped = false;
};

} // namespace kforge::sandbox
