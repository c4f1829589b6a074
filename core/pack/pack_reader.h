#pragma once
// Reading a kernel pack: the manifest is parsed, every file it names must exist and hash to its
// SHA-256, and every kernel must have a binary for the device it is to run on. A pack that fails any
// of these is refused as a whole, with the reason: which file, the expected and the actual hash; which
// kernel, the architectures it was built for and the device's.
//
// POSIX and iostreams only (no std::filesystem): the runtime reads packs inside libtorch 2.x processes,
// whose own std::filesystem symbols a library may bind to (docs/DESIGN.md).
#include <string>

#include "pack/manifest.h"

namespace kforge::pack {

struct DeviceArchs {
    bool cpu = true;       // CPU kernels may run here
    std::string cuda;      // "sm_90"; empty when the process has no CUDA device
};

// Throws Error with the reason the pack is refused.
PackManifest readPack(const std::string &dir, const DeviceArchs &device);

// The manifest alone, checked for its format but not its files (for `kforge-cli show`-like listings).
PackManifest readManifest(const std::string &dir);

} // namespace kforge::pack
