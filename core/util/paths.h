#pragma once
#include <string>

namespace kforge {

// The folder holding the running executable, so kforge and kforge-cli find the kforge-worker built
// beside them.
std::string executableDir();
// "<executableDir>/kforge-worker", unless KFORGE_WORKER names another command line.
std::string defaultWorkerCommand();
// The compile cache for one backend: $KFORGE_CACHE_DIR, else ~/.cache/kforge, else the temporary folder;
// with `sub` appended ("cpu", "cuda"). Created if missing.
std::string cacheDir(const std::string &sub);
// GPUs on this host as nvidia-smi lists them (honouring CUDA_VISIBLE_DEVICES); 0 without a driver.
int localGpuCount();

} // namespace kforge
