#pragma once
// Thin RAII over the SQLite C API: a prepared statement that binds by position and throws Error with
// SQLite's own message on failure.
#include <cstdint>
#include <optional>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace kforge::sql {

class Statement {
public:
    Statement(sqlite3 *db, const char *sql);
    ~Statement();
    Statement(const Statement &) = delete;
    Statement &operator=(const Statement &) = delete;

    Statement &bind(int i, int64_t v);
    Statement &bind(int i, int v) { return bind(i, int64_t(v)); }
    Statement &bind(int i, double v);
    Statement &bind(int i, const std::string &v);
    Statement &bind(int i, const char *v) { return bind(i, std::string(v)); }
    Statement &bind(int i, std::optional<int64_t> v);
    Statement &bindNull(int i);

    bool step(); // true while a row is available
    void run();  // step to completion
    void reset();

    int64_t integer(int col) const;
    double real(int col) const;
    std::string text(int col) const;
    bool isNull(int col) const;

private:
    sqlite3 *m_db;
    sqlite3_stmt *m_stmt = nullptr;
};

void exec(sqlite3 *db, const std::string &sql);
int64_t pragmaInt(sqlite3 *db, const char *pragma);

} // namespace kforge::sql
