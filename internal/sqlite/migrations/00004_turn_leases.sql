-- Turn leases: one writer at a time per session (a turn, or an append or
-- clear outside one), held by a runner and released with it. And where a
-- session came from (a way in, a task, a fork, an import).

-- +goose Up
CREATE TABLE turn_leases (
    session_id  TEXT PRIMARY KEY,
    runner_id   TEXT NOT NULL,
    holder      TEXT NOT NULL DEFAULT '',
    task_id     TEXT NOT NULL DEFAULT '',
    acquired_at INTEGER NOT NULL
);
CREATE INDEX turn_leases_runner ON turn_leases (runner_id);
ALTER TABLE sessions ADD COLUMN origin TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE sessions DROP COLUMN origin;
DROP TABLE turn_leases;
