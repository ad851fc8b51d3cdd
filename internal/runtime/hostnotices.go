package runtime

import (
	"context"
	"errors"
	"slices"
	"strings"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/tasks"
)

// A host that can start a turn of its own (OpenCode, through the plugin
// superagents installs) is told of its conversations' tasks outside MCP:
// the notices are taken with the same once-per-conversation position the
// MCP server's tool answers move (sa.HostLink.NoticesDelivered), so a
// notice reaches a conversation once, by whichever comes first.

// ConversationOf returns the host conversation whose MCP session is
// sessionID (the host's name and its own id of the conversation); ok is
// false when the session is no host conversation's.
func (ss Sessions) ConversationOf(ctx context.Context, sessionID string) (host, hostSessionID string, ok bool, err error) {
	links, err := ss.rt.store.SessionHostLinks(ctx, []string{sessionID})
	if err != nil {
		return "", "", false, err
	}
	link, found := links[sessionID]
	if !found {
		return "", "", false, nil
	}
	host, ok = strings.CutPrefix(link.Host, conversationHost(""))
	return host, link.HostSessionID, ok, nil
}

// TakeNotices returns the notices of a host conversation's tasks that it
// was not given yet, oldest first (each its visible line and its hint for
// the model, as the MCP answers carry them), and records them given. A
// conversation with no session yet has none.
func (ss Sessions) TakeNotices(ctx context.Context, host, hostSessionID string) ([]string, error) {
	link, err := ss.Conversation(ctx, host, hostSessionID)
	if errors.Is(err, sa.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	since, err := ss.rt.store.MessagesAfter(ctx, link.SessionID, link.NoticesDelivered)
	if err != nil || len(since) == 0 {
		return nil, err
	}
	if _, err := ss.DeliverNotices(ctx, link, since[len(since)-1].ID); err != nil {
		return nil, err
	}
	return Notices(since), nil
}

// Notices returns the notices among a session's messages, oldest first:
// its task notifications after the newest clear (a clear hides what came
// before it, as it does in the history), each its visible line and its
// hint for the model, as tool answers and host wakes carry them.
func Notices(since []sa.Message) []string {
	for i, m := range slices.Backward(since) {
		if m.Kind == sa.KindClear {
			since = since[i+1:]
			break
		}
	}
	var notices []string
	for _, m := range since {
		if m.Kind != sa.KindNotification {
			continue
		}
		text := m.Text()
		if hint := m.HiddenText(); hint != "" {
			text += "\n" + hint
		}
		notices = append(notices, text)
	}
	return notices
}

// WakeMark is the id of the newest task notification of a session that
// its agent is due to be woken for (none of its tasks active, or one
// asking), 0 when it is not due: the one rule every way in wakes by.
func (ts Tasks) WakeMark(ctx context.Context, sessionID string) (int64, error) {
	return ts.rt.tasks.WakeMark(ctx, sessionID)
}

// EndsTask reports whether a change records a task's end (completed,
// failed or cancelled).
func EndsTask(c sa.Change) bool { return tasks.EndsTask(c) }
