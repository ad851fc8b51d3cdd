-- What a task's ending asks, answered from indexes instead of walking a
-- session's tasks.
--
-- tasks_active_parent: the active tasks of one session, newest first (does
-- the parent still wait for any? which batch does a new task join?).
-- Through tasks_parent that walked all of the session's tasks, ended ones
-- included.
--
-- tasks_batch_state: a batch's tasks by status, so that its counts are read
-- from the index alone. The SQLite store keeps the counts in a table
-- (sqlite/migrations/00007_task_endings.sql); here one row that every
-- ending of a batch updates would be a lock its transactions wait for, on
-- every node, and one more way for two of them to deadlock.

-- +goose Up
CREATE INDEX tasks_active_parent ON tasks (parent_session_id, created_at, id)
WHERE status IN ('queued', 'running', 'resumed');

DROP INDEX tasks_batch;
CREATE INDEX tasks_batch_state ON tasks (batch_id, parent_session_id, status);

-- +goose Down
DROP INDEX tasks_batch_state;
CREATE INDEX tasks_batch ON tasks (batch_id);
DROP INDEX tasks_active_parent;
