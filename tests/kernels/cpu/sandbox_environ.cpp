// Looks for OPENAI_API_KEY and any environment at all: its own, /proc/self/environ and that of the
// jail's pid 1. Returns 100 if it found the key, else the number of variables: 0 when the sandbox held.
#include <initializer_list>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>
extern char **environ;
extern "C" int kforge_entry(const kf_tensor *, int, kf_tensor *, int)
{
    if (std::getenv("OPENAI_API_KEY"))
        return 100;
    int vars = 0;
    for (char **e = environ; e && *e; ++e)
        ++vars;
    for (const char *p : {"/proc/self/environ", "/proc/1/environ", "/proc/2/environ"}) {
        const int fd = open(p, O_RDONLY);
        if (fd < 0)
            continue;
        char buf[65536];
        const ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = 0;
        for (ssize_t i = 0; i < n; i += ssize_t(std::strlen(buf + i)) + 1) {
            if (std::strncmp(buf + i, "OPENAI_API_KEY", 14) == 0)
                return 100;
            ++vars;
        }
    }
    return vars;
}
