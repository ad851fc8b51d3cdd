-- Indexes for listing tasks newest first, whole or by status or agent,
-- one page at a time (LIMIT/OFFSET), without sorting the whole table.

-- +goose Up
CREATE INDEX tasks_created ON tasks (created_at, id);
CREATE INDEX tasks_status_created ON tasks (status, created_at, id);
CREATE INDEX tasks_agent_created ON tasks (agent, created_at, id);
DROP INDEX tasks_status;

-- +goose Down
CREATE INDEX tasks_status ON tasks (status);
DROP INDEX tasks_agent_created;
DROP INDEX tasks_status_created;
DROP INDEX tasks_created;
