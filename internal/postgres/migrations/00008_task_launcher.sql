-- The principal an MCP client launched a task as (sa.Task.Launcher). As
-- in sqlite/migrations/00011_task_launcher.sql; the value is superagents'
-- own (a kind and a digest), never text a client gives, so TEXT holds it.

-- +goose Up
ALTER TABLE tasks ADD COLUMN launcher TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE tasks DROP COLUMN launcher;
