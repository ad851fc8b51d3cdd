package sqlite

import (
	"testing"

	"github.com/superagents/superagents/internal/storetest"
)

// TestNoticePositionsMovedOnUpgrade: the notice position an MCP
// conversation's link kept as its position moves to NoticesDelivered; an
// import's position stays where it was.
func TestNoticePositionsMovedOnUpgrade(t *testing.T) {
	st := openUpgraded(t, 11,
		`INSERT INTO sessions (id, created_at) VALUES ('s1', 1), ('s2', 1)`,
		`INSERT INTO host_links (host, host_session_id, session_id, position, updated_at) VALUES
			('mcp:codex', 'conv', 's1', '42', 1),
			('codex', 'conv', 's2', '{"offset":7}', 1)`)
	storetest.CheckUpgradedNotices(t, st)
}
