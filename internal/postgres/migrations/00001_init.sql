-- The PostgreSQL schema: the same tables as the SQLite store, with the
-- same meaning (see sqlite/migrations), in PostgreSQL's types.
--
-- Timestamps are Unix nanoseconds (BIGINT), as in SQLite, so both stores
-- keep times at the same precision. Free text that comes from users or
-- models (titles, agent and model names, task texts, batch ids) is BYTEA:
-- PostgreSQL's TEXT refuses NUL and invalid UTF-8, which a Go string may
-- hold and SQLite keeps. JSON is TEXT (encoding/json writes valid UTF-8
-- and escapes NUL; JSONB would refuse an escaped NUL). Ids are TEXT in the
-- "C" collation, so prefix ranges compare bytes.
--
-- Message and change ids come from sequences without a per-connection
-- cache (CACHE 1, the default): the store hands them out under a
-- transaction-level advisory lock, so they follow commit order.

-- +goose Up
CREATE SEQUENCE message_ids;
CREATE SEQUENCE change_ids;

CREATE TABLE sessions (
    id              TEXT COLLATE "C" PRIMARY KEY,
    -- A fork: the parent, and the parent's last own message at fork time
    -- (0 when the parent had none). Both set, or both NULL for a root.
    parent_id       TEXT COLLATE "C" REFERENCES sessions (id),
    fork_message_id BIGINT,
    agent           BYTEA NOT NULL DEFAULT '',
    model           BYTEA NOT NULL DEFAULT '',
    title           BYTEA NOT NULL DEFAULT '',
    created_at      BIGINT NOT NULL,
    -- Set when deleted but still needed by sessions forked from it.
    deleted_at      BIGINT,
    CHECK ((parent_id IS NULL) = (fork_message_id IS NULL)),
    CHECK (fork_message_id IS NULL OR fork_message_id >= 0)
);
CREATE INDEX sessions_parent ON sessions (parent_id);
CREATE INDEX sessions_created ON sessions (created_at, id);

CREATE TABLE messages (
    id                 BIGINT PRIMARY KEY DEFAULT nextval('message_ids'),
    session_id         TEXT COLLATE "C" NOT NULL REFERENCES sessions (id),
    role               TEXT NOT NULL,
    kind               TEXT NOT NULL,
    parts              TEXT NOT NULL,
    summary            BOOLEAN NOT NULL DEFAULT FALSE,
    model              BYTEA NOT NULL DEFAULT '',
    input_tokens       BIGINT NOT NULL DEFAULT 0,
    output_tokens      BIGINT NOT NULL DEFAULT 0,
    cache_read_tokens  BIGINT NOT NULL DEFAULT 0,
    cache_write_tokens BIGINT NOT NULL DEFAULT 0,
    created_at         BIGINT NOT NULL
);
CREATE INDEX messages_session ON messages (session_id, id);
-- Replay looks for the latest clear below a bound in each ancestor.
CREATE INDEX messages_clear ON messages (session_id, id) WHERE kind = 'clear';

-- A task's id is its child session's id. There is no foreign key to
-- sessions: the record outlives a deleted session.
CREATE TABLE tasks (
    id                  TEXT COLLATE "C" PRIMARY KEY,
    parent_session_id   TEXT COLLATE "C" NOT NULL,
    parent_message_id   BIGINT NOT NULL DEFAULT 0,
    parent_agent        BYTEA NOT NULL DEFAULT '',
    description         BYTEA NOT NULL DEFAULT '',
    -- The description case-folded (Unicode simple folding) for search.
    description_folded  BYTEA NOT NULL DEFAULT '',
    prompt              BYTEA NOT NULL DEFAULT '',
    agent               BYTEA NOT NULL DEFAULT '',
    status              TEXT NOT NULL,
    started_at          BIGINT NOT NULL,
    completed_at        BIGINT,
    result_retrieved_at BIGINT,
    result              BYTEA NOT NULL DEFAULT '',
    error               BYTEA NOT NULL DEFAULT '',
    progress            TEXT NOT NULL DEFAULT '{}',
    -- progress.tool_calls, for the stats.
    tool_calls          BIGINT NOT NULL DEFAULT 0,
    batch_id            BYTEA NOT NULL DEFAULT '',
    resume_count        INTEGER NOT NULL DEFAULT 0,
    is_forked           BOOLEAN NOT NULL DEFAULT FALSE,
    timeout_ms          BIGINT NOT NULL DEFAULT 0,
    runner_id           TEXT COLLATE "C" NOT NULL DEFAULT '',
    cleared_at          BIGINT,
    created_at          BIGINT NOT NULL
);
CREATE INDEX tasks_parent ON tasks (parent_session_id, created_at);
CREATE INDEX tasks_batch ON tasks (batch_id);
CREATE INDEX tasks_active ON tasks (status) WHERE status IN ('queued', 'running', 'resumed');
CREATE INDEX tasks_created ON tasks (created_at, id);
CREATE INDEX tasks_status_created ON tasks (status, created_at, id);
CREATE INDEX tasks_agent_created ON tasks (agent, created_at, id);

-- The change log: every write records what it changed, in the same
-- transaction.
CREATE TABLE changes (
    id         BIGINT PRIMARY KEY DEFAULT nextval('change_ids'),
    kind       TEXT NOT NULL,
    session_id TEXT COLLATE "C" NOT NULL DEFAULT '',
    task_id    TEXT COLLATE "C" NOT NULL DEFAULT '',
    data       TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL
);

-- The processes that run background tasks.
CREATE TABLE runners (
    id         TEXT COLLATE "C" PRIMARY KEY,
    host       BYTEA NOT NULL,
    pid        INTEGER NOT NULL,
    started_at BIGINT NOT NULL,
    seen_at    BIGINT NOT NULL
);

-- +goose Down
DROP TABLE runners;
DROP TABLE changes;
DROP TABLE tasks;
DROP TABLE messages;
DROP TABLE sessions;
DROP SEQUENCE change_ids;
DROP SEQUENCE message_ids;
