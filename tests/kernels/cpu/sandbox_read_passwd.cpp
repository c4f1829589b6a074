// Reads /etc/passwd, /etc/shadow, /etc/hostname and a home folder. Returns how many it could open: 0
// when the sandbox held.
#include <initializer_list>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
extern "C" int kforge_entry(const kf_tensor *, int, kf_tensor *, int)
{
    int opened = 0;
    for (const char *p : {"/etc/passwd", "/etc/shadow", "/etc/hostname", "/etc/hosts", "/root/.bashrc", "/root/.ssh/id_rsa"}) {
        const int fd = open(p, O_RDONLY);
        if (fd >= 0) {
            char buf[64];
            opened += read(fd, buf, sizeof buf) > 0;
            close(fd);
        }
    }
    for (const char *d : {"/home", "/root", "/work"})
        if (DIR *dir = opendir(d)) {
            ++opened;
            closedir(dir);
        }
    return opened;
}
