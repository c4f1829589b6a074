#pragma once
// Kernel source text of the templates, kept as real files under resources/templates/ (.cu, .cuh for
// CUDA, .cpp, .h for the CPU backend) and compiled into the engine at build time, so the C++ of a
// template describes it (space, validity, launch plan) and holds no kernel text, and an installed kforge
// needs no resources folder.
#include <string>
#include <vector>

namespace kforge {

// The text of resources/templates/<fileName> (e.g. "pointwise.cu"); throws Error for a name that is
// not among the embedded files.
const std::string &templateSource(const std::string &fileName);
// Every embedded file's name, sorted.
std::vector<std::string> templateSourceNames();

} // namespace kforge
