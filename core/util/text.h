#pragma once
// Bytes that have to cross a text boundary: JSON (which must be valid UTF-8), a message shown to a
// user, a log line quoted in a verdict.
#include <optional>
#include <string>
#include <string_view>

namespace kforge {

// Exactly what a JSON encoder accepts: no overlong forms, no surrogates, nothing past U+10FFFF.
bool isValidUtf8(std::string_view text);

// `text` made safe to show and to store as JSON: valid UTF-8 is kept, each byte that is not (and each
// control character other than newline and tab) becomes \xNN. At most `maxBytes` of the input are
// used; " [... N more bytes]" says how much was left out.
std::string printable(std::string_view text, size_t maxBytes = std::string_view::npos);

// The last `maxBytes` of `text`, starting on a character boundary (and on a line where one is near).
std::string_view tailOf(std::string_view text, size_t maxBytes);

// The first `n` lines of `text`, with "..." on a line of its own when more followed (a compile log
// quoted in a verdict's reason).
std::string firstLines(const std::string &text, int n);

// A number through printf's `format` ("%.3g" by default), for messages and prompts.
std::string formatNumber(double v, const char *format = "%.3g");

std::string base64Encode(std::string_view bytes);
// nullopt when `text` is not base64 (standard alphabet, padding optional, no whitespace).
std::optional<std::string> base64Decode(std::string_view text);

} // namespace kforge
