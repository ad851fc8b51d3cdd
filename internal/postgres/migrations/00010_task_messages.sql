-- Messages sent to active tasks (sa.TaskMessage). As in
-- sqlite/migrations/00013_task_messages.sql; text the user or a client
-- gives is BYTEA, as elsewhere, so that any string can be stored.

-- +goose Up
CREATE TABLE task_messages (
    task_id      TEXT COLLATE "C" NOT NULL,
    seq          BIGINT NOT NULL,
    sender       BYTEA NOT NULL,
    body         BYTEA NOT NULL,
    created_at   BIGINT NOT NULL,
    delivered_at BIGINT,
    message_id   BIGINT,
    undelivered  TEXT,
    PRIMARY KEY (task_id, seq)
);

-- +goose Down
DROP TABLE task_messages;
