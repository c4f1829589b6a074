#pragma once
// The session file's schema and its migrations. PRAGMA application_id marks a file as a kforge
// session; PRAGMA user_version is its schema version. Migration N takes version N-1 to N.
#include <string>
#include <vector>

struct sqlite3;

namespace kforge::schema {

inline constexpr int kApplicationId = 0x6b66726b; // "kfrk"
inline constexpr int kCurrentVersion = 8;

const std::vector<std::string> &migrations(); // index 0 takes version 0 to 1
// Applies migrations from the file's current version up to `target` in one transaction.
void migrate(sqlite3 *db, int target = kCurrentVersion);

} // namespace kforge::schema
