#pragma once
// A model's reply to a candidate: the source from its fenced code block and, for CUDA, the launch plan
// from a /* kforge-launch {...} */ comment in the source or a ```json block. A reply without usable code
// is a failure with a reason, never an exception.
#include <string>
#include <string_view>

#include "protocol/messages.h"

namespace kforge::llm {

struct ParsedReply {
    bool ok = false;
    std::string failure; // "no_code", "no_entry_point", "no_launch_plan", "bad_launch_plan"
    std::string message; // what was wrong, in words a model can act on
    Candidate candidate;
    std::string rationale; // the reply's "Change:" line, else its first line of prose
};

ParsedReply parseReply(std::string_view text, const std::string &backend);

} // namespace kforge::llm
