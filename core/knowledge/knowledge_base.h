#pragma once
// The knowledge base: the notes shipped with kforge (resources/knowledge, compiled in) and the user's
// (userDir(): hardware and family notes they add, and the lessons finished searches write), indexed
// in an in-memory SQLite FTS5 table. Retrieval filters by architecture, operator family and the
// parent's bottleneck, and ranks what passes by how specific it is and by bm25 over free text.
// No Qt, no network.
#include <memory>
#include <string>
#include <vector>

#include "knowledge/note.h"

namespace kforge::knowledge {

// $KFORGE_KNOWLEDGE_DIR, else $XDG_DATA_HOME/kforge/knowledge, else ~/.local/share/kforge/knowledge.
std::string userDir();

struct BuiltinNote {
    const char *name; // file name under resources/knowledge
    const char *text;
};
const std::vector<BuiltinNote> &builtinNotes(); // generated from resources/knowledge at build time

struct Query {
    std::string arch;                  // "sm_90", "cpu"; "" matches notes for any architecture only
    std::string deviceName;            // the worker's reported name ("NVIDIA H200"), ranks its note first
    std::vector<std::string> families; // familiesOf(card); empty: every family
    std::string bottleneck;            // the parent's (bottleneckOf); "": no filter
    std::string text;                  // free text, ranked by bm25
    std::string signature;             // lessons for this operator signature rank above other notes
    std::vector<Kind> kinds;           // empty: every kind
    size_t limit = 6;
};

struct Passage {
    const Note *note = nullptr;
    double score = 0;
};

class KnowledgeBase {
public:
    KnowledgeBase(); // empty
    ~KnowledgeBase();
    KnowledgeBase(KnowledgeBase &&) noexcept;
    KnowledgeBase &operator=(KnowledgeBase &&) noexcept;

    // Whether this SQLite has FTS5; `why` gets SQLite's message when not.
    static bool fts5Available(std::string *why = nullptr);
    // The shipped notes and the user folder's. Throws Error when a shipped note is malformed (a build
    // that ships a broken note); a malformed user note is left out and reported by problems().
    static KnowledgeBase load(const std::string &userFolder = userDir());

    // Throws Error (SOURCE:LINE: ...) for a malformed note.
    void add(const std::string &text, const std::string &source);
    void add(Note note);
    // Every *.md under `dir`, in name order; malformed ones go to problems(). A missing folder is empty.
    void addFolder(const std::string &dir);

    const std::vector<Note> &notes() const { return m_notes; }
    const std::vector<std::string> &problems() const { return m_problems; }

    std::vector<Passage> retrieve(const Query &q) const;
    // The hardware note for a device: its named device first, else the first for its architecture.
    const Note *hardwareNote(const std::string &arch, const std::string &deviceName = {}) const;
    // The fastest lesson for this operator signature on this architecture; null when none.
    const Note *lesson(const std::string &signature, const std::string &arch) const;
    // The lesson for this signature, else for the same operator at the nearest other shape
    // (shapeDistance; the faster of equally near ones); `distance` gets 0 for the signature's own.
    // Null when no lesson of the operator on this architecture exists.
    const Note *nearestLesson(const std::string &signature, const std::string &arch, double *distance = nullptr) const;

private:
    struct Index;
    std::vector<Note> m_notes;
    std::vector<std::string> m_problems;
    std::unique_ptr<Index> m_index;
};

} // namespace kforge::knowledge
