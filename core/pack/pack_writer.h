#pragma once
// Writes a kernel pack folder: each file as given, its SHA-256 computed from the bytes written, and the
// manifest last, so a folder without manifest.json is never mistaken for a pack.
#include <string>

#include "pack/manifest.h"

namespace kforge::pack {

class PackWriter {
public:
    // Creates `dir` (and its parents); throws Error when it exists and is not empty, or cannot be made.
    explicit PackWriter(std::string dir);
    // Writes bytes to dir/relPath (parents made) and returns its entry. Throws Error when it cannot.
    PackFile add(const std::string &relPath, const std::string &bytes);
    void writeManifest(const PackManifest &m);
    const std::string &dir() const { return m_dir; }

private:
    std::string m_dir;
};

// "2026-12-01T14:00:00Z"
std::string utcTimestamp();

} // namespace kforge::pack
