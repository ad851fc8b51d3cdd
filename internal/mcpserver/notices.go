package mcpserver

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/tasktools"
)

// noticesEnd ends the notices at the top of a result, after
// tasktools.NoticesHeader and them.
const noticesEnd = "\n\n---\n\n"

// takeNotices returns the notices of the client's tasks that ended
// since the last result that carried some, oldest first, each its
// visible line and its hint for the model; none when there are none. Each
// is delivered once per connection, and, for a client whose host
// conversation is known, once per conversation: the position reached is
// stored with the conversation's link (see conversation.delivered), so
// that a later process of the conversation gets the notices of the tasks
// that ended while none was connected.
//
// Several hosts (Claude Code and Codex among them) receive MCP logging
// notifications but do not show them to their model, which reads only
// tool results: this is how a task's end reaches it there. The logging
// notifications are still sent, for hosts that show them.
func (s *Server) takeNotices(ctx context.Context, ss *mcp.ServerSession) []string {
	s.mu.Lock()
	c := s.clients[ss]
	s.mu.Unlock()
	if c == nil {
		return nil
	}
	session := c.session()
	if session == "" {
		return nil
	}
	c.noticeMu.Lock()
	defer c.noticeMu.Unlock()
	s.catchUp(ctx, c)
	// The session's own messages since the last look, not its whole
	// history: a long conversation is not read again at every result.
	since, err := s.store.MessagesAfter(ctx, session, c.checked)
	if err != nil {
		s.log.Debug("notices not read", "session", session, "error", err)
		return nil
	}
	if n := len(since); n > 0 {
		c.checked = since[n-1].ID
		s.delivered(ctx, c, c.checked)
	}
	return runtime.Notices(since)
}

// noticesText is the notices as they start a result's text.
func noticesText(notices []string) string {
	if len(notices) == 0 {
		return ""
	}
	return tasktools.NoticesHeader + strings.Join(notices, "\n\n") + noticesEnd
}
