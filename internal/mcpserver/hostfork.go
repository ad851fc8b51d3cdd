package mcpserver

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/transcripts"
)

// HostNone, as Options.Host, turns host detection off: forks carry this
// connection's record only.
const HostNone = "none"

// pendingCallWait bounds how long a fork waits for the host to write the
// call it is serving to its transcript (hosts write it a moment after
// they send it; on a busy machine, seconds after). A fork whose call is
// written answers as soon as it is found; only a fork whose host writes
// no transcript waits this long, to say so (a host writing its transcript
// meanwhile gets busyHostWait times as long).
const pendingCallWait = 5 * time.Second

// ownerCallWait bounds how long a connection's first call waits for its
// call to show in the host's transcript, to tell its conversation.
const ownerCallWait = 2 * time.Second

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
func (s *Server) hostOf(req mcp.Request) transcripts.Host {
	switch s.host {
	case HostNone:
		return ""
	case "":
	default:
		return transcripts.Host(s.host)
	}
	if info := clientInfo(req); info != nil {
		return clientHosts[info.Name]
	}
	return ""
}

// clientInfo is what a client says it is: in each request's _meta from
// the 2026-07-28 revision on, in initialize before it.
func clientInfo(req mcp.Request) *mcp.Implementation {
	if r, ok := req.(interface{ ClientInfo() *mcp.Implementation }); ok {
		return r.ClientInfo()
	}
	return nil
}

// hostFork is what a fork over MCP hands the child: the session holding
// the host's conversation (imported afresh), or why there is none.
type hostFork struct {
	session string // "" when the fork carries no host conversation
	note    string // said in the reply, either way
	// transcript is the host's transcript that holds the call, when
	// found (even if its import failed).
	transcript *transcripts.Transcript
}

// hostConversation imports, for a fork a host asked for, the host's own
// conversation: the one whose newest assistant message holds this very
// call (same tool, same arguments) in the host's transcripts for the
// workspace. The first fork imports it into a session of its own, later
// ones append what the host wrote since. When that fails the fork still
// goes ahead without it, and the note says so and why: it never falls
// back silently.
func (s *Server) hostConversation(ctx context.Context, req *mcp.CallToolRequest) hostFork {
	host := s.hostOf(req)
	if host == "" {
		why := "the host is not known"
		if s.host == HostNone {
			why = "host transcripts are turned off (--host none)"
		}
		return hostFork{note: "The fork carries no host conversation, only this connection's record (" + why +
			"; superagents mcp --host claude-code|codex|opencode names the host)."}
	}
	t, read, err := s.pendingCall(ctx, req, host, pendingCallWait)
	if err != nil {
		return hostFork{note: fmt.Sprintf("The fork carries no host conversation: %s's transcript of this call could not be read (%v).", host.Label(), err)}
	}
	// What the find read is imported as it is, when it is what the import
	// needs (a first import reads from the start), rather than read again.
	imp, err := s.rt.Sessions().ImportHostRead(ctx, t, &read, sa.NewSession{Agent: sa.MCPClientAgent})
	if err != nil {
		return hostFork{transcript: &t, note: fmt.Sprintf("The fork carries no host conversation: %s session %s could not be imported (%v).", host.Label(), t.SessionID, err)}
	}
	return hostFork{session: imp.ID, transcript: &t, note: fmt.Sprintf("The sub-agent starts with a digest of your %s conversation (session %s).", host.Label(), t.SessionID)}
}
