package mcpserver

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	sa "github.com/superagents/superagents"
)

// noticesHeader and noticesEnd frame the notices at the top of a result.
const (
	noticesHeader = "[superagents] Background tasks that ended since your last superagents call:\n\n"
	noticesEnd    = "\n\n---\n\n"
)

// takeNotices returns, to put at the top of a tool result, the
// notifications of the client's tasks that ended since the last result
// that carried some, oldest first, each with its hint for the model; ""
// when there are none. Each is delivered once per connection.
//
// Several hosts (Claude Code and Codex among them) receive MCP logging
// notifications but do not show them to their model, which reads only
// tool results: this is how a task's end reaches it there. The logging
// notifications are still sent, for hosts that show them.
func (s *Server) takeNotices(ctx context.Context, ss *mcp.ServerSession) string {
	s.mu.Lock()
	c := s.clients[ss]
	s.mu.Unlock()
	if c == nil {
		return ""
	}
	session := c.session()
	if session == "" {
		return ""
	}
	c.noticeMu.Lock()
	defer c.noticeMu.Unlock()
	hist, err := s.store.History(ctx, session)
	if err != nil {
		s.log.Debug("notices not read", "session", session, "error", err)
		return ""
	}
	var b strings.Builder
	for _, m := range hist {
		if m.Kind != sa.KindNotification || m.ID <= c.delivered || m.SessionID != session {
			continue
		}
		c.delivered = m.ID
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(m.Text())
		if hint := hiddenText(m); hint != "" {
			b.WriteString("\n" + hint)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return noticesHeader + b.String() + noticesEnd
}
