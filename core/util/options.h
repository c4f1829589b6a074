#pragma once
// Command-line options as the tools read them: a map from option to its text.
#include <map>
#include <string>

namespace kforge {

// An option's whole number within [min, max], `def` when it is absent; an Error naming the option and
// its range for anything else (empty, not a number, trailing characters, out of range).
int wholeNumber(const std::map<std::string, std::string> &options, const std::string &key, int def, int min, int max);

} // namespace kforge
