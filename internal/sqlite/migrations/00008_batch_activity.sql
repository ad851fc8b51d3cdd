-- A task's start and its ending change only whether it is active. Its
-- batch's counts then take one update; tasks_batch_changed took out the
-- task and put it back (an update, a delete and an upsert), as a move to
-- another batch needs, and fired for tasks without a batch too.

-- +goose Up
DROP TRIGGER tasks_batch_changed;

-- +goose StatementBegin
CREATE TRIGGER tasks_batch_activity AFTER UPDATE OF status ON tasks
WHEN NEW.batch_id != '' AND OLD.batch_id = NEW.batch_id AND OLD.parent_session_id = NEW.parent_session_id
    AND (OLD.status IN ('queued', 'running', 'resumed')) != (NEW.status IN ('queued', 'running', 'resumed'))
BEGIN
    UPDATE task_batches
    SET active = active + (NEW.status IN ('queued', 'running', 'resumed')) - (OLD.status IN ('queued', 'running', 'resumed'))
    WHERE batch_id = NEW.batch_id AND parent_session_id = NEW.parent_session_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER tasks_batch_moved AFTER UPDATE OF batch_id, parent_session_id ON tasks
WHEN OLD.batch_id != NEW.batch_id OR OLD.parent_session_id != NEW.parent_session_id
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

-- +goose Down
DROP TRIGGER tasks_batch_moved;
DROP TRIGGER tasks_batch_activity;

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
