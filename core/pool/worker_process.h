#pragma once
// One worker process started from a shell command line ("kforge-worker", "ssh gpu7 kforge-worker",
// "srun --gres=gpu:1 kforge-worker"), spoken to in JSON lines over a socket pair on its stdin and
// stdout.
//
// What the worker gets: a scrubbed environment (an allow-list, never a secret-looking variable), no
// descriptors but its stdin, stdout and stderr, default signal dispositions, and death with its
// parent (PR_SET_PDEATHSIG: SIGKILL when the thread that started it ends, so start it from a thread
// that lives as long as it should).
//
// What we keep of it: its stderr goes through a pipe that a thread drains into a log file capped at
// WorkerLimits::maxLogBytes and an in-memory tail, so neither grows without bound; lastWords() is
// that tail with secrets redacted, for crash reports. A reply line longer than maxLineBytes (or as
// many bytes with no newline) is reported as Read::Overlong.
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <thread>
#include <vector>

namespace kforge {

struct WorkerLimits {
    size_t maxLineBytes = size_t(64) << 20; // one protocol line
    size_t maxLogBytes = size_t(16) << 20;  // what the log file keeps of stderr (then its last tailBytes)
    size_t tailBytes = size_t(64) << 10;    // the in-memory tail of stderr
};

// The environment a worker starts with: the variables of `from` (this process's environment when
// null) whose names are on the allow-list (PATH, HOME, USER, LOGNAME, SHELL, LANG, LANGUAGE, LC_*, TZ,
// TMPDIR, LD_LIBRARY_PATH, CXX, CC, XDG_CACHE_HOME, XDG_RUNTIME_DIR, SSH_AUTH_SOCK, CUDA_*,
// NVIDIA_*, KFORGE_*, SLURM_*, TORCH_*, PYTORCH_*, OMP_*, MKL_*, OPENBLAS_*, HIP_*, ROCR_*, HSA_*,
// ASAN_*, UBSAN_*, LSAN_*), then `extra`; a name that looks like a secret (util/redact.h) is dropped
// from both, even when allow-listed. "NAME=value" strings, sorted by name.
std::vector<std::string> workerEnvironment(const std::map<std::string, std::string> &extra = {}, char **from = nullptr);
bool allowedInWorkerEnvironment(std::string_view name);

class WorkerProcess {
public:
    // `stderrLog`: the file that keeps the worker's stderr (up to the cap); none when empty.
    WorkerProcess(std::string command, std::string stderrLog, std::map<std::string, std::string> env = {},
                  WorkerLimits limits = {});
    ~WorkerProcess();
    WorkerProcess(const WorkerProcess &) = delete;
    WorkerProcess &operator=(const WorkerProcess &) = delete;

    void start(); // throws Error when the process cannot be created
    bool isRunning();
    pid_t pid() const { return m_pid; }

    // Returns false when the worker's end is closed.
    bool writeLine(const std::string &line);

    enum class Read { Line, Timeout, Eof, Overlong };
    Read readLine(std::string &line, int timeoutMs);
    // After Read::Overlong: how many bytes the worker had sent of the line, and whether it had ended it.
    size_t overlongBytes() const { return m_overlongBytes; }
    bool overlongHadNewline() const { return m_overlongNewline; }

    // Stops the whole process group (a wrapper like ssh or srun and what it started) and reaps it.
    void kill();
    // "exited with status 3", "killed by signal 11 (Segmentation fault)"; reaps the process first.
    std::string exitDescription(int waitMs = 1000);
    // The end of what the worker wrote to stderr, at most `maxBytes`, secrets redacted
    // (util/redact.h) and made printable: what a crash report may quote and a session may store.
    // Waits briefly for stderr to be drained when the worker has exited.
    std::string lastWords(size_t maxBytes = 2000);
    // Bytes the worker wrote to stderr so far, and how many of them the log file holds.
    uint64_t stderrBytes() const;
    uint64_t loggedBytes() const;
    const std::string &command() const { return m_command; }
    const WorkerLimits &limits() const { return m_limits; }

private:
    bool reap(int waitMs);
    void drain(int errFd, int stopFd, int logFd);
    void stopDrain(int waitMs);

    std::string m_command;
    std::string m_stderrLog;
    std::map<std::string, std::string> m_env;
    WorkerLimits m_limits;
    pid_t m_pid = -1;
    int m_fd = -1;
    int m_status = 0;
    bool m_reaped = true;
    std::string m_buffer;
    size_t m_scanned = 0; // bytes of m_buffer known to hold no newline
    size_t m_overlongBytes = 0;
    bool m_overlongNewline = false;

    // stderr, drained by m_drain
    std::thread m_drain;
    int m_stopPipe[2] = {-1, -1};
    mutable std::mutex m_errMutex;
    std::condition_variable m_errCv;
    bool m_errDone = true;
    std::string m_errTail;
    uint64_t m_errBytes = 0;
    uint64_t m_logged = 0;
};

} // namespace kforge
