package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/superagents/superagents/internal/mcpserver"
)

// TestForkDescribedPerHost: superagents_task's description, as each
// client lists it, says what fork: true carries for that client's host.
func TestForkDescribedPerHost(t *testing.T) {
	tests := []struct {
		name, client, host string
		want, not          string
	}{
		{"Claude Code", "claude-code", "", "read from the transcript Claude Code writes", "did not recognise"},
		{"Codex", "codex-mcp-client", "", "read from the transcript Codex writes", "did not recognise"},
		{"OpenCode", "opencode", "", "read from the transcript OpenCode writes", "did not recognise"},
		{"an unknown host", "cursor", "", "connection's record only", "read from the transcript"},
		{"a host named by the server's setting", "cursor", "codex", "read from the transcript Codex writes", "did not recognise"},
		{"host transcripts turned off", "claude-code", mcpserver.HostNone, "not of your own conversation", "read from the transcript"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarnessWith(t, fakeModel, mcpserver.Options{Host: tt.host})
			c := h.connect("in-memory", tt.client, "1.0")
			list, err := c.cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range list.Tools {
				if tool.Name != "superagents_task" {
					continue
				}
				if !strings.Contains(tool.Description, tt.want) || strings.Contains(tool.Description, tt.not) {
					t.Fatalf("description for %s: want %q and not %q:\n%s", tt.client, tt.want, tt.not, tool.Description)
				}
				return
			}
			t.Fatal("no superagents_task in the list")
		})
	}
}
