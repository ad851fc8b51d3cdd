-- Turn leases: one writer at a time per session (a turn, or an append or
-- clear outside one), held by a runner and released with it. And where a
-- session came from (a way in, a task, a fork, an import). As in
-- sqlite/migrations/00004_turn_leases.sql.
--
-- A lease has no foreign key to its session, as in SQLite: a lease left
-- on a deleted session is harmless and goes with its runner.

-- +goose Up
CREATE TABLE turn_leases (
    session_id  TEXT COLLATE "C" PRIMARY KEY,
    runner_id   TEXT COLLATE "C" NOT NULL,
    holder      BYTEA NOT NULL DEFAULT '',
    task_id     TEXT COLLATE "C" NOT NULL DEFAULT '',
    acquired_at BIGINT NOT NULL
);
CREATE INDEX turn_leases_runner ON turn_leases (runner_id);
ALTER TABLE sessions ADD COLUMN origin BYTEA NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE sessions DROP COLUMN origin;
DROP TABLE turn_leases;
