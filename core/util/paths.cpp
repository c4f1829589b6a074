#include "util/paths.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <ftw.h>
#include <unistd.h>

namespace kforge {

void removeTree(const std::string &dir)
{
    ::nftw(dir.c_str(), [](const char *path, const struct stat *, int type, struct FTW *) {
        return type == FTW_DP ? ::rmdir(path) : ::unlink(path); }, 16, FTW_DEPTH | FTW_PHYS);
}


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

std::string cacheDir(const std::string &sub)
{
    std::string dir;
    if (const char *env = std::getenv("KFORGE_CACHE_DIR"); env && *env)
        dir = env;
    else if (const char *home = std::getenv("HOME"); home && *home)
        dir = std::string(home) + "/.cache/kforge";
    else
        dir = "/tmp/kforge-cache";
    dir += "/" + sub;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    return dir;
}

int localGpuCount()
{
    if (const char *visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible) {
        std::string v = visible;
        if (v.empty() || v == "-1")
            return 0;
        return int(std::count(v.begin(), v.end(), ',')) + 1;
    }
    FILE *p = ::popen("nvidia-smi -L 2>/dev/null", "r");
    if (!p)
        return 0;
    int n = 0;
    char line[512];
    while (std::fgets(line, sizeof line, p))
        if (std::strncmp(line, "GPU ", 4) == 0)
            ++n;
    ::pclose(p);
    return n;
}

bool isDir(const std::string &path)
{
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool isFile(const std::string &path)
{
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string absolutePath(const std::string &path)
{
    if (!path.empty() && path[0] == '/')
        return path;
    char buf[4096];
    return ::getcwd(buf, sizeof buf) ? std::string(buf) + "/" + path : path;
}

std::string withoutJson(std::string path)
{
    if (path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0)
        path.resize(path.size() - 5);
    return path;
}

} // namespace kforge
