// Tries to leave a file outside its scratch folder: at the root, in /usr, next to its own object, in
// /dev/shm, in /root and in the host's /tmp (the jail's /tmp is private). Returns how many it created
// anywhere but its own /tmp: 0 when the sandbox held.
#include <fcntl.h>
#include <unistd.h>
extern "C" int kforge_entry(const kf_tensor *, int, kf_tensor *, int)
{
    const char *outside[] = {"/kforge-escape.txt", "/usr/kforge-escape.txt", "/kforge/kforge-escape.txt",
                             "/dev/shm/kforge-escape.txt", "/root/kforge-escape.txt", "/etc/kforge-escape.txt",
                             "/proc/kforge-escape.txt"};
    int created = 0;
    for (const char *p : outside) {
        const int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            created += write(fd, "escaped\n", 8) == 8;
            close(fd);
        }
    }
    // Its own scratch works, and stays in the jail.
    const int fd = open("/tmp/kforge-escape.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return 100;
    const bool wrote = write(fd, "scratch\n", 8) == 8;
    close(fd);
    return wrote ? created : 101;
}
