#pragma once
// SHA-256 (FIPS 180-4), for compile cache entries (an object is used only when its bytes still hash to
// what the compiler side recorded when it built it) and kernel packs (every file is checked on load).
#include <string>
#include <string_view>

namespace kforge {

std::string sha256Hex(std::string_view data);
// The hash of a file's contents; empty when it cannot be read.
std::string sha256File(const std::string &path);

} // namespace kforge
