-- The change log (every write records what it changed, in the same
-- transaction) and the runners, the processes that run background tasks.

-- +goose Up
CREATE TABLE changes (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    kind       TEXT NOT NULL,
    session_id TEXT NOT NULL DEFAULT '',
    task_id    TEXT NOT NULL DEFAULT '',
    data       TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL
);

CREATE TABLE runners (
    id         TEXT PRIMARY KEY,
    host       TEXT NOT NULL,
    pid        INTEGER NOT NULL,
    started_at INTEGER NOT NULL,
    seen_at    INTEGER NOT NULL
);

ALTER TABLE tasks ADD COLUMN runner_id TEXT NOT NULL DEFAULT '';
CREATE INDEX tasks_active ON tasks (status) WHERE status IN ('queued', 'running', 'resumed');

-- +goose Down
DROP INDEX tasks_active;
ALTER TABLE tasks DROP COLUMN runner_id;
DROP TABLE runners;
DROP TABLE changes;
