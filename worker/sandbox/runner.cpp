// kforge-cpu-runner: runs one CPU candidate inside the jail bubblewrap built for it (worker/sandbox/jail.h).
// It maps the arena (fd 3), keeps only its control socket (fd 4), confines itself (rlimits, then a
// seccomp filter) and only then loads the candidate, so even the candidate's static constructors run
// confined. Then it answers calls: one kforge_entry per request, timed here with steady_clock. No
// torch, no Qt: it starts in a few milliseconds.
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <exception>
#include <fcntl.h>
#include <new>
#include <sched.h>
#include <seccomp.h>
#include <string>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "worker/sandbox/wire.h"

namespace wire = kforge::sandbox::wire;

namespace {

struct KfTensor { // kf_tensor of protocol/cpu_abi.h
    void *data;
    int32_t dtype;
    int32_t ndim;
    int64_t sizes[8];
    int64_t strides[8];
};
using EntryFn = int (*)(const KfTensor *, int, KfTensor *, int);

int64_t g_memoryBytes = 0;
int64_t g_fileBytes = 0;
int g_cpuSeconds = 0;
std::atomic<int64_t> g_refusedBytes{0}; // the largest allocation the memory limit refused
std::atomic<int> g_phase{0}; // 0 loading, 1 in kforge_entry, 2 between calls
wire::Symbol g_symbols[wire::kMaxSymbols];
int g_nSymbols = 0;

// ---- Messages, safe in signal handlers (no allocation, no locks) ----

void appendText(char *dst, size_t cap, const char *s)
{
    size_t n = std::strlen(dst);
    while (*s && n + 1 < cap)
        dst[n++] = *s++;
    dst[n] = 0;
}

void appendNumber(char *dst, size_t cap, long long v)
{
    char buf[24];
    int i = 0;
    const bool neg = v < 0;
    unsigned long long u = neg ? 0ULL - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
    do {
        buf[i++] = char('0' + u % 10);
        u /= 10;
    } while (u && i < 22);
    if (neg)
        buf[i++] = '-';
    char out[24];
    for (int k = 0; k < i; ++k)
        out[k] = buf[i - 1 - k];
    out[i] = 0;
    appendText(dst, cap, out);
}

void appendHex(char *dst, size_t cap, uintptr_t v)
{
    char out[20] = "0x";
    int n = 2;
    bool started = false;
    for (int s = int(sizeof v * 8) - 4; s >= 0; s -= 4) {
        const int d = int((v >> s) & 0xf);
        if (d || started || s == 0) {
            out[n++] = "0123456789abcdef"[d];
            started = true;
        }
    }
    out[n] = 0;
    appendText(dst, cap, out);
}

void sendReply(const wire::Reply &r) { ::send(wire::kControlFd, &r, sizeof r, MSG_NOSIGNAL); }

// "after an allocation of 12288 MiB was refused at the memory limit of 1024 MiB"
void appendRefusal(wire::Reply &r)
{
    const int64_t refused = g_refusedBytes.load();
    if (refused <= 0)
        return;
    r.code = 2;
    appendText(r.text, sizeof r.text, r.text[0] ? " after an allocation of " : "after an allocation of ");
    appendNumber(r.text, sizeof r.text, refused >> 20);
    appendText(r.text, sizeof r.text, " MiB was refused at the memory limit of ");
    appendNumber(r.text, sizeof r.text, g_memoryBytes >> 20);
    appendText(r.text, sizeof r.text, " MiB");
}

[[noreturn]] void setupFailed(const char *what)
{
    wire::Reply r{};
    r.magic = wire::kMagic;
    r.type = wire::Type::Setup;
    appendText(r.text, sizeof r.text, "kforge-cpu-runner: ");
    appendText(r.text, sizeof r.text, what);
    if (errno) {
        appendText(r.text, sizeof r.text, ": ");
        appendText(r.text, sizeof r.text, std::strerror(errno));
    }
    sendReply(r);
    appendText(r.text, sizeof r.text, "\n");
    if (::write(2, r.text, std::strlen(r.text)) < 0) { // bwrap's stderr until fds 0-2 go to /dev/null
    }
    ::_exit(3);
}

// ---- The system calls the filter refuses, by name for the report ----

struct Forbidden {
    int nr;
    const char *name;
};
#define KF_SYS(n) {__NR_##n, #n}
const Forbidden kForbidden[] = {
    KF_SYS(socket), KF_SYS(socketpair), KF_SYS(connect), KF_SYS(bind), KF_SYS(listen), KF_SYS(accept), KF_SYS(accept4),
    KF_SYS(execve), KF_SYS(execveat), KF_SYS(fork), KF_SYS(vfork), KF_SYS(ptrace), KF_SYS(mount), KF_SYS(umount2),
    KF_SYS(pivot_root), KF_SYS(chroot), KF_SYS(unshare), KF_SYS(setns), KF_SYS(bpf), KF_SYS(perf_event_open), KF_SYS(keyctl),
    KF_SYS(add_key), KF_SYS(request_key), KF_SYS(process_vm_readv), KF_SYS(process_vm_writev), KF_SYS(memfd_create),
    KF_SYS(shmget), KF_SYS(shmat), KF_SYS(io_uring_setup), KF_SYS(io_uring_enter), KF_SYS(io_uring_register),
    KF_SYS(userfaultfd), KF_SYS(pidfd_open), KF_SYS(pidfd_send_signal), KF_SYS(pidfd_getfd), KF_SYS(kcmp),
    KF_SYS(open_by_handle_at), KF_SYS(name_to_handle_at), KF_SYS(init_module), KF_SYS(finit_module), KF_SYS(delete_module),
    KF_SYS(kexec_load), KF_SYS(kexec_file_load), KF_SYS(reboot), KF_SYS(swapon), KF_SYS(swapoff), KF_SYS(acct),
    KF_SYS(quotactl), KF_SYS(iopl), KF_SYS(ioperm), KF_SYS(tkill), KF_SYS(rt_sigqueueinfo), KF_SYS(rt_tgsigqueueinfo),
    KF_SYS(fanotify_init), KF_SYS(open_tree), KF_SYS(move_mount), KF_SYS(fsopen), KF_SYS(fsconfig), KF_SYS(fsmount),
    KF_SYS(fspick), KF_SYS(mount_setattr), KF_SYS(settimeofday), KF_SYS(clock_settime), KF_SYS(clock_adjtime),
    KF_SYS(adjtimex), KF_SYS(sethostname), KF_SYS(setdomainname), KF_SYS(migrate_pages), KF_SYS(move_pages),
#ifdef __NR_memfd_secret
    KF_SYS(memfd_secret),
#endif
};
#undef KF_SYS

const char *syscallName(int nr)
{
    switch (nr) {
    case __NR_clone: return "clone";
    case __NR_mmap: return "mmap";
    case __NR_kill: return "kill";
    case __NR_tgkill: return "tgkill";
    case __NR_prlimit64: return "prlimit64";
    case __NR_rt_sigaction: return "rt_sigaction";
    default: break;
    }
    for (const auto &f : kForbidden)
        if (f.nr == nr)
            return f.name;
    return "unknown";
}

const char *syscallWhy(int nr)
{
    switch (nr) {
    case __NR_clone: return " without CLONE_THREAD: a new process";
    case __NR_mmap: return " with MAP_SHARED: shared mappings escape the memory limit";
    case __NR_kill:
    case __NR_tgkill: return ": a signal to another process";
    case __NR_prlimit64: return ": the limits of another process";
    case __NR_rt_sigaction: return ": a handler for SIGSYS, which reports these";
    default: return "";
    }
}

void onSigsys(int, siginfo_t *info, void *)
{
    wire::Reply r{};
    r.magic = wire::kMagic;
    r.type = wire::Type::Violation;
    r.code = 1;
    r.rc = info->si_syscall;
    appendText(r.text, sizeof r.text, "forbidden system call ");
    appendText(r.text, sizeof r.text, syscallName(info->si_syscall));
    appendText(r.text, sizeof r.text, " (");
    appendNumber(r.text, sizeof r.text, info->si_syscall);
    appendText(r.text, sizeof r.text, ")");
    appendText(r.text, sizeof r.text, syscallWhy(info->si_syscall));
    sendReply(r);
    ::_exit(97);
}

void onLimit(int sig, siginfo_t *, void *)
{
    wire::Reply r{};
    r.magic = wire::kMagic;
    r.type = wire::Type::Violation;
    if (sig == SIGXCPU) {
        r.code = 3;
        appendText(r.text, sizeof r.text, "CPU time limit of ");
        appendNumber(r.text, sizeof r.text, g_cpuSeconds);
        appendText(r.text, sizeof r.text, " s");
    } else {
        r.code = 4;
        appendText(r.text, sizeof r.text, "file size limit of ");
        appendNumber(r.text, sizeof r.text, g_fileBytes >> 20);
        appendText(r.text, sizeof r.text, " MiB (a write to its scratch folder)");
    }
    sendReply(r);
    ::_exit(98);
}

void onFatal(int sig, siginfo_t *info, void *)
{
    wire::Reply r{};
    r.magic = wire::kMagic;
    r.type = wire::Type::Fatal;
    r.rc = sig;
    appendText(r.text, sizeof r.text, "signal SIG");
    appendText(r.text, sizeof r.text, ::sigabbrev_np(sig) ? ::sigabbrev_np(sig) : "?");
    appendText(r.text, sizeof r.text, " (");
    appendNumber(r.text, sizeof r.text, sig);
    appendText(r.text, sizeof r.text, ")");
    if (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL) {
        appendText(r.text, sizeof r.text, " at address ");
        appendHex(r.text, sizeof r.text, reinterpret_cast<uintptr_t>(info->si_addr));
    }
    const int phase = g_phase.load();
    appendText(r.text, sizeof r.text,
               phase == 0 ? " while loading the candidate" : phase == 1 ? " in kforge_entry" : " in a thread the candidate left running");
    appendRefusal(r);
    sendReply(r);
    ::raise(sig); // SA_RESETHAND: the default action, once this handler returns
}

void installHandlers()
{
    static char altStack[64 * 1024]; // a stack overflow still gets its report
    stack_t ss{};
    ss.ss_sp = altStack;
    ss.ss_size = sizeof altStack;
    ::sigaltstack(&ss, nullptr);
    struct sigaction sa {};
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sa.sa_sigaction = onSigsys;
    ::sigaction(SIGSYS, &sa, nullptr);
    sa.sa_sigaction = onLimit;
    ::sigaction(SIGXCPU, &sa, nullptr);
    ::sigaction(SIGXFSZ, &sa, nullptr);
    sa.sa_flags |= SA_RESETHAND;
    sa.sa_sigaction = onFatal;
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP})
        ::sigaction(sig, &sa, nullptr);
}

