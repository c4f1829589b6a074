#include "store/sqlite_util.h"

#include <sqlite3.h>

#include "util/error.h"

namespace kforge::sql {

static void check(sqlite3 *db, int rc, const char *what)
{
    if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE)
        throw Error(std::string(what) + ": " + sqlite3_errmsg(db));
}

Statement::Statement(sqlite3 *db, const char *sql) : m_db(db)
{
    check(db, sqlite3_prepare_v2(db, sql, -1, &m_stmt, nullptr), "cannot prepare statement");
}

Statement::~Statement()
{
    sqlite3_finalize(m_stmt);
}

Statement &Statement::bind(int i, int64_t v)
{
    check(m_db, sqlite3_bind_int64(m_stmt, i, v), "bind");
    return *this;
}

Statement &Statement::bind(int i, double v)
{
    check(m_db, sqlite3_bind_double(m_stmt, i, v), "bind");
    return *this;
}

Statement &Statement::bind(int i, const std::string &v)
{
    check(m_db, sqlite3_bind_text(m_stmt, i, v.data(), int(v.size()), SQLITE_TRANSIENT), "bind");
    return *this;
}

Statement &Statement::bind(int i, std::optional<int64_t> v)
{
    return v ? bind(i, *v) : bindNull(i);
}

Statement &Statement::bindNull(int i)
{
    check(m_db, sqlite3_bind_null(m_stmt, i), "bind");
    return *this;
}

bool Statement::step()
{
    const int rc = sqlite3_step(m_stmt);
    check(m_db, rc, "query failed");
    return rc == SQLITE_ROW;
}

void Statement::run()
{
    while (step()) {
    }
}

void Statement::reset()
{
    sqlite3_reset(m_stmt);
    sqlite3_clear_bindings(m_stmt);
}

int64_t Statement::integer(int col) const
{
    return sqlite3_column_int64(m_stmt, col);
}

double Statement::real(int col) const
{
    return sqlite3_column_double(m_stmt, col);
}

std::string Statement::text(int col) const
{
    const auto *p = sqlite3_column_text(m_stmt, col);
    return p ? std::string(reinterpret_cast<const char *>(p), size_t(sqlite3_column_bytes(m_stmt, col))) : std::string();
}

bool Statement::isNull(int col) const
{
    return sqlite3_column_type(m_stmt, col) == SQLITE_NULL;
}

void exec(sqlite3 *db, const std::string &sql)
{
    char *err = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
        std::string msg = err ? err : sqlite3_errmsg(db);
        sqlite3_free(err);
        throw Error(msg);
    }
}

int64_t pragmaInt(sqlite3 *db, const char *pragma)
{
    Statement s(db, (std::string("PRAGMA ") + pragma).c_str());
    return s.step() ? s.integer(0) : 0;
}

} // namespace kforge::sql
