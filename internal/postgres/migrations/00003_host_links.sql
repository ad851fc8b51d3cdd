-- Sessions imported from another coding agent's conversation: which host
-- session each came from and how far the import got (the reader's own
-- position record, kept as it is). As in sqlite/migrations/00005_host_links.sql;
-- host names, host session ids and positions come from outside, so they
-- are BYTEA (see 00001_init.sql).

-- +goose Up
CREATE TABLE host_links (
    host            BYTEA NOT NULL,
    host_session_id BYTEA NOT NULL,
    session_id      TEXT COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    position        BYTEA NOT NULL DEFAULT '',
    updated_at      BIGINT NOT NULL,
    PRIMARY KEY (host, host_session_id)
);
CREATE INDEX host_links_session ON host_links (session_id);

-- +goose Down
DROP TABLE host_links;
