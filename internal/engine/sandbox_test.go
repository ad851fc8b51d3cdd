package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/superagents/superagents/internal/agents"
	"github.com/superagents/superagents/internal/engine"
	"github.com/superagents/superagents/internal/sandboxtest"
)

// TestSandboxOfProfileAndConfig: an agent's commands run in the strictest
// of the configuration's sandbox and its profile's.
func TestSandboxOfProfileAndConfig(t *testing.T) {
	sandboxtest.Require(t, false)
	script := filepath.Join(t.TempDir(), "write.toml")
	err := os.WriteFile(script, []byte(`
[[rules]]
contains = "write"
step = 1
tool_calls = [{ name = "bash", input = { command = "echo x > written && echo wrote" } }]

[[rules]]
after_tool = "bash"
reply = "{{last_tool_result}}"
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	const reviewer = "---\ndescription: Reviews.\nsandbox: read-only\n---\nYou review.\n"
	tests := []struct {
		name, config, agent string
		want                []string
		wrote               bool
	}{
		{"the default sandbox writes in the workspace", "", "general", []string{"wrote\n[exit code 0]"}, true},
		{"a read-only profile", "", "reviewer", []string{"Permission denied", `read-only sandbox (set by the agent profile "reviewer")`}, false},
		{"a read-only configuration", "[sandbox]\nmode = \"read-only\"\n", "general", []string{"Permission denied", "read-only sandbox:"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eng, ws := newEngine(t, "model = \"offline\"\n[providers.offline]\nscript = \""+script+"\"\n"+tc.config, nil)
			if w := eng.SandboxWarning(); w != "" {
				t.Fatalf("warning on a system that enforces the sandbox: %s", w)
			}
			if err := os.MkdirAll(filepath.Join(ws, ".superagents", "agents"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, ".superagents", "agents", "reviewer.md"), []byte(reviewer), 0o644); err != nil {
				t.Fatal(err)
			}
			eng.Agents = reloadAgents(t, ws)
			s := newSession(t, eng, tc.agent, "")
			out, err := eng.Run(context.Background(), s.ID, engine.TurnOptions{}, engine.UserMessage("write it"))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.want {
				if !strings.Contains(out.Text, want) {
					t.Errorf("answer lacks %q:\n%s", want, out.Text)
				}
			}
			if _, err := os.Stat(filepath.Join(ws, "written")); (err == nil) != tc.wrote {
				t.Errorf("written exists: %v, want %v", err == nil, tc.wrote)
			}
		})
	}
}

// reloadAgents loads the workspace's profiles again, after a test wrote
// one.
func reloadAgents(t *testing.T, ws string) *agents.Catalog {
	t.Helper()
	catalog, problems := agents.Load(agents.Dirs{Project: agents.ProjectDir(ws)})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	return catalog
}
