-- The principal an MCP client launched a task as (sa.Task.Launcher): the
-- holder of an API token over HTTP, the workspace of the server reached
-- over stdio; empty for a task launched any other way. The Tasks
-- extension's requests reach a task only as its launcher, so the binding
-- is stored with the task and any node can check it. Fixed at launch.

-- +goose Up
ALTER TABLE tasks ADD COLUMN launcher TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE tasks DROP COLUMN launcher;
