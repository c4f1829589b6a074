// Forks a daemon that starts its own session and outlives the call, sleeping for an hour.
#include <unistd.h>
extern "C" int kforge_entry(const kf_tensor *, int, kf_tensor *, int)
{
    const pid_t pid = fork();
    if (pid == 0) {
        setsid();
        if (fork() == 0) {
            for (;;)
                sleep(3600);
        }
        _exit(0);
    }
    return pid > 0 ? 0 : 1;
}
