// Replaces itself with a shell that would write a marker file.
#include <unistd.h>
extern "C" int kforge_entry(const kf_tensor *, int, kf_tensor *, int)
{
    char *argv[] = {(char *)"/bin/sh", (char *)"-c", (char *)"echo pwned > /tmp/kforge-pwned", nullptr};
    execv("/bin/sh", argv);
    return 1;
}
