#pragma once
// Whole files: read at once, and written so that no reader and no kill midway ever sees half of one.
#include <string>
#include <string_view>

namespace kforge {

// The bytes of `path`; empty when it cannot be read (a cache entry that is not there).
std::string readWholeFile(const std::string &path);

// Writes `bytes` to `path` whole or not at all: to a private name beside it (the process and thread in
// the name, so writers sharing a folder never collide), synced, then renamed over `path`. On failure
// the old file is untouched, the private file removed, and Error says which path and why. POSIX calls,
// not std::filesystem (see removeTree in paths.h: the worker links libtorch).
void writeFileAtomically(const std::string &path, std::string_view bytes);

// The same for a cache entry, which whoever gets there first may write: not synced (an entry lost to a
// crash of the machine is computed again), and false instead of an Error.
bool tryWriteFileAtomically(const std::string &path, std::string_view bytes) noexcept;

} // namespace kforge
