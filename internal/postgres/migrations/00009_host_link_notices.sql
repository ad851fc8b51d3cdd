-- The notices of an MCP host conversation's tasks
-- (sa.HostLink.NoticesDelivered), moved out of the link's position into a
-- column of their own. As in sqlite/migrations/00012_host_link_notices.sql;
-- hosts and positions are BYTEA (see 00003_host_links.sql).

-- +goose Up
ALTER TABLE host_links ADD COLUMN notices_delivered BIGINT NOT NULL DEFAULT 0;
UPDATE host_links SET notices_delivered = encode(position, 'escape')::bigint, position = ''::bytea
    WHERE substring(host from 1 for 4) = 'mcp:'::bytea
      AND encode(position, 'escape') ~ '^[0-9]{1,18}$';

-- +goose Down
UPDATE host_links SET position = convert_to(notices_delivered::text, 'UTF8')
    WHERE substring(host from 1 for 4) = 'mcp:'::bytea;
ALTER TABLE host_links DROP COLUMN notices_delivered;
