// Hides its own time from the runner's clock: it rewrites every loaded library's GOT entry for
// clock_gettime to a function that subtracts the time it wants hidden, then waits 20 ms without
// spending CPU (as a kernel whose work runs on other threads would), so neither the runner's clock
// nor the CPU time its thread counted sees the call. Only the worker's own round trip does.
#include <cstdint>
#include <cstring>
#include <ctime>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

namespace {
using ClockFn = int (*)(clockid_t, timespec *);
ClockFn g_real = nullptr;
int64_t g_hiddenNs = 0;

int fakeClock(clockid_t id, timespec *ts)
{
    const int r = g_real(id, ts);
    const int64_t ns = int64_t(ts->tv_sec) * 1000000000 + ts->tv_nsec - g_hiddenNs;
    ts->tv_sec = ns / 1000000000;
    ts->tv_nsec = ns % 1000000000;
    return r;
}

void patch(uintptr_t slot)
{
    const long page = sysconf(_SC_PAGESIZE);
    const uintptr_t start = slot & ~uintptr_t(page - 1);
    if (mprotect(reinterpret_cast<void *>(start), size_t(page) * 2, PROT_READ | PROT_WRITE) != 0)
        return;
    auto *p = reinterpret_cast<ClockFn *>(slot);
    if (*p != reinterpret_cast<ClockFn>(&fakeClock)) {
        if (!g_real)
            g_real = *p;
        *p = &fakeClock;
    }
}

int hook(dl_phdr_info *info, size_t, void *)
{
    const ElfW(Dyn) *dyn = nullptr;
    for (int i = 0; i < info->dlpi_phnum; ++i)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = reinterpret_cast<const ElfW(Dyn) *>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn)
        return 0;
    const ElfW(Sym) *symtab = nullptr;
    const char *strtab = nullptr;
    const ElfW(Rela) *rela[2] = {nullptr, nullptr};
    size_t relaBytes[2] = {0, 0};
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; ++d) {
        switch (d->d_tag) {
        case DT_SYMTAB: symtab = reinterpret_cast<const ElfW(Sym) *>(d->d_un.d_ptr); break;
        case DT_STRTAB: strtab = reinterpret_cast<const char *>(d->d_un.d_ptr); break;
        case DT_JMPREL: rela[0] = reinterpret_cast<const ElfW(Rela) *>(d->d_un.d_ptr); break;
        case DT_PLTRELSZ: relaBytes[0] = d->d_un.d_val; break;
        case DT_RELA: rela[1] = reinterpret_cast<const ElfW(Rela) *>(d->d_un.d_ptr); break;
        case DT_RELASZ: relaBytes[1] = d->d_un.d_val; break;
        }
    }
    if (!symtab || !strtab)
        return 0;
    for (int k = 0; k < 2; ++k)
        for (size_t i = 0; rela[k] && i < relaBytes[k] / sizeof(ElfW(Rela)); ++i) {
            const auto sym = ELF64_R_SYM(rela[k][i].r_info);
            if (sym && std::strcmp(strtab + symtab[sym].st_name, "clock_gettime") == 0)
                patch(info->dlpi_addr + rela[k][i].r_offset);
        }
    return 0;
}
} // namespace

extern "C" int kforge_entry(const kf_tensor *, int, kf_tensor *, int)
{
    if (!g_real)
        dl_iterate_phdr(hook, nullptr);
    timespec wait{0, 20 * 1000 * 1000};
    while (nanosleep(&wait, &wait) != 0) {
    }
    g_hiddenNs += 20 * 1000 * 1000;
    return 0;
}
