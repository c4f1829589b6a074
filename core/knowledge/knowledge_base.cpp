#include "knowledge/knowledge_base.h"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "knowledge/signature.h"
#include "store/sqlite_util.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace kforge::knowledge {

namespace {

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

bool has(const std::vector<std::string> &v, const std::string &s)
{
    return std::find(v.begin(), v.end(), s) != v.end();
}

std::string words(const std::vector<std::string> &v)
{
    std::string out;
    for (const auto &s : v)
        out += " " + s;
    return out;
}

// Free text as an FTS5 query: every word quoted (so no word is read as an operator), any may match.
std::string matchExpression(const std::string &text)
{
    std::set<std::string> seen;
    std::string out, word;
    auto flush = [&] {
        if (word.size() > 1 && seen.insert(word).second)
            out += (out.empty() ? "\"" : " OR \"") + word + "\"";
        word.clear();
    };
    for (char c : text) {
        if (std::isalnum((unsigned char)c))
            word += char(std::tolower((unsigned char)c));
        else
            flush();
    }
    flush();
    return out;
}

bool deviceMatches(const Note &n, const std::string &deviceName)
{
    if (deviceName.empty())
        return false;
    const auto name = lower(deviceName);
    for (const auto &d : n.devices) {
        const auto want = lower(d);
        // A whole word of the name: "H100" is not "H1000", and "NVIDIA H200 NVL" is an H200.
        for (size_t at = name.find(want); at != std::string::npos; at = name.find(want, at + 1)) {
            const bool startOk = at == 0 || !std::isalnum((unsigned char)name[at - 1]);
            const size_t end = at + want.size();
            const bool endOk = end == name.size() || !std::isalnum((unsigned char)name[end]);
            if (startOk && endOk)
                return true;
        }
    }
    return false;
}

} // namespace

struct KnowledgeBase::Index {
    sqlite3 *db = nullptr;
    ~Index()
    {
        if (db)
            sqlite3_close(db);
    }
};

std::string userDir()
{
    if (const char *d = std::getenv("KFORGE_KNOWLEDGE_DIR"); d && *d)
        return d;
    if (const char *x = std::getenv("XDG_DATA_HOME"); x && *x)
        return std::string(x) + "/kforge/knowledge";
    if (const char *h = std::getenv("HOME"); h && *h)
        return std::string(h) + "/.local/share/kforge/knowledge";
    return (fs::temp_directory_path() / "kforge-knowledge").string();
}

bool KnowledgeBase::fts5Available(std::string *why)
{
    sqlite3 *db = nullptr;
    bool ok = sqlite3_open(":memory:", &db) == SQLITE_OK;
    char *err = nullptr;
    if (ok && sqlite3_exec(db, "CREATE VIRTUAL TABLE probe USING fts5(text)", nullptr, nullptr, &err) != SQLITE_OK) {
        ok = false;
        if (why)
            *why = std::string("SQLite ") + sqlite3_libversion() + " has no FTS5: " + (err ? err : "unknown error");
    }
    sqlite3_free(err);
    sqlite3_close(db);
    return ok;
}

KnowledgeBase::KnowledgeBase() : m_index(std::make_unique<Index>())
{
    if (sqlite3_open(":memory:", &m_index->db) != SQLITE_OK)
        throw Error("cannot open an in-memory SQLite database for the knowledge base");
    std::string why;
    if (!fts5Available(&why))
        throw Error("the knowledge base needs SQLite's FTS5: " + why);
    sql::exec(m_index->db, "CREATE VIRTUAL TABLE notes USING fts5(title, body, tags, tokenize = 'porter unicode61')");
}

KnowledgeBase::~KnowledgeBase() = default;
KnowledgeBase::KnowledgeBase(KnowledgeBase &&) noexcept = default;
KnowledgeBase &KnowledgeBase::operator=(KnowledgeBase &&) noexcept = default;

KnowledgeBase KnowledgeBase::load(const std::string &userFolder)
{
    KnowledgeBase kb;
    for (const auto &b : builtinNotes())
        kb.add(b.text, std::string("builtin:") + b.name);
    if (!userFolder.empty())
        kb.addFolder(userFolder);
    return kb;
}

void KnowledgeBase::add(const std::string &text, const std::string &source)
{
    add(parseNote(text, source));
}

void KnowledgeBase::add(Note note)
{
    sql::Statement st(m_index->db, "INSERT INTO notes(rowid, title, body, tags) VALUES (?1, ?2, ?3, ?4)");
    const std::string tags = kindName(note.kind) + words(note.archs) + words(note.devices) + words(note.families) + words(note.bottlenecks)
                             + " " + note.templateId;
    st.bind(1, int64_t(m_notes.size() + 1)).bind(2, note.title).bind(3, note.body).bind(4, tags).run();
    m_notes.push_back(std::move(note));
}

