// The task notifications are MCP logging messages, which the protocol's
// newest revision deprecates (SEP-2577) but the revisions served here, the
// ones with sessions, define; hence the SDK's deprecation notices are
// silenced in this file only.
//lint:file-ignore SA1019 logging is the notification of the protocol revisions served

package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/events"
)

// defaultLogLevel is the level a session logs at until its client sets
// one (see logByDefault).
const defaultLogLevel mcp.LoggingLevel = "info"

// capabilities are the server's: tools, and logging for the notifications.
func capabilities() *mcp.ServerCapabilities {
	return &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Tools: &mcp.ToolCapabilities{}}
}

// logByDefault sets a session's log level as soon as it initializes,
// so that its client hears of task endings without asking: the SDK sends
// no log message to a session whose client has set no level. A level the
// client sets later replaces it.
func logByDefault(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && method == "initialize" && err == nil {
			level := &mcp.ServerRequest[*mcp.SetLoggingLevelParams]{Session: ss, Params: &mcp.SetLoggingLevelParams{Level: defaultLogLevel}}
			if _, err := next(ctx, "logging/setLevel", level); err != nil {
				return nil, fmt.Errorf("set the default log level: %w", err)
			}
		}
		return res, err
	}
}

// forward tells each client when one of its tasks ends. The manager
// stores a notification message in the parent session when a task ends,
// in the same transaction; the ones stored in a connected client's session
// become logging notifications to that client.
//
// Logging (notifications/message) is the one standard way for a server to
// speak to a client unasked in the protocol revisions served here: a host
// may show it, record it or hand it to its model, and every SDK lets a
// program react to it. The sessions log at "info" until their client sets
// a level, so a host receives task endings without asking. Delivery is
// best effort (a client that is not listening misses it): the store, read
// through superagents_list and superagents_output, is the record.
func (s *Server) forward(ctx context.Context, cursor *events.Cursor) {
	defer s.wg.Done()
	// A task's ending and its notification are written in one transaction
	// (Store.FinishTask): the ended task's change comes right before the
	// notification's, which names the task.
	var ended sa.Task // the task whose ending was read last
	for {
		ch, err := cursor.NextMatching(ctx, func(c sa.Change) bool { return len(s.clientsOf(c.SessionID)) > 0 })
		if err != nil {
			return // closed
		}
		switch ch.Kind {
		case sa.ChangeTaskCompleted, sa.ChangeTaskError, sa.ChangeTaskCancelled:
			if t, err := ch.Task(); err == nil {
				ended = t
			}
		case sa.ChangeSessionMessage:
			msg, err := ch.Message()
			if err != nil || msg.Kind != sa.KindNotification {
				continue
			}
			for _, c := range s.clientsOf(ch.SessionID) {
				s.notify(ctx, c, msg, ended, ch.TaskID != "" && ended.ID == ch.TaskID)
			}
		}
	}
}

// notify sends one task notification to its client: the visible text, the
// hint for the model, and the task it is about.
func (s *Server) notify(ctx context.Context, c *client, msg sa.Message, t sa.Task, known bool) {
	data := map[string]any{"text": msg.Text(), "hint": msg.HiddenText(), "session_id": msg.SessionID}
	level := mcp.LoggingLevel("notice")
	if known {
		data["task_id"], data["status"], data["description"] = t.ID, t.Status, t.Description
		if t.Status == sa.TaskError {
			level = "warning"
		}
	}
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	if err := c.ss.Log(ctx, &mcp.LoggingMessageParams{Level: level, Logger: LoggerName, Data: data}); err != nil {
		s.log.Debug("task notification not delivered", "session", msg.SessionID, "error", err)
	}
}
