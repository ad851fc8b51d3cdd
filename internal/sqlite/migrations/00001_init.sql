-- The schema keeps to SQL that PostgreSQL reads the same way: integer
-- timestamps (Unix nanoseconds, UTC), 0/1 flags, JSON stored as text,
-- store-wide increasing message ids. A PostgreSQL store uses BIGINT
-- identity columns and BOOLEAN where this file uses INTEGER.

-- +goose Up
CREATE TABLE sessions (
    id              TEXT PRIMARY KEY,
    -- A fork: the parent, and the parent's last own message at fork time
    -- (0 when the parent had none). Both set, or both NULL for a root.
    parent_id       TEXT REFERENCES sessions (id),
    fork_message_id INTEGER,
    agent           TEXT NOT NULL DEFAULT '',
    model           TEXT NOT NULL DEFAULT '',
    title           TEXT NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    -- Set when deleted but still needed by sessions forked from it.
    deleted_at      INTEGER,
    CHECK ((parent_id IS NULL) = (fork_message_id IS NULL)),
    CHECK (fork_message_id IS NULL OR fork_message_id >= 0)
);
CREATE INDEX sessions_parent ON sessions (parent_id);
CREATE INDEX sessions_created ON sessions (created_at);

CREATE TABLE messages (
    -- AUTOINCREMENT: ids are never reused, even after the newest rows of a
    -- deleted session are reclaimed, so they order everything store-wide.
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id         TEXT NOT NULL REFERENCES sessions (id),
    role               TEXT NOT NULL,
    kind               TEXT NOT NULL,
    parts              TEXT NOT NULL,
    summary            INTEGER NOT NULL DEFAULT 0,
    model              TEXT NOT NULL DEFAULT '',
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    created_at         INTEGER NOT NULL
);
CREATE INDEX messages_session ON messages (session_id, id);
-- Replay looks for the latest clear below a bound in each ancestor.
CREATE INDEX messages_clear ON messages (session_id, id) WHERE kind = 'clear';

-- A task's id is its child session's id. There is no foreign key to
-- sessions: the record outlives a deleted session (resuming it then
-- reports the session as expired).
CREATE TABLE tasks (
    id                  TEXT PRIMARY KEY,
    parent_session_id   TEXT NOT NULL,
    parent_message_id   INTEGER NOT NULL DEFAULT 0,
    parent_agent        TEXT NOT NULL DEFAULT '',
    description         TEXT NOT NULL DEFAULT '',
    prompt              TEXT NOT NULL DEFAULT '',
    agent               TEXT NOT NULL DEFAULT '',
    status              TEXT NOT NULL,
    started_at          INTEGER NOT NULL,
    completed_at        INTEGER,
    result_retrieved_at INTEGER,
    result              TEXT NOT NULL DEFAULT '',
    error               TEXT NOT NULL DEFAULT '',
    progress            TEXT NOT NULL DEFAULT '{}',
    batch_id            TEXT NOT NULL DEFAULT '',
    resume_count        INTEGER NOT NULL DEFAULT 0,
    is_forked           INTEGER NOT NULL DEFAULT 0,
    timeout_ms          INTEGER NOT NULL DEFAULT 0,
    cleared_at          INTEGER,
    created_at          INTEGER NOT NULL
);
CREATE INDEX tasks_parent ON tasks (parent_session_id, created_at);
CREATE INDEX tasks_status ON tasks (status);
CREATE INDEX tasks_batch ON tasks (batch_id);

-- +goose Down
DROP TABLE tasks;
DROP TABLE messages;
DROP TABLE sessions;
