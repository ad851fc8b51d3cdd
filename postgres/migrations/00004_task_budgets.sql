-- What a task tree may spend (the task and every task it launched): a
-- cost in dollars and a number of tokens, fixed at launch; 0 is no limit.
-- As in sqlite/migrations/00006_task_budgets.sql.

-- +goose Up
ALTER TABLE tasks ADD COLUMN max_cost DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN max_tokens BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE tasks DROP COLUMN max_tokens;
ALTER TABLE tasks DROP COLUMN max_cost;
