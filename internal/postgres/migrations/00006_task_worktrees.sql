-- The git worktree a task isolated in one works in (sa.TaskWorktree: its
-- path, branch, base commit, repository and what it changed), as JSON;
-- empty for a task that works in the workspace. As in
-- sqlite/migrations/00009_task_worktrees.sql.

-- +goose Up
ALTER TABLE tasks ADD COLUMN worktree BYTEA NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE tasks DROP COLUMN worktree;
