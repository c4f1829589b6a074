// Does its work in a static constructor, before kforge_entry is ever called: opens a socket when it
// is loaded.
#include <sys/socket.h>
static int g_socket = socket(AF_INET, SOCK_STREAM, 0);
extern "C" int kforge_entry(const kf_tensor *, int, kf_tensor *, int)
{
    return g_socket >= 0 ? 1 : 0;
}
