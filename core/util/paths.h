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
// Removes a folder and everything in it (POSIX calls, not std::filesystem: libtorch 2.x exports
// std::filesystem symbols of its own that the worker, linked with exported symbols, binds to, and its
// remove_all calls through a null pointer there). Silent about what is already gone.
void removeTree(const std::string &dir);
bool isDir(const std::string &path);
bool isFile(const std::string &path); // a regular file
// `path` against the working directory when it is relative.
std::string absolutePath(const std::string &path);
// `path` without a trailing ".json": the stem a workload's companion files are named after.
std::string withoutJson(std::string path);
// GPUs on this host as nvidia-smi lists them (honouring CUDA_VISIBLE_DEVICES); 0 without a driver.
int localGpuCount();

} // namespace kforge
