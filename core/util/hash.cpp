#include "util/hash.h"

#include <cstdint>
#include <cstdio>

namespace kforge {

std::string contentHash(std::string_view data)
{
    // Two independent FNV-1a 64 lanes (different offset bases) give a 128-bit key.
    uint64_t a = 0xcbf29ce484222325ull;
    uint64_t b = 0x84222325cbf29ce4ull;
    for (unsigned char c : data) {
        a = (a ^ c) * 0x100000001b3ull;
        b = (b ^ uint64_t(c + 0x5bu)) * 0x100000001b3ull;
    }
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", (unsigned long long)a, (unsigned long long)b);
    return buf;
}

} // namespace kforge
