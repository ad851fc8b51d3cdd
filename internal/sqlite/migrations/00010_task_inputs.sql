-- What tasks ask their users (sa.InputRequest), and the answers: a
-- request is outstanding while answered_at is NULL and it was made by its
-- task's current run (task_run is the task's resume_count then: a count,
-- not a time, since the nodes that resume and run a task have clocks of
-- their own). may_ask says whether a task's launcher can
-- answer at all (sa.Task.MayAsk), fixed at launch, so that the node that
-- runs the task knows.

-- +goose Up
ALTER TABLE tasks ADD COLUMN may_ask INTEGER NOT NULL DEFAULT 0;

CREATE TABLE task_inputs (
    task_id     TEXT NOT NULL,
    key         TEXT NOT NULL,
    message     TEXT NOT NULL,
    request     TEXT NOT NULL,
    response    TEXT,
    created_at  INTEGER NOT NULL,
    answered_at INTEGER,
    task_run    INTEGER NOT NULL,
    PRIMARY KEY (task_id, key)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE task_inputs;
ALTER TABLE tasks DROP COLUMN may_ask;
