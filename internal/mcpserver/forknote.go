package mcpserver

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/transcripts"
)

// forkNoteFor says what fork: true hands over to a client of a host:
// the host's conversation when its transcripts are read here, else this
// connection's record only.
func forkNoteFor(host transcripts.Host) string {
	if host == "" {
		return "With fork: true the sub-agent starts with a digest of this connection's record only (the notices of earlier tasks): " +
			"superagents reads the conversations of Claude Code, Codex and OpenCode, and did not recognise your host " +
			"(superagents mcp --host names it). Put what the sub-agent needs in prompt."
	}
	return "With fork: true the sub-agent starts with a digest of your own conversation, read from the transcript " + host.Label() +
		" writes (long tool outputs are cut, reasoning is left out). If it cannot be read, the reply says so " +
		"and the digest holds only this connection's record (the notices of earlier tasks): then put what the sub-agent needs in prompt."
}

// describeForkPerClient is a middleware that says, in superagents_task's
// description as each client lists it, what a fork carries for that
// client's host. The tools are registered once for every client; the
// list answered to one is a copy.
func (s *Server) describeForkPerClient(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		list, ok := res.(*mcp.ListToolsResult)
		if err != nil || !ok || method != "tools/list" || s.host == HostNone {
			return res, err
		}
		note := forkNoteFor(s.hostOf(req))
		if note == forkNote {
			return res, nil
		}
		out := *list
		out.Tools = make([]*mcp.Tool, len(list.Tools))
		for i, t := range list.Tools {
			if t.Name == sa.TaskTool && strings.Contains(t.Description, forkNote) {
				own := *t
				own.Description = strings.Replace(t.Description, forkNote, note, 1)
				t = &own
			}
			out.Tools[i] = t
		}
		return &out, nil
	}
}
