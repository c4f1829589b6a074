#include "ui/diff_rows.h"

#include <dtl/dtl.hpp>

namespace kforge::ui {

namespace {

std::vector<std::string> splitLines(std::string_view text)
{
    std::vector<std::string> lines;
    size_t start = 0;
    while (start < text.size()) {
        const size_t end = text.find('\n', start);
        if (end == std::string_view::npos) {
            lines.emplace_back(text.substr(start));
            break;
        }
        lines.emplace_back(text.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

void addRange(std::vector<CharRange> &ranges, int at)
{
    if (!ranges.empty() && ranges.back().end == at)
        ++ranges.back().end;
    else
        ranges.push_back({at, at + 1});
}

} // namespace

void diffCharacters(const std::string &left, const std::string &right, std::vector<CharRange> &leftChanged,
                    std::vector<CharRange> &rightChanged)
{
    leftChanged.clear();
    rightChanged.clear();
    dtl::Diff<char, std::string> diff(left, right);
    diff.compose();
    for (const auto &[ch, info] : diff.getSes().getSequence()) {
        if (info.type == dtl::SES_DELETE)
            addRange(leftChanged, int(info.beforeIdx - 1));
        else if (info.type == dtl::SES_ADD)
            addRange(rightChanged, int(info.afterIdx - 1));
    }
}

DiffRows diffRows(std::string_view leftText, std::string_view rightText)
{
    const auto left = splitLines(leftText);
    const auto right = splitLines(rightText);
    DiffRows out;
    out.rows.reserve(std::max(left.size(), right.size()));

    std::vector<long long> removed, added; // the current run of changes, as 1-based line numbers
    auto flush = [&] {
        const size_t paired = std::min(removed.size(), added.size());
        for (size_t i = 0; i < std::max(removed.size(), added.size()); ++i) {
            RowData row;
            if (i < removed.size())
                row.left = {int(removed[i]), left[size_t(removed[i] - 1)], {}};
            if (i < added.size())
                row.right = {int(added[i]), right[size_t(added[i] - 1)], {}};
            if (i < paired) {
                diffCharacters(row.left.text, row.right.text, row.left.changed, row.right.changed);
                ++out.modified;
            } else if (i < removed.size()) {
                ++out.removed;
            } else {
                ++out.added;
            }
            out.rows.push_back(std::move(row));
        }
        removed.clear();
        added.clear();
    };

    dtl::Diff<std::string, std::vector<std::string>> diff(left, right, /*deletesFirst=*/true);
    diff.compose();
    for (const auto &[line, info] : diff.getSes().getSequence()) {
        switch (info.type) {
        case dtl::SES_DELETE:
            removed.push_back(info.beforeIdx);
            break;
        case dtl::SES_ADD:
            added.push_back(info.afterIdx);
            break;
        default:
            flush();
            out.rows.push_back({{int(info.beforeIdx), line, {}}, {int(info.afterIdx), line, {}}, true});
        }
    }
    flush();
    return out;
}

} // namespace kforge::ui
