package mcpserver

import (
	"context"
	"slices"
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
	// The session's own messages since the last look, not its whole
	// history: a long conversation is not read again at every result.
	since, err := s.store.MessagesAfter(ctx, session, c.checked)
	if err != nil {
		s.log.Debug("notices not read", "session", session, "error", err)
		return ""
	}
	if n := len(since); n > 0 {
		c.checked = since[n-1].ID
	}
	// A clear hides what came before it, as it does in the history.
	for i, m := range slices.Backward(since) {
		if m.Kind == sa.KindClear {
			since = since[i+1:]
			break
		}
	}
	var b strings.Builder
	for _, m := range since {
		if m.Kind != sa.KindNotification {
			continue
		}
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
