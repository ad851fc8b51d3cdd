-- Messages sent to active tasks (sa.TaskMessage): a message waits while
-- delivered_at and undelivered are both NULL; seq orders a task's
-- messages, and message_id is the session message it was delivered as.

-- +goose Up
CREATE TABLE task_messages (
    task_id      TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    sender       TEXT NOT NULL,
    body         TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    delivered_at INTEGER,
    message_id   INTEGER,
    undelivered  TEXT,
    PRIMARY KEY (task_id, seq)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE task_messages;
