package postgres

import (
	"testing"

	"github.com/superagents/superagents/internal/storetest"
)

// TestNoticePositionsMovedOnUpgrade: the notice position an MCP
// conversation's link kept as its position moves to NoticesDelivered; an
// import's position stays where it was.
func TestNoticePositionsMovedOnUpgrade(t *testing.T) {
	st := openUpgraded(t, 8,
		`INSERT INTO sessions (id, agent, model, title, created_at) VALUES ('s1', '', '', '', 1), ('s2', '', '', '', 1)`,
		`INSERT INTO host_links (host, host_session_id, session_id, position, updated_at) VALUES
			('mcp:codex'::bytea, 'conv'::bytea, 's1', '42'::bytea, 1),
			('codex'::bytea, 'conv'::bytea, 's2', '{"offset":7}'::bytea, 1)`)
	storetest.CheckUpgradedNotices(t, st)
}
