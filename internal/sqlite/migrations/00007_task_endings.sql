-- What a task's ending asks, answered without walking a session's tasks.
--
-- tasks_active_parent: the active tasks of one session, newest first (does
-- the parent still wait for any? which batch does a new task join?).
-- Through tasks_parent that walked all of the session's tasks, ended ones
-- included, so a session that had run thousands paid for each of them at
-- every ending.
--
-- task_batches: how many tasks each batch holds and how many of them are
-- active, kept by triggers as tasks are written. A client that launches
-- into one session while its earlier tasks run keeps one batch growing,
-- and every ending reports its counts: counted from the tasks, the
-- endings of a batch cost its size squared. (The PostgreSQL store counts
-- from an index instead: one row that every ending of a batch updates
-- would be a lock its transactions wait for, on every node.)

-- +goose Up
CREATE INDEX tasks_active_parent ON tasks (parent_session_id, created_at, id)
WHERE status IN ('queued', 'running', 'resumed');

CREATE TABLE task_batches (
    batch_id          TEXT NOT NULL,
    parent_session_id TEXT NOT NULL,
    total             INTEGER NOT NULL,
    active            INTEGER NOT NULL,
    PRIMARY KEY (batch_id, parent_session_id)
) WITHOUT ROWID;

INSERT INTO task_batches (batch_id, parent_session_id, total, active)
SELECT batch_id, parent_session_id, COUNT(*), SUM(status IN ('queued', 'running', 'resumed'))
FROM tasks WHERE batch_id != ''
GROUP BY batch_id, parent_session_id;

-- +goose StatementBegin
CREATE TRIGGER tasks_batch_added AFTER INSERT ON tasks
WHEN NEW.batch_id != ''
BEGIN
    INSERT INTO task_batches (batch_id, parent_session_id, total, active)
    VALUES (NEW.batch_id, NEW.parent_session_id, 1, NEW.status IN ('queued', 'running', 'resumed'))
    ON CONFLICT (batch_id, parent_session_id) DO UPDATE SET
        total = total + 1, active = active + excluded.active;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER tasks_batch_changed AFTER UPDATE OF status, batch_id, parent_session_id ON tasks
WHEN (OLD.status IN ('queued', 'running', 'resumed')) != (NEW.status IN ('queued', 'running', 'resumed'))
    OR OLD.batch_id != NEW.batch_id OR OLD.parent_session_id != NEW.parent_session_id
BEGIN
    UPDATE task_batches SET total = total - 1, active = active - (OLD.status IN ('queued', 'running', 'resumed'))
    WHERE batch_id = OLD.batch_id AND parent_session_id = OLD.parent_session_id;
    DELETE FROM task_batches
    WHERE batch_id = OLD.batch_id AND parent_session_id = OLD.parent_session_id AND total = 0;
    INSERT INTO task_batches (batch_id, parent_session_id, total, active)
    SELECT NEW.batch_id, NEW.parent_session_id, 1, NEW.status IN ('queued', 'running', 'resumed')
    WHERE NEW.batch_id != ''
    ON CONFLICT (batch_id, parent_session_id) DO UPDATE SET
        total = total + 1, active = active + excluded.active;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER tasks_batch_removed AFTER DELETE ON tasks
WHEN OLD.batch_id != ''
BEGIN
    UPDATE task_batches SET total = total - 1, active = active - (OLD.status IN ('queued', 'running', 'resumed'))
    WHERE batch_id = OLD.batch_id AND parent_session_id = OLD.parent_session_id;
    DELETE FROM task_batches
    WHERE batch_id = OLD.batch_id AND parent_session_id = OLD.parent_session_id AND total = 0;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER tasks_batch_removed;
DROP TRIGGER tasks_batch_changed;
DROP TRIGGER tasks_batch_added;
DROP TABLE task_batches;
DROP INDEX tasks_active_parent;
