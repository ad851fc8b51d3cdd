-- What a task tree may spend (the task and every task it launched): a
-- cost in dollars and a number of tokens, fixed at launch; 0 is no limit.
--
-- session_usage keeps each session's tokens per model, summed as its
-- messages are written and removed, so that a listing prices its entries
-- without reading their messages. As in
-- sqlite/migrations/00006_budgets_usage.sql.

-- +goose Up
ALTER TABLE tasks ADD COLUMN max_cost DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN max_tokens BIGINT NOT NULL DEFAULT 0;

CREATE TABLE session_usage (
    session_id         TEXT COLLATE "C" NOT NULL,
    model              BYTEA NOT NULL,
    input_tokens       BIGINT NOT NULL DEFAULT 0,
    output_tokens      BIGINT NOT NULL DEFAULT 0,
    cache_read_tokens  BIGINT NOT NULL DEFAULT 0,
    cache_write_tokens BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (session_id, model)
);

INSERT INTO session_usage (session_id, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens)
SELECT session_id, model, SUM(input_tokens), SUM(output_tokens), SUM(cache_read_tokens), SUM(cache_write_tokens)
FROM messages
WHERE input_tokens <> 0 OR output_tokens <> 0 OR cache_read_tokens <> 0 OR cache_write_tokens <> 0
GROUP BY session_id, model;

-- The functions keep the search_path they were created with, so that they
-- find session_usage in this schema whoever writes.
-- +goose StatementBegin
CREATE FUNCTION session_usage_added() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO session_usage AS u (session_id, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens)
    VALUES (NEW.session_id, NEW.model, NEW.input_tokens, NEW.output_tokens, NEW.cache_read_tokens, NEW.cache_write_tokens)
    ON CONFLICT (session_id, model) DO UPDATE SET
        input_tokens = u.input_tokens + EXCLUDED.input_tokens,
        output_tokens = u.output_tokens + EXCLUDED.output_tokens,
        cache_read_tokens = u.cache_read_tokens + EXCLUDED.cache_read_tokens,
        cache_write_tokens = u.cache_write_tokens + EXCLUDED.cache_write_tokens;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION session_usage_removed() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE session_usage SET
        input_tokens = input_tokens - OLD.input_tokens,
        output_tokens = output_tokens - OLD.output_tokens,
        cache_read_tokens = cache_read_tokens - OLD.cache_read_tokens,
        cache_write_tokens = cache_write_tokens - OLD.cache_write_tokens
    WHERE session_id = OLD.session_id AND model = OLD.model;
    DELETE FROM session_usage
    WHERE session_id = OLD.session_id AND model = OLD.model
        AND input_tokens = 0 AND output_tokens = 0 AND cache_read_tokens = 0 AND cache_write_tokens = 0;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER messages_usage_added AFTER INSERT ON messages FOR EACH ROW
WHEN (NEW.input_tokens <> 0 OR NEW.output_tokens <> 0 OR NEW.cache_read_tokens <> 0 OR NEW.cache_write_tokens <> 0)
EXECUTE FUNCTION session_usage_added();

CREATE TRIGGER messages_usage_removed AFTER DELETE ON messages FOR EACH ROW
WHEN (OLD.input_tokens <> 0 OR OLD.output_tokens <> 0 OR OLD.cache_read_tokens <> 0 OR OLD.cache_write_tokens <> 0)
EXECUTE FUNCTION session_usage_removed();

-- +goose Down
DROP TRIGGER messages_usage_removed ON messages;
DROP TRIGGER messages_usage_added ON messages;
DROP FUNCTION session_usage_removed();
DROP FUNCTION session_usage_added();
DROP TABLE session_usage;
ALTER TABLE tasks DROP COLUMN max_tokens;
ALTER TABLE tasks DROP COLUMN max_cost;