void KnowledgeBase::addFolder(const std::string &dir)
{
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return;
    std::vector<fs::path> files;
    for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file(ec) && it->path().extension() == ".md")
            files.push_back(it->path());
    if (ec)
        m_problems.push_back(dir + ": " + ec.message());
    std::sort(files.begin(), files.end());
    for (const auto &f : files) {
        std::ifstream in(f, std::ios::binary);
        std::stringstream text;
        text << in.rdbuf();
        if (!in) {
            m_problems.push_back(f.string() + ": cannot be read");
            continue;
        }
        try {
            add(text.str(), f.string());
        } catch (const Error &e) {
            m_problems.push_back(e.what());
        }
    }
}

std::vector<Passage> KnowledgeBase::retrieve(const Query &q) const
{
    // bm25 over the free text (SQLite's is lower for better matches); notes it misses score 0 there.
    std::map<int64_t, double> text;
    const auto expr = matchExpression(q.text + " " + q.bottleneck + words(q.families));
    if (!expr.empty()) {
        sql::Statement st(m_index->db, "SELECT rowid, bm25(notes, 4.0, 1.0, 2.0) FROM notes WHERE notes MATCH ?1");
        st.bind(1, expr);
        while (st.step())
            text[st.integer(0)] = -st.real(1);
    }
    std::vector<Passage> out;
    for (size_t i = 0; i < m_notes.size(); ++i) {
        const Note &n = m_notes[i];
        if (!q.kinds.empty() && std::find(q.kinds.begin(), q.kinds.end(), n.kind) == q.kinds.end())
            continue;
        double score = 0;
        const bool sameSignature = n.kind == Kind::Lesson && !q.signature.empty() && n.signature == q.signature;
        if (n.kind == Kind::Hardware) {
            if (q.arch.empty() || !has(n.archs, q.arch))
                continue;
            score = deviceMatches(n, q.deviceName) ? 1000 : 500;
        } else {
            if (!n.appliesToArch(q.arch) || (q.arch.empty() && !has(n.archs, "any")))
                continue;
            if (!sameSignature && !n.appliesToFamily(q.families))
                continue;
            if (!n.appliesToBottleneck(q.bottleneck))
                continue;
            score = sameSignature ? 800 + n.speedup : 100;
            if (!has(n.families, "any"))
                score += 40; // a note for this family over one for every family
            if (!q.arch.empty() && has(n.archs, q.arch))
                score += 30; // for this architecture over one for any
            if (!q.bottleneck.empty() && has(n.bottlenecks, q.bottleneck))
                score += 20;
        }
        if (auto it = text.find(int64_t(i + 1)); it != text.end())
            score += std::min(it->second, 19.0);
        out.push_back({&n, score});
    }
    std::stable_sort(out.begin(), out.end(), [](const Passage &a, const Passage &b) { return a.score > b.score; });
    if (out.size() > q.limit)
        out.resize(q.limit);
    return out;
}

const Note *KnowledgeBase::hardwareNote(const std::string &arch, const std::string &deviceName) const
{
    Query q;
    q.arch = arch;
    q.deviceName = deviceName;
    q.kinds = {Kind::Hardware};
    q.limit = 1;
    const auto r = retrieve(q);
    return r.empty() ? nullptr : r.front().note;
}

const Note *KnowledgeBase::lesson(const std::string &signature, const std::string &arch) const
{
    const Note *best = nullptr;
    for (const auto &n : m_notes)
        if (n.kind == Kind::Lesson && n.signature == signature && has(n.archs, arch) && (!best || n.speedup > best->speedup))
            best = &n;
    return best;
}

const Note *KnowledgeBase::nearestLesson(const std::string &signature, const std::string &arch, double *distance) const
{
    if (const Note *own = lesson(signature, arch)) {
        if (distance)
            *distance = 0;
        return own;
    }
    const auto wanted = splitSignature(signature);
    if (!wanted)
        return nullptr;
    const Note *best = nullptr;
    double bestDistance = std::numeric_limits<double>::infinity();
    for (const auto &n : m_notes) {
        if (n.kind != Kind::Lesson || !has(n.archs, arch))
            continue;
        const auto parts = splitSignature(n.signature);
        if (!parts || parts->op != wanted->op)
            continue;
        const double d = shapeDistance(parts->shape, wanted->shape);
        if (!std::isfinite(d))
            continue;
        if (!best || d < bestDistance - 1e-12 || (std::abs(d - bestDistance) <= 1e-12 && n.speedup > best->speedup)) {
            best = &n;
            bestDistance = d;
        }
    }
    if (best && distance)
        *distance = bestDistance;
    return best;
}

} // namespace kforge::knowledge
