package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/superagents/superagents/internal/engine"
	"github.com/superagents/superagents/internal/tools"
)

// TestTurnWorkspace: a turn given a workspace of its own (a task's
// worktree) has its file tools and its commands work there, and its
// system prompt says so; the next turn without one is back in the
// engine's workspace.
func TestTurnWorkspace(t *testing.T) {
	script := filepath.Join(t.TempDir(), "here.toml")
	err := os.WriteFile(script, []byte(`
[[rules]]
contains = "mark"
step = 1
tool_calls = [{ name = "write", input = { path = "mark.txt", content = "marked" } }]

[[rules]]
after_tool = "write"
tool_calls = [{ name = "bash", input = { command = "pwd" } }]

[[rules]]
after_tool = "bash"
reply = "{{last_tool_result}}"
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	eng, ws := newEngine(t, `model = "offline"
[providers.offline]
script = "`+script+`"
`, nil)
	other := t.TempDir()
	tests := []struct {
		name string
		dir  string // the turn's own workspace, or "" for the engine's
		want string // where the turn's tools worked
	}{
		{"its own", other, other},
		{"the engine's", "", ws},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts engine.TurnOptions
			if tt.dir != "" {
				own, err := tools.OpenWorkspace(tt.dir)
				if err != nil {
					t.Fatal(err)
				}
				defer own.Close()
				opts.Workspace = own
			}
			s := newSession(t, eng, "general", "")
			loop, err := eng.Loop(context.Background(), s, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(loop.System, "working directory of your tools): "+tt.want) {
				t.Fatalf("system prompt does not name %s:\n%s", tt.want, loop.System)
			}
			out, err := eng.Run(context.Background(), s.ID, opts, engine.UserMessage("mark it"))
			if err != nil {
				t.Fatal(err)
			}
			if real, _ := filepath.EvalSymlinks(tt.want); !strings.Contains(out.Text, real) && !strings.Contains(out.Text, tt.want) {
				t.Fatalf("bash ran in %q, want %s", out.Text, tt.want)
			}
			if b, err := os.ReadFile(filepath.Join(tt.want, "mark.txt")); err != nil || string(b) != "marked" {
				t.Fatalf("mark.txt in %s: %q, %v", tt.want, b, err)
			}
			if err := os.Remove(filepath.Join(tt.want, "mark.txt")); err != nil {
				t.Fatal(err)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(ws, "mark.txt")); err == nil {
		t.Fatal("a file was left in the engine's workspace")
	}
}
