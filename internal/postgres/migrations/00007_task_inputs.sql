-- What tasks ask their users (sa.InputRequest), and the answers; whether
-- a task's launcher can answer (sa.Task.MayAsk). As in
-- sqlite/migrations/00010_task_inputs.sql; text the user or a client
-- gives is BYTEA, as elsewhere, so that any string can be stored.

-- +goose Up
ALTER TABLE tasks ADD COLUMN may_ask BOOLEAN NOT NULL DEFAULT FALSE;

CREATE TABLE task_inputs (
    task_id     TEXT COLLATE "C" NOT NULL,
    key         BYTEA NOT NULL,
    message     BYTEA NOT NULL,
    request     BYTEA NOT NULL,
    response    BYTEA,
    created_at  BIGINT NOT NULL,
    answered_at BIGINT,
    task_run    INTEGER NOT NULL,
    PRIMARY KEY (task_id, key)
);

-- +goose Down
DROP TABLE task_inputs;
ALTER TABLE tasks DROP COLUMN may_ask;
