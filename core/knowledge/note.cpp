#include "knowledge/note.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <regex>
#include <set>
#include <sstream>

#include "util/error.h"

namespace kforge::knowledge {

namespace {

std::string trim(const std::string &s)
{
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos)
        return {};
    return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

bool contains(const std::vector<std::string> &v, const std::string &s)
{
    return std::find(v.begin(), v.end(), s) != v.end();
}

std::string joined(const std::vector<std::string> &v)
{
    std::string out;
    for (const auto &s : v)
        out += (out.empty() ? "" : ", ") + s;
    return out;
}

std::string number(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

struct Parser {
    const std::string &source;
    [[noreturn]] void fail(int line, const std::string &what) const { throw Error(source + ":" + std::to_string(line) + ": " + what); }

    std::vector<std::string> list(int line, const std::string &key, const std::string &value, const std::regex &item,
                                  const std::string &takes) const
    {
        std::vector<std::string> out;
        std::stringstream in(value);
        for (std::string part; std::getline(in, part, ',');) {
            part = trim(part);
            if (part.empty())
                fail(line, key + " has an empty item in '" + value + "'");
            if (!std::regex_match(part, item))
                fail(line, key + " takes " + takes + ", not '" + part + "'");
            if (!contains(out, part))
                out.push_back(part);
        }
        if (out.empty())
            fail(line, key + " needs a value");
        return out;
    }

    double real(int line, const std::string &key, const std::string &value) const
    {
        double v = 0;
        const auto r = std::from_chars(value.data(), value.data() + value.size(), v);
        if (r.ec != std::errc() || r.ptr != value.data() + value.size() || !(v >= 0))
            fail(line, key + " takes a number of zero or more, not '" + value + "'");
        return v;
    }
};

} // namespace

std::string kindName(Kind k)
{
    switch (k) {
    case Kind::Hardware: return "hardware";
    case Kind::Family: return "family";
    case Kind::Lesson: return "lesson";
    }
    return {};
}

const std::vector<std::string> &bottleneckNames()
{
    static const std::vector<std::string> names{"memory_bound", "compute_bound", "latency", "occupancy", "register_spills", "any"};
    return names;
}

bool Note::appliesToArch(const std::string &arch) const
{
    return arch.empty() || contains(archs, "any") || contains(archs, arch);
}

bool Note::appliesToFamily(const std::vector<std::string> &wanted) const
{
    if (wanted.empty() || contains(families, "any"))
        return true;
    return std::any_of(wanted.begin(), wanted.end(), [&](const std::string &f) { return contains(families, f); });
}

bool Note::appliesToBottleneck(const std::string &bottleneck) const
{
    return bottleneck.empty() || contains(bottlenecks, "any") || contains(bottlenecks, bottleneck);
}

Note parseNote(const std::string &text, const std::string &source)
{
    static const std::regex archRe(R"(sm_[0-9]{2,3}[a-z]?|any|cpu)");
    static const std::regex wordRe(R"([a-z0-9_]+)");
    static const std::regex deviceRe(R"([A-Za-z0-9 ._+-]+)");
    static const std::regex keyRe(R"([a-z_]+)");
    const Parser p{source};
    Note n;
    n.source = source;

    std::vector<std::string> lines;
    {
        std::stringstream in(text);
        for (std::string line; std::getline(in, line);)
            lines.push_back(line.size() && line.back() == '\r' ? line.substr(0, line.size() - 1) : line);
    }
    size_t first = 0;
    if (!lines.empty() && lines[0].rfind("\xEF\xBB\xBF", 0) == 0)
        lines[0] = lines[0].substr(3);
    if (lines.empty() || trim(lines[0]) != "---")
        p.fail(1, "a note starts with a front matter: a line '---', then 'key: value' lines, then '---'");
    std::set<std::string> seen;
    size_t close = 0;
    for (size_t i = first + 1; i < lines.size(); ++i) {
        const int ln = int(i + 1);
        const auto line = trim(lines[i]);
        if (line == "---") {
            close = i;
            break;
        }
        if (line.empty() || line[0] == '#')
            continue;
        const auto colon = line.find(':');
        if (colon == std::string::npos)
            p.fail(ln, "expected 'key: value' in the front matter, not '" + line + "'");
        const auto key = trim(line.substr(0, colon));
        const auto value = trim(line.substr(colon + 1));
        if (!std::regex_match(key, keyRe))
            p.fail(ln, "'" + key + "' is not a front matter key");
        if (!seen.insert(key).second)
            p.fail(ln, key + " is given twice");
        if (value.empty())
            p.fail(ln, key + " needs a value");
        if (key == "kind") {
            if (value == "hardware")
                n.kind = Kind::Hardware;
            else if (value == "family")
                n.kind = Kind::Family;
            else if (value == "lesson")
                n.kind = Kind::Lesson;
            else
                p.fail(ln, "kind takes hardware, family or lesson, not '" + value + "'");
        } else if (key == "title") {
            n.title = value;
        } else if (key == "arch" || key == "archs") {
            n.archs = p.list(ln, key, lower(value), archRe, "architectures such as sm_90, sm_80, cpu or any");
        } else if (key == "device" || key == "devices") {
            n.devices = p.list(ln, key, value, deviceRe, "device names such as H200");
        } else if (key == "family" || key == "families") {
            n.families = p.list(ln, key, lower(value), wordRe, "family names such as softmax, norm or any");
        } else if (key == "bottleneck" || key == "bottlenecks") {
            n.bottlenecks = p.list(ln, key, lower(value), wordRe, joined(bottleneckNames()));
            for (const auto &b : n.bottlenecks)
                if (!contains(bottleneckNames(), b))
                    p.fail(ln, key + " takes " + joined(bottleneckNames()) + ", not '" + b + "'");
        } else if (key == "signature") {
            n.signature = value;
        } else if (key == "speedup") {
            n.speedup = p.real(ln, key, value);
        } else if (key == "roofline") {
            n.roofline = p.real(ln, key, value);
        } else if (key == "template") {
            n.templateId = value;
        } else if (key == "point") {
            n.point = value;
        } else if (key == "backend") {
            n.backend = value;
        } else if (key == "session") {
            n.session = value;
        } else if (key == "node") {
            n.node = (long long)p.real(ln, key, value);
        } else {
            p.fail(ln, "unknown front matter key '" + key
                           + "' (kind, title, arch, device, family, bottleneck; lessons: signature, speedup, roofline, template, point, "
                             "backend, session, node)");
        }
    }
    if (!close)
        p.fail(int(lines.size()), "the front matter that starts on line 1 is not closed by a line '---'");
    if (!seen.count("kind"))
        p.fail(int(close + 1), "the front matter has no kind (hardware, family or lesson)");
    if (n.title.empty())
        p.fail(int(close + 1), "the front matter has no title");
    if (n.archs.empty()) {
        if (n.kind != Kind::Family)
            p.fail(int(close + 1), "a " + kindName(n.kind) + " note names its architecture (arch: sm_90)");
        n.archs = {"any"};
    }
    if (n.kind == Kind::Hardware && contains(n.archs, "any"))
        p.fail(int(close + 1), "a hardware note is for named architectures, not any");
    if (n.kind == Kind::Lesson && n.signature.empty())
        p.fail(int(close + 1), "a lesson names the operator signature it won for (signature: ...)");
    if (n.families.empty())
        n.families = {"any"};
    if (n.bottlenecks.empty())
        n.bottlenecks = {"any"};
    for (size_t i = close + 1; i < lines.size(); ++i)
        n.body += lines[i] + "\n";
    if (trim(n.body).find_first_not_of(" \t\n") == std::string::npos)
        p.fail(int(close + 2), "the note has no text after its front matter");
    while (!n.body.empty() && n.body.front() == '\n')
        n.body.erase(0, 1);
    return n;
}

std::string formatNote(const Note &n)
{
    std::ostringstream o;
    o << "---\nkind: " << kindName(n.kind) << "\ntitle: " << n.title << "\n";
    if (!n.archs.empty())
        o << "arch: " << joined(n.archs) << "\n";
    if (!n.devices.empty())
        o << "device: " << joined(n.devices) << "\n";
    if (!n.families.empty())
        o << "family: " << joined(n.families) << "\n";
    if (!n.bottlenecks.empty())
        o << "bottleneck: " << joined(n.bottlenecks) << "\n";
    if (!n.signature.empty())
        o << "signature: " << n.signature << "\n";
    if (n.speedup > 0)
        o << "speedup: " << number(n.speedup) << "\n";
    if (n.roofline > 0)
        o << "roofline: " << number(n.roofline) << "\n";
    if (!n.templateId.empty())
        o << "template: " << n.templateId << "\n";
    if (!n.point.empty())
        o << "point: " << n.point << "\n";
    if (!n.backend.empty())
        o << "backend: " << n.backend << "\n";
    if (!n.session.empty())
        o << "session: " << n.session << "\n";
    if (n.node)
        o << "node: " << n.node << "\n";
    o << "---\n" << n.body;
    if (n.body.empty() || n.body.back() != '\n')
        o << "\n";
    return o.str();
}

} // namespace kforge::knowledge
