-- What a task tree may spend (the task and every task it launched): a
-- cost in dollars and a number of tokens, fixed at launch; 0 is no limit.

-- +goose Up
ALTER TABLE tasks ADD COLUMN max_cost REAL NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN max_tokens INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE tasks DROP COLUMN max_tokens;
ALTER TABLE tasks DROP COLUMN max_cost;
