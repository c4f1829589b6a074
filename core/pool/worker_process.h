#pragma once
// One worker process started from a shell command line ("kforge-worker", "ssh gpu7 kforge-worker",
// "srun --gres=gpu:1 kforge-worker"), spoken to in JSON lines over a socket pair on its stdin and
// stdout. Its stderr goes to a log file so a crash report can quote it.
#include <map>
#include <string>
#include <sys/types.h>

namespace kforge {

class WorkerProcess {
public:
    WorkerProcess(std::string command, std::string stderrLog, std::map<std::string, std::string> env = {});
    ~WorkerProcess();
    WorkerProcess(const WorkerProcess &) = delete;
    WorkerProcess &operator=(const WorkerProcess &) = delete;

    void start(); // throws Error when the process cannot be created
    bool isRunning();
    pid_t pid() const { return m_pid; }

    // Returns false when the worker's end is closed.
    bool writeLine(const std::string &line);

    enum class Read { Line, Timeout, Eof };
    Read readLine(std::string &line, int timeoutMs);

    // Stops the whole process group (a wrapper like ssh or srun and what it started) and reaps it.
    void kill();
    // "exited with status 3", "killed by signal 11 (Segmentation fault)"; reaps the process first.
    std::string exitDescription(int waitMs = 1000);
    std::string stderrTail(size_t maxBytes = 2000) const;
    const std::string &command() const { return m_command; }

private:
    bool reap(int waitMs);

    std::string m_command;
    std::string m_stderrLog;
    std::map<std::string, std::string> m_env;
    pid_t m_pid = -1;
    int m_fd = -1;
    int m_status = 0;
    bool m_reaped = true;
    std::string m_buffer;
};

} // namespace kforge
