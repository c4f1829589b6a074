// Asks malloc for 12 GB, and refuses the call when it gets nothing (as careful C code would).
#include <cstdlib>
extern "C" int kforge_entry(const kf_tensor *, int, kf_tensor *, int)
{
    char *p = static_cast<char *>(std::malloc(size_t(12) << 30));
    if (!p)
        return 3;
    p[0] = 1;
    std::free(p);
    return 0;
}
