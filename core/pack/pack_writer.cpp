#include "pack/pack_writer.h"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fstream>
#include <sys/stat.h>

#include "util/error.h"
#include "util/sha256.h"

namespace kforge::pack {

namespace {

void makeDirs(const std::string &path)
{
    for (size_t pos = 1; pos != std::string::npos;) {
        pos = path.find('/', pos + 1);
        const auto part = path.substr(0, pos);
        if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST)
            throw Error("cannot make the folder " + part + ": " + std::strerror(errno));
    }
}

bool isEmptyDir(const std::string &path)
{
    DIR *d = ::opendir(path.c_str());
    if (!d)
        return false;
    bool empty = true;
    while (const dirent *e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
            empty = false;
    ::closedir(d);
    return empty;
}

} // namespace

PackWriter::PackWriter(std::string dir) : m_dir(std::move(dir))
{
    while (m_dir.size() > 1 && m_dir.back() == '/')
        m_dir.pop_back();
    if (struct stat st{}; ::stat(m_dir.c_str(), &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            throw Error("the pack folder " + m_dir + " is a file: choose a new folder");
        if (!isEmptyDir(m_dir))
            throw Error("the pack folder " + m_dir + " already exists and is not empty: choose a new one");
    }
    makeDirs(m_dir);
}

PackFile PackWriter::add(const std::string &relPath, const std::string &bytes)
{
    const auto path = m_dir + "/" + relPath;
    if (const auto slash = path.rfind('/'); slash != std::string::npos)
        makeDirs(path.substr(0, slash));
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    out.close();
    if (!out)
        throw Error("cannot write " + path);
    return {relPath, sha256Hex(bytes)};
}

void PackWriter::writeManifest(const PackManifest &m)
{
    add(kManifestName, manifestToJson(m).dump(2) + "\n");
}

std::string utcTimestamp()
{
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

} // namespace kforge::pack
