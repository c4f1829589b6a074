#pragma once
// Content hashes for caches (compiled candidates keyed by source, options and target). FNV-1a over
// 128 bits is plenty to key a local cache; it is not a security boundary.
#include <string>
#include <string_view>

namespace kforge {

std::string contentHash(std::string_view data);

} // namespace kforge
