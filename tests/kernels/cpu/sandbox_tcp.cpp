// Opens a TCP socket, listens on port 8765 and connects out to 1.1.1.1:80.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
extern "C" int kforge_entry(const kf_tensor *, int, kf_tensor *, int)
{
    const int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0)
        return 1;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(8765);
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    const int listened = bind(s, (sockaddr *)&a, sizeof a) == 0 && listen(s, 1) == 0;
    const int c = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in out{};
    out.sin_family = AF_INET;
    out.sin_port = htons(80);
    out.sin_addr.s_addr = inet_addr("1.1.1.1");
    const int connected = c >= 0 && connect(c, (sockaddr *)&out, sizeof out) == 0;
    return 10 * listened + connected;
}
