#include "pack/pack_reader.h"

#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "util/error.h"
#include "util/sha256.h"

namespace kforge::pack {

namespace {

std::string joinPath(const std::string &dir, const std::string &rel)
{
    return dir.empty() || dir.back() == '/' ? dir + rel : dir + "/" + rel;
}

void checkFile(const std::string &dir, const PackFile &f, const std::string &kernel)
{
    const auto path = joinPath(dir, f.path);
    struct stat st{};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        throw Error("pack " + dir + " is refused: kernel " + kernel + ": file " + f.path + " is missing");
    const auto got = sha256File(path);
    if (got.empty())
        throw Error("pack " + dir + " is refused: kernel " + kernel + ": file " + f.path + " cannot be read");
    if (got != f.sha256)
        throw Error("pack " + dir + " is refused: kernel " + kernel + ": file " + f.path + " has SHA-256 " + got + ", the manifest expects "
                    + f.sha256);
}

std::string archList(const PackKernel &k)
{
    std::string s;
    for (const auto &b : k.binaries)
        s += (s.empty() ? "" : ", ") + b.arch;
    return s;
}

} // namespace

PackManifest readManifest(const std::string &dir)
{
    const auto path = joinPath(dir, kManifestName);
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error("pack " + dir + " is refused: it has no " + std::string(kManifestName));
    std::stringstream buf;
    buf << in.rdbuf();
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(buf.str());
    } catch (const nlohmann::json::exception &e) {
        throw Error("pack " + dir + " is refused: manifest.json is not valid JSON (" + std::string(e.what()) + ")");
    }
    try {
        return manifestFromJson(j);
    } catch (const Error &e) {
        throw Error("pack " + dir + " is refused: " + e.what());
    }
}

PackManifest readPack(const std::string &dir, const DeviceArchs &device)
{
    auto m = readManifest(dir);
    if (m.kernels.empty())
        throw Error("pack " + dir + " is refused: it holds no kernels");
    for (const auto &k : m.kernels) {
        checkFile(dir, k.source, k.key);
        for (const auto &b : k.binaries)
            checkFile(dir, b.file, k.key);
        if (k.backend == "cpu") {
            if (!k.binaryFor("cpu"))
                throw Error("pack " + dir + " is refused: CPU kernel " + k.key + " has no cpu binary (it has " + archList(k) + ")");
        } else if (device.cuda.empty()) {
            throw Error("pack " + dir + " is refused: kernel " + k.key + " is a CUDA kernel (built for " + archList(k)
                        + ") and this process has no CUDA device");
        } else if (!k.binaryFor(device.cuda)) {
            throw Error("pack " + dir + " is refused: kernel " + k.key + " was built for " + archList(k) + "; this device is " + device.cuda);
        }
    }
    return m;
}

} // namespace kforge::pack
