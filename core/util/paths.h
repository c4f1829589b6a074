#pragma once
#include <string>

namespace kforge {

// The folder holding the running executable, so kforge and kforge-cli find the kforge-worker built
// beside them.
std::string executableDir();
// "<executableDir>/kforge-worker", unless KFORGE_WORKER names another command line.
std::string defaultWorkerCommand();
// GPUs on this host as nvidia-smi lists them (honouring CUDA_VISIBLE_DEVICES); 0 without a driver.
int localGpuCount();

} // namespace kforge
