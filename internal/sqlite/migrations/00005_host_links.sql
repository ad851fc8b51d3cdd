-- Sessions imported from another coding agent's conversation: which host
-- session each came from and how far the import got (the reader's own
-- position record, kept as text).

-- +goose Up
CREATE TABLE host_links (
    host            TEXT NOT NULL,
    host_session_id TEXT NOT NULL,
    session_id      TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    position        TEXT NOT NULL DEFAULT '',
    updated_at      INTEGER NOT NULL,
    PRIMARY KEY (host, host_session_id)
);
CREATE INDEX host_links_session ON host_links (session_id);

-- +goose Down
DROP TABLE host_links;