void setLimit(int resource, rlim_t soft, rlim_t hard, const char *name)
{
    const struct rlimit rl = {soft, hard};
    if (::setrlimit(resource, &rl) != 0)
        setupFailed(name);
}

void confine()
{
    setLimit(RLIMIT_DATA, rlim_t(g_memoryBytes), rlim_t(g_memoryBytes), "setrlimit(RLIMIT_DATA)");
    setLimit(RLIMIT_CPU, rlim_t(g_cpuSeconds), rlim_t(g_cpuSeconds) + 2, "setrlimit(RLIMIT_CPU)");
    setLimit(RLIMIT_FSIZE, rlim_t(g_fileBytes), rlim_t(g_fileBytes), "setrlimit(RLIMIT_FSIZE)");
    setLimit(RLIMIT_CORE, 0, 0, "setrlimit(RLIMIT_CORE)");
    setLimit(RLIMIT_MEMLOCK, 0, 0, "setrlimit(RLIMIT_MEMLOCK)");
    setLimit(RLIMIT_MSGQUEUE, 0, 0, "setrlimit(RLIMIT_MSGQUEUE)");
    setLimit(RLIMIT_NOFILE, 256, 256, "setrlimit(RLIMIT_NOFILE)");

    scmp_filter_ctx ctx = ::seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx)
        setupFailed("seccomp_init");
    int rc = 0;
    for (const auto &f : kForbidden)
        rc |= ::seccomp_rule_add(ctx, SCMP_ACT_TRAP, f.nr, 0);
    // Threads yes, processes no. clone3's flags sit behind a pointer the filter cannot read: ENOSYS
    // sends glibc back to clone.
    rc |= ::seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
    rc |= ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    // No shared mappings: RLIMIT_DATA counts private memory only.
    rc |= ::seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(mmap), 1, SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_SHARED, MAP_SHARED));
    // Signals and limits for itself only.
    const pid_t self = ::getpid();
    rc |= ::seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(kill), 1, SCMP_A0(SCMP_CMP_NE, scmp_datum_t(self), 0));
    rc |= ::seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_NE, scmp_datum_t(self), 0));
    rc |= ::seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(prlimit64), 1, SCMP_A0(SCMP_CMP_NE, 0, 0));
    // The SIGSYS handler is the runner's: a candidate's own would swallow the reports.
    rc |= ::seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(rt_sigaction), 1, SCMP_A0(SCMP_CMP_EQ, SIGSYS, 0));
    if (rc != 0) {
        errno = -rc;
        setupFailed("seccomp_rule_add");
    }
    if ((rc = ::seccomp_load(ctx)) != 0) {
        errno = -rc;
        setupFailed("seccomp_load");
    }
    ::seccomp_release(ctx);
}

