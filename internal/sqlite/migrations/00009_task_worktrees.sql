-- The git worktree a task isolated in one works in (sa.TaskWorktree: its
-- path, branch, base commit, repository and what it changed), as JSON;
-- empty for a task that works in the workspace. One column: it is read
-- with the task and never searched.

-- +goose Up
ALTER TABLE tasks ADD COLUMN worktree TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE tasks DROP COLUMN worktree;
