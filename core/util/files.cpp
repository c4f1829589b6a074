#include "util/files.h"

#include "util/error.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <thread>

namespace kforge {

std::string readWholeFile(const std::string &path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return {};
    std::string bytes;
    char buf[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) {
            bytes.append(buf, size_t(n));
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            break;
        }
    }
    ::close(fd);
    return bytes;
}

namespace {

// Empty on success, else why not.
std::string writeWhole(const std::string &path, std::string_view bytes, bool sync)
{
    const auto tmp = path + "." + std::to_string(::getpid()) + "." +
                     std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()) % 1000000) + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return std::strerror(errno);
    std::string why;
    for (size_t done = 0; done < bytes.size() && why.empty();) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n > 0)
            done += size_t(n);
        else if (n < 0 && errno != EINTR)
            why = std::strerror(errno);
    }
    // Synced before the rename, so a crash of the machine cannot leave the new name over empty blocks.
    if (sync && why.empty() && ::fsync(fd) != 0)
        why = std::strerror(errno);
    if (::close(fd) != 0 && why.empty())
        why = std::strerror(errno);
    if (why.empty() && ::rename(tmp.c_str(), path.c_str()) != 0)
        why = std::strerror(errno);
    if (!why.empty())
        ::unlink(tmp.c_str());
    return why;
}

} // namespace

void writeFileAtomically(const std::string &path, std::string_view bytes)
{
    if (const auto why = writeWhole(path, bytes, true); !why.empty())
        throw Error("cannot write " + path + ": " + why);
}

bool tryWriteFileAtomically(const std::string &path, std::string_view bytes) noexcept
{
    try {
        return writeWhole(path, bytes, false).empty();
    } catch (...) { // std::bad_alloc building the name
        return false;
    }
}

} // namespace kforge