int64_t argValue(int argc, char **argv, const char *name)
{
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], name) == 0)
            return std::strtoll(argv[i + 1], nullptr, 10);
    errno = EINVAL;
    setupFailed(name);
}

} // namespace

// Allocations pass through here (the runner exports them, so the candidate's malloc and operator new
// resolve to them): a refusal by the memory limit is remembered for the report.
extern "C" {
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);
void *__libc_valloc(size_t);
void *__libc_pvalloc(size_t);
}

namespace {
inline void *noted(void *p, size_t bytes)
{
    if (!p && bytes > 0) {
        int64_t prev = g_refusedBytes.load(std::memory_order_relaxed);
        while (int64_t(bytes) > prev && !g_refusedBytes.compare_exchange_weak(prev, int64_t(bytes))) {
        }
    }
    return p;
}
} // namespace

extern "C" {
void *malloc(size_t n) noexcept { return noted(__libc_malloc(n), n); }
void *calloc(size_t n, size_t m) noexcept { return noted(__libc_calloc(n, m), n * m); }
void *realloc(void *p, size_t n) noexcept { return noted(__libc_realloc(p, n), n); }
void *memalign(size_t a, size_t n) noexcept { return noted(__libc_memalign(a, n), n); }
void *aligned_alloc(size_t a, size_t n) noexcept { return noted(__libc_memalign(a, n), n); }
void *valloc(size_t n) noexcept { return noted(__libc_valloc(n), n); }
void *pvalloc(size_t n) noexcept { return noted(__libc_pvalloc(n), n); }
int posix_memalign(void **out, size_t a, size_t n) noexcept
{
    if (a < sizeof(void *) || (a & (a - 1)))
        return EINVAL;
    void *p = noted(__libc_memalign(a, n), n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

// The candidate's view of the card's shape symbols for the call in progress (protocol/cpu_abi.h).
int64_t kforge_symbol(const char *name)
{
    if (!name)
        return -1;
    for (int i = 0; i < g_nSymbols; ++i)
        if (std::strncmp(g_symbols[i].name, name, sizeof g_symbols[i].name) == 0)
            return g_symbols[i].value;
    return -1;
}
}

extern char **environ;

int main(int argc, char **argv)
{
    // bwrap's --clearenv still leaves PWD behind; the candidate's environment, and the copy of it the
    // kernel shows in /proc/self/environ, are to be empty.
    if (environ && environ[0]) {
        char *none[] = {nullptr};
        ::execve("/proc/self/exe", argv, none);
        setupFailed("re-executing with an empty environment");
    }
    installHandlers();
    if (argc == 2 && std::strcmp(argv[1], "--probe") == 0) { // can this host confine a candidate?
        g_memoryBytes = int64_t(1) << 30;
        g_cpuSeconds = 10;
        g_fileBytes = 1 << 20;
        confine();
        return 0;
    }
    const int64_t arenaBytes = argValue(argc, argv, "--arena-bytes");
    g_memoryBytes = argValue(argc, argv, "--memory-bytes");
    g_cpuSeconds = int(argValue(argc, argv, "--cpu-seconds"));
    g_fileBytes = argValue(argc, argv, "--file-bytes");

    struct stat st {};
    if (::fstat(wire::kArenaFd, &st) != 0 || st.st_size < arenaBytes)
        setupFailed("the arena descriptor");
    void *mapped = ::mmap(nullptr, size_t(arenaBytes), PROT_READ | PROT_WRITE, MAP_SHARED, wire::kArenaFd, 0);
    if (mapped == MAP_FAILED)
        setupFailed("mmap of the arena");
    auto *arena = static_cast<unsigned char *>(mapped);

    // Descriptors: 0-2 on /dev/null, the control socket, nothing else.
    const int devnull = ::open("/dev/null", O_RDWR);
    if (devnull < 0 || ::dup2(devnull, 0) < 0 || ::dup2(devnull, 1) < 0 || ::dup2(devnull, 2) < 0)
        setupFailed("/dev/null");
    ::close(wire::kArenaFd);
    if (::close_range(wire::kControlFd + 1, UINT_MAX, 0) != 0)
        setupFailed("close_range");

    confine();

    void *lib = ::dlopen("/kforge/candidate.so", RTLD_NOW | RTLD_LOCAL);
    wire::Reply ready{};
    ready.magic = wire::kMagic;
    if (!lib) {
        ready.type = wire::Type::LoadError;
        appendText(ready.text, sizeof ready.text, "the compiled candidate could not be loaded: ");
        appendText(ready.text, sizeof ready.text, ::dlerror());
        sendReply(ready);
        return 2;
    }
    auto entry = reinterpret_cast<EntryFn>(::dlsym(lib, "kforge_entry"));
    if (!entry) {
        ready.type = wire::Type::LoadError;
        ready.code = 1;
        appendText(ready.text, sizeof ready.text, "the candidate has no extern \"C\" kforge_entry entry point");
        sendReply(ready);
        return 2;
    }
    ready.type = wire::Type::Ready;
    g_phase = 2;
    sendReply(ready);

    static wire::Request req;
    for (;;) {
        const ssize_t n = ::recv(wire::kControlFd, &req, sizeof req, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || req.magic != wire::kMagic || req.type == wire::Type::Quit)
            return 0;
        if (size_t(n) != sizeof req || req.nIn < 0 || req.nOut < 0 || req.nIn + req.nOut > wire::kMaxTensors || req.nSym < 0 ||
            req.nSym > wire::kMaxSymbols) {
            errno = EPROTO;
            setupFailed("a malformed request");
        }
        if (req.type == wire::Type::Ping) {
            wire::Reply pong{};
            pong.magic = wire::kMagic;
            pong.type = wire::Type::Result;
            pong.seq = req.seq;
            sendReply(pong);
            continue;
        }
        KfTensor ts[wire::kMaxTensors];
        for (int i = 0; i < req.nIn + req.nOut; ++i) {
            const auto &d = req.tensors[i];
            if (d.offset > uint64_t(arenaBytes) || d.bytes > uint64_t(arenaBytes) - d.offset || d.ndim < 0 || d.ndim > wire::kMaxDims) {
                errno = ERANGE;
                setupFailed("a tensor outside the arena");
            }
            ts[i] = KfTensor{arena + d.offset, d.dtype, d.ndim, {}, {}};
            std::memcpy(ts[i].sizes, d.sizes, sizeof d.sizes);
            std::memcpy(ts[i].strides, d.strides, sizeof d.strides);
        }
        g_nSymbols = req.nSym;
        std::memcpy(g_symbols, req.symbols, sizeof g_symbols);
        for (auto &s : g_symbols)
            s.name[sizeof s.name - 1] = 0;
        g_refusedBytes = 0;

        wire::Reply r{};
        r.magic = wire::kMagic;
        r.type = wire::Type::Result;
        r.seq = req.seq;
        g_phase = 1;
        const auto t0 = std::chrono::steady_clock::now();
        try {
            r.rc = entry(ts, req.nIn, ts + req.nIn, req.nOut);
        } catch (const std::bad_alloc &) {
            r.type = wire::Type::Violation;
            r.code = 2;
            appendText(r.text, sizeof r.text, "memory limit of ");
            appendNumber(r.text, sizeof r.text, g_memoryBytes >> 20);
            appendText(r.text, sizeof r.text, " MiB: an allocation failed (std::bad_alloc)");
            const int64_t refused = g_refusedBytes.load();
            if (refused > 0) {
                appendText(r.text, sizeof r.text, ", ");
                appendNumber(r.text, sizeof r.text, refused >> 20);
                appendText(r.text, sizeof r.text, " MiB asked");
            }
            sendReply(r);
            return 96;
        } catch (const std::exception &e) {
            r.rc = -2;
            appendText(r.text, sizeof r.text, "(it threw: ");
            appendText(r.text, sizeof r.text, e.what());
            appendText(r.text, sizeof r.text, ")");
        } catch (...) {
            r.rc = -2;
            appendText(r.text, sizeof r.text, "(it threw an exception)");
        }
        r.micros = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        g_phase = 2;
        if (r.rc != 0)
            appendRefusal(r);
        sendReply(r);
    }
}
