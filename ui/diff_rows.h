#pragma once
// The side-by-side diff of two sources as rows, apart from any widget so it can be tested as a plain
// function (Qt Creator's diff editor works the same way).
//
// dtl finds the line diff. Each run of removed and added lines between common ones is paired line by
// line: the i-th removed line sits beside the i-th added one, and whatever one side has more faces a
// padding row on the other. A paired line is diffed again by characters, and the changed byte ranges
// of each side are kept so the view can mark exactly what differs. Lines are split on '\n'; a final
// newline does not make an extra empty line.
#include <string>
#include <string_view>
#include <vector>

namespace kforge::ui {

struct CharRange {
    int start = 0; // byte offset in the line
    int end = 0;   // one past the last changed byte
    bool operator==(const CharRange &) const = default;
};

struct DiffLine {
    int number = 0; // 1-based line number in its source; 0 for a padding row
    std::string text;
    std::vector<CharRange> changed; // empty for a whole added or removed line: all of it changed
    bool isPadding() const { return number == 0; }
};

struct RowData {
    DiffLine left;
    DiffLine right;
    bool equal = false; // the same text on both sides
};

struct DiffRows {
    std::vector<RowData> rows;
    int removed = 0;  // rows whose left line has no partner
    int added = 0;    // rows whose right line has no partner
    int modified = 0; // rows with different lines on both sides
    bool identical() const { return removed == 0 && added == 0 && modified == 0; }
};

// Deterministic; O((N + M) D) in the lines, then per paired line in its characters.
DiffRows diffRows(std::string_view left, std::string_view right);

// The changed ranges of two single lines against each other (used for paired rows; exposed for tests).
void diffCharacters(const std::string &left, const std::string &right, std::vector<CharRange> &leftChanged,
                    std::vector<CharRange> &rightChanged);

} // namespace kforge::ui
