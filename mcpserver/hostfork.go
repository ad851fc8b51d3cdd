package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/tasks"
	"github.com/superagents/superagents/transcripts"
)

// HostNone, as Options.Host, turns host detection off: forks carry this
// connection's record only.
const HostNone = "none"

// pendingCallWait bounds how long a fork waits for the host to write the
// call it is serving to its transcript (hosts write it a moment after
// they send it).
const pendingCallWait = 2 * time.Second

// clientHosts maps the names hosts give themselves in initialize
// (clientInfo.name) to the host whose transcripts are read. Claude Code
// sends "claude-code", Codex "codex-mcp-client" (codex-rs/rmcp-client),
// OpenCode "opencode" (packages/opencode/src/mcp).
var clientHosts = map[string]transcripts.Host{
	"claude-code":      transcripts.ClaudeCode,
	"codex-mcp-client": transcripts.Codex,
	"codex":            transcripts.Codex,
	"opencode":         transcripts.OpenCode,
}

// hostOf is the host a client is: the configured one (Options.Host) when
// set, else the one its clientInfo names; "" when unknown or turned off.
func (s *Server) hostOf(ss *mcp.ServerSession) transcripts.Host {
	switch s.host {
	case HostNone:
		return ""
	case "":
	default:
		return transcripts.Host(s.host)
	}
	if ss == nil {
		return ""
	}
	p := ss.InitializeParams()
	if p == nil || p.ClientInfo == nil {
		return ""
	}
	return clientHosts[p.ClientInfo.Name]
}

// hostFork is what a fork over MCP hands the child: the session holding
// the host's conversation (imported afresh), or why there is none.
type hostFork struct {
	session string // "" when the fork carries no host conversation
	note    string // said in the reply, either way
}

// hostConversation imports, for a fork a host asked for, the host's own
// conversation: the one whose newest assistant message holds this very
// call (same tool, same arguments) in the host's transcripts for the
// workspace. The first fork imports it into a session of its own, later
// ones append what the host wrote since. When that fails the fork still
// goes ahead without it, and the note says so and why: it never falls
// back silently.
func (s *Server) hostConversation(ctx context.Context, req *mcp.CallToolRequest) hostFork {
	host := s.hostOf(req.Session)
	if host == "" {
		why := "the host is not known"
		if s.host == HostNone {
			why = "host transcripts are turned off (--host none)"
		}
		return hostFork{note: "The fork carries no host conversation, only this connection's record (" + why +
			"; superagents mcp --host claude-code|codex|opencode names the host)."}
	}
	dir := s.rt.Engine.Workspace.Dir()
	env := transcripts.Env{Getenv: s.getenv}
	var args json.RawMessage
	if req.Params != nil {
		args = req.Params.Arguments
	}
	var (
		t   transcripts.Transcript
		err error
	)
	deadline := time.Now().Add(pendingCallWait)
	for {
		t, _, err = transcripts.FindPendingCall(ctx, host, dir, env, tasks.TaskToolName, args)
		if err == nil || !errors.Is(err, sa.ErrNotFound) || time.Now().After(deadline) {
			break
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			err = ctx.Err()
		}
		if ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		return hostFork{note: fmt.Sprintf("The fork carries no host conversation: %s's transcript of this call could not be read (%v).", host.Label(), err)}
	}
	imp, err := s.rt.ImportHost(ctx, t, sa.NewSession{Agent: sa.MCPClientAgent})
	if err != nil {
		return hostFork{note: fmt.Sprintf("The fork carries no host conversation: %s session %s could not be imported (%v).", host.Label(), t.SessionID, err)}
	}
	return hostFork{session: imp.ID, note: fmt.Sprintf("The sub-agent starts with a digest of your %s conversation (session %s).", host.Label(), t.SessionID)}
}
