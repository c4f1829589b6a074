#include "store/schema.h"

#include "store/sqlite_util.h"
#include "util/error.h"

namespace kforge::schema {

const std::vector<std::string> &migrations()
{
    static const std::vector<std::string> steps = {
        // 1: sessions, operators, the search tree and everything an inspector shows about a node.
        R"sql(
        CREATE TABLE sessions(
            id INTEGER PRIMARY KEY, name TEXT NOT NULL, workload TEXT NOT NULL, backend TEXT NOT NULL,
            proposer TEXT NOT NULL, options_json TEXT NOT NULL DEFAULT '{}',
            status TEXT NOT NULL DEFAULT 'running', created_at REAL NOT NULL);
        CREATE TABLE operators(
            id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL REFERENCES sessions(id),
            key TEXT NOT NULL, card_json TEXT NOT NULL, UNIQUE(session_id, key));
        CREATE TABLE nodes(
            id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL REFERENCES sessions(id),
            operator_id INTEGER NOT NULL REFERENCES operators(id), parent_id INTEGER REFERENCES nodes(id),
            status TEXT NOT NULL, template TEXT NOT NULL DEFAULT '', params_json TEXT NOT NULL DEFAULT '{}',
            speedup REAL NOT NULL DEFAULT 0, reward REAL NOT NULL DEFAULT 0, noise REAL NOT NULL DEFAULT 0,
            roofline_us REAL NOT NULL DEFAULT 0, reasons_json TEXT NOT NULL DEFAULT '[]',
            summary TEXT NOT NULL DEFAULT '', worker TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL, finished_at REAL);
        CREATE TABLE edges(
            child_id INTEGER PRIMARY KEY REFERENCES nodes(id), parent_id INTEGER NOT NULL REFERENCES nodes(id),
            kind TEXT NOT NULL);
        CREATE TABLE sources(
            node_id INTEGER PRIMARY KEY REFERENCES nodes(id), backend TEXT NOT NULL, code TEXT NOT NULL,
            launch_json TEXT NOT NULL DEFAULT '{}');
        CREATE TABLE compile_logs(
            node_id INTEGER PRIMARY KEY REFERENCES nodes(id), ok INTEGER NOT NULL, cached INTEGER NOT NULL,
            millis REAL NOT NULL, target TEXT NOT NULL, log TEXT NOT NULL);
        CREATE TABLE verifications(
            id INTEGER PRIMARY KEY, node_id INTEGER NOT NULL REFERENCES nodes(id), trial INTEGER NOT NULL,
            label TEXT NOT NULL, shape TEXT NOT NULL, passed INTEGER NOT NULL, max_abs_error REAL NOT NULL,
            max_rel_error REAL NOT NULL, failure TEXT NOT NULL, detail TEXT NOT NULL);
        CREATE TABLE timing_samples(
            node_id INTEGER NOT NULL REFERENCES nodes(id), role TEXT NOT NULL, idx INTEGER NOT NULL,
            micros REAL NOT NULL, PRIMARY KEY(node_id, role, idx));
        CREATE TABLE decisions(
            id INTEGER PRIMARY KEY, node_id INTEGER NOT NULL REFERENCES nodes(id),
            decision TEXT NOT NULL CHECK(decision IN ('accept','reject')), actor TEXT NOT NULL,
            reason TEXT NOT NULL, created_at REAL NOT NULL);
        )sql",
        // 2: what happened to workers during a session (crashes, timeouts, restarts), and an index
        // for loading a session's tree.
        R"sql(
        CREATE TABLE worker_events(
            id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL REFERENCES sessions(id),
            slot INTEGER NOT NULL, kind TEXT NOT NULL, detail TEXT NOT NULL, created_at REAL NOT NULL);
        CREATE INDEX nodes_by_session ON nodes(session_id, id);
        )sql",
        // 3: profiler reports per node (Nsight Compute's throughput, occupancy and stall reasons).
        R"sql(
        CREATE TABLE profiles(
            id INTEGER PRIMARY KEY, node_id INTEGER NOT NULL REFERENCES nodes(id), tool TEXT NOT NULL,
            report_json TEXT NOT NULL, created_at REAL NOT NULL);
        )sql",
        // 4: each trial's error against the float64 reference in units of the error bound (the
        // candidate's, ATen's own, what was allowed), and the harness's notes on a verdict.
        R"sql(
        ALTER TABLE verifications ADD COLUMN candidate_error REAL NOT NULL DEFAULT 0;
        ALTER TABLE verifications ADD COLUMN aten_error REAL NOT NULL DEFAULT 0;
        ALTER TABLE verifications ADD COLUMN allowed_error REAL NOT NULL DEFAULT 0;
        ALTER TABLE compile_logs ADD COLUMN notes_json TEXT NOT NULL DEFAULT '[]';
        )sql",
        // 5: every LLM call: the exact request and the whole response (redacted), its purpose, tokens,
        // cost and outcome; on the node its reply became (none when no candidate came of it).
        R"sql(
        CREATE TABLE llm_calls(
            id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL REFERENCES sessions(id),
            operator_id INTEGER REFERENCES operators(id), node_id INTEGER REFERENCES nodes(id),
            provider TEXT NOT NULL, model TEXT NOT NULL, purpose TEXT NOT NULL, url TEXT NOT NULL,
            request TEXT NOT NULL, response TEXT NOT NULL, reply_text TEXT NOT NULL, outcome TEXT NOT NULL,
            error TEXT NOT NULL DEFAULT '', input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0,
            priced INTEGER NOT NULL DEFAULT 1, attempts INTEGER NOT NULL DEFAULT 0,
            millis REAL NOT NULL DEFAULT 0, created_at REAL NOT NULL);
        CREATE INDEX llm_calls_by_node ON llm_calls(node_id);
        CREATE INDEX llm_calls_by_session ON llm_calls(session_id, id);
        CREATE INDEX llm_calls_by_operator ON llm_calls(operator_id);
        )sql",
        // 6: the scores of the selection that made each node (why its parent was expanded), as JSON.
        R"sql(
        ALTER TABLE nodes ADD COLUMN selection_json TEXT NOT NULL DEFAULT '{}';
        )sql",
        // 7: a dead end the search stopped selecting, with the reason ('' when not pruned).
        R"sql(
        ALTER TABLE nodes ADD COLUMN pruned TEXT NOT NULL DEFAULT '';
        )sql",
        // 8: the device a node was evaluated on, both its sides ('' before: one device per session then).
        R"sql(
        ALTER TABLE nodes ADD COLUMN device TEXT NOT NULL DEFAULT '';
        )sql",
    };
    return steps;
}

void migrate(sqlite3 *db, int target)
{
    const int from = int(sql::pragmaInt(db, "user_version"));
    if (from >= target)
        return;
    sql::exec(db, "BEGIN IMMEDIATE");
    try {
        for (int v = from; v < target; ++v)
            sql::exec(db, migrations().at(size_t(v)));
        sql::exec(db, "PRAGMA application_id = " + std::to_string(kApplicationId));
        sql::exec(db, "PRAGMA user_version = " + std::to_string(target));
        sql::exec(db, "COMMIT");
    } catch (const Error &e) {
        sql::exec(db, "ROLLBACK");
        throw Error("cannot upgrade session schema from version " + std::to_string(from) + " to "
                    + std::to_string(target) + ": " + e.what());
    }
}

} // namespace kforge::schema
