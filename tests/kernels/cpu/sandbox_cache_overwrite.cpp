// Tries to replace compiled objects: its own (bound at /kforge/candidate.so) and every object in the
// worker's compile cache (the test puts its path in KF_CACHE_DIR), with a copy of itself. Returns how
// many it could open for writing: 0 when the sandbox held.
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <unistd.h>
#ifndef KF_CACHE_DIR
#define KF_CACHE_DIR "/root/.cache/kforge/cpu"
#endif
extern "C" int kforge_entry(const kf_tensor *, int, kf_tensor *, int)
{
    int opened = 0;
    const int self = open("/kforge/candidate.so", O_WRONLY);
    if (self >= 0) {
        ++opened;
        close(self);
    }
    for (const char *dir : {KF_CACHE_DIR, "/root/.cache/kforge/cpu"}) {
        if (DIR *d = opendir(dir)) {
            ++opened; // seeing the cache at all is a breach
            while (dirent *e = readdir(d)) {
                const std::string p = std::string(dir) + "/" + e->d_name;
                const int fd = open(p.c_str(), O_WRONLY | O_TRUNC);
                if (fd >= 0) {
                    ++opened;
                    close(fd);
                }
            }
            closedir(d);
        }
        const int fd = open((std::string(dir) + "/planted.so").c_str(), O_WRONLY | O_CREAT, 0755);
        if (fd >= 0) {
            ++opened;
            close(fd);
        }
    }
    return opened;
}
