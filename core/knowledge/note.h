#pragma once
// A knowledge note: a Markdown file with a small front matter between two `---` lines.
//
//   ---
//   kind: hardware            hardware | family | lesson
//   title: NVIDIA H200
//   arch: sm_90               architectures it applies to (comma separated; `any`, `cpu`)
//   device: H200              hardware: names a worker's reported device name contains
//   family: any               operator families (softmax, norm, reduction, scan, elementwise, matmul, any)
//   bottleneck: memory_bound  memory_bound, compute_bound, latency, occupancy, register_spills, any
//   ---
//   Markdown body.
//
// Lessons add what a search found: signature, speedup, roofline, template, point, backend, session,
// node; the body holds the winning source in a fenced block (and a CUDA launch plan in a json block).
// Shipped notes (resources/knowledge) and the user's (knowledge::userDir()) share the format; a note
// that breaks it is refused with its file and line.
#include <string>
#include <vector>

namespace kforge::knowledge {

enum class Kind { Hardware, Family, Lesson };
std::string kindName(Kind k);

struct Note {
    std::string source; // "file" or "builtin:name.md": where errors and passages point
    Kind kind = Kind::Family;
    std::string title;
    std::vector<std::string> archs;       // "sm_90", "any", "cpu"
    std::vector<std::string> devices;     // hardware notes: device names ("H200")
    std::vector<std::string> families;    // "softmax", "norm", ..., "any"
    std::vector<std::string> bottlenecks; // "memory_bound", ..., "any"
    // Lessons: the operator signature (knowledge::operatorSignature) and what won.
    std::string signature;
    double speedup = 0;
    double roofline = 0; // fraction of the roofline the winner reached; 0: unknown
    std::string templateId;
    std::string point; // the template's parameters as one line of JSON
    std::string backend;
    std::string session;
    long long node = 0;
    std::string body;

    bool appliesToArch(const std::string &arch) const;
    bool appliesToFamily(const std::vector<std::string> &families) const;
    bool appliesToBottleneck(const std::string &bottleneck) const;
};

// The bottleneck words notes may use.
const std::vector<std::string> &bottleneckNames();

// Parses one note. Throws Error "SOURCE:LINE: what is wrong" for a malformed one.
Note parseNote(const std::string &text, const std::string &source);
// The note as a file parseNote reads back (lessons are written this way).
std::string formatNote(const Note &note);

} // namespace kforge::knowledge
