#include "util/paths.h"

#include <cstdlib>
#include <filesystem>

namespace kforge {

std::string executableDir()
{
    std::error_code ec;
    auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string(".") : p.parent_path().string();
}

std::string defaultWorkerCommand()
{
    if (const char *env = std::getenv("KFORGE_WORKER"); env && *env)
        return env;
    return "'" + executableDir() + "/kforge-worker'";
}

} // namespace kforge
