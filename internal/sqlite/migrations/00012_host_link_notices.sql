-- The notices of an MCP host conversation's tasks: the newest message of
-- its session (linked under host "mcp:<host>") whose notices the
-- conversation was given (sa.HostLink.NoticesDelivered). It was kept as
-- the link's position, as text; it moves to a column of its own, and the
-- position of those links is left empty (they import nothing).

-- +goose Up
ALTER TABLE host_links ADD COLUMN notices_delivered INTEGER NOT NULL DEFAULT 0;
UPDATE host_links SET notices_delivered = CAST(position AS INTEGER), position = ''
    WHERE substr(host, 1, 4) = 'mcp:' AND position <> '' AND position NOT GLOB '*[^0-9]*';

-- +goose Down
UPDATE host_links SET position = CAST(notices_delivered AS TEXT) WHERE substr(host, 1, 4) = 'mcp:';
ALTER TABLE host_links DROP COLUMN notices_delivered;
