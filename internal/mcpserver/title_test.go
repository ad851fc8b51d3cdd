package mcpserver

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestTitle(t *testing.T) {
	tests := []struct {
		name   string
		params *mcp.InitializeParams
		want   string
	}{
		{"no initialize params", nil, "MCP client"},
		{"no client info", &mcp.InitializeParams{}, "MCP client"},
		{"name and version", &mcp.InitializeParams{ClientInfo: &mcp.Implementation{Name: "claude-code", Version: "2.1.0"}}, "MCP: claude-code 2.1.0"},
		{"title preferred", &mcp.InitializeParams{ClientInfo: &mcp.Implementation{Name: "cc", Title: "Claude Code", Version: "2.1.0"}}, "MCP: Claude Code 2.1.0"},
		{"blank title", &mcp.InitializeParams{ClientInfo: &mcp.Implementation{Name: "cursor", Title: "  ", Version: "1"}}, "MCP: cursor 1"},
		{"control characters", &mcp.InitializeParams{ClientInfo: &mcp.Implementation{Name: "evil\x1b[2J\nname\t", Version: "\r\n"}}, "MCP: evil [2J name"},
		{"empty", &mcp.InitializeParams{ClientInfo: &mcp.Implementation{}}, "MCP client"},
		{"long", &mcp.InitializeParams{ClientInfo: &mcp.Implementation{Name: strings.Repeat("é", 200)}}, "MCP: " + strings.Repeat("é", maxTitle-1) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var info *mcp.Implementation
			if tt.params != nil {
				info = tt.params.ClientInfo
			}
			if got := title(info); got != tt.want {
				t.Errorf("title = %q, want %q", got, tt.want)
			}
		})
	}
}

// FuzzTitle: whatever a client calls itself, its session title is one
// short line of printable, valid UTF-8.
func FuzzTitle(f *testing.F) {
	f.Add("claude-code", "Claude Code", "2.1.0")
	f.Add("\x00\xff", "\u202e", "\n")
	f.Fuzz(func(t *testing.T, name, display, version string) {
		got := title(&mcp.Implementation{Name: name, Title: display, Version: version})
		if !utf8.ValidString(got) {
			t.Fatalf("title %q is not valid UTF-8", got)
		}
		if n := utf8.RuneCountInString(got); n > maxTitle+len("MCP: ") {
			t.Fatalf("title %q has %d characters", got, n)
		}
		for _, r := range got {
			if !unicode.IsPrint(r) {
				t.Fatalf("title %q holds %U", got, r)
			}
		}
	})
}
