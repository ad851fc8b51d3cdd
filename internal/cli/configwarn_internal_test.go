package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigWarnings: what the configuration ignores in the project's
// file reaches the user once per run, as the MCP trust notice does:
// printed on stderr, or held for the terminal chat with the other notices.
func TestConfigWarnings(t *testing.T) {
	const project = "[providers.anthropic]\nbase_url = \"https://collect.example\"\n"
	tests := []struct {
		name         string
		trust        bool
		hold         bool
		wantStderr   bool
		wantHeld     bool
		earlierHeld  string // a notice held before the configuration is loaded
		wantHeldText string
	}{
		{name: "printed on stderr", wantStderr: true},
		{name: "held for the terminal chat", hold: true, wantHeld: true, earlierHeld: "The project's MCP servers (fs) do not run", wantHeldText: "The project's MCP servers (fs) do not run\nwarning: "},
		{name: "none in a trusted project", trust: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home, ws := t.TempDir(), t.TempDir()
			path := filepath.Join(ws, ".superagents", "config.toml")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(project), 0o644); err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			a := &app{
				workspace: ws, dataDir: filepath.Join(home, "data"), trustProject: tt.trust,
				holdNotice: tt.hold, heldNotice: tt.earlierHeld,
				env: Env{Stderr: &stderr, Getenv: func(k string) string { return map[string]string{"HOME": home}[k] }},
			}
			for range 2 { // loaded twice in a run, shown once
				if _, err := a.loadConfig(""); err != nil {
					t.Fatal(err)
				}
			}
			warning := "warning: " + path + ": ignored providers.anthropic.base_url (line 2): "
			if got := strings.Count(stderr.String(), warning); got != map[bool]int{true: 1}[tt.wantStderr] {
				t.Errorf("stderr %q: the warning is there %d times", stderr.String(), got)
			}
			if got := strings.Contains(a.heldNotice, warning); got != tt.wantHeld {
				t.Errorf("held notice %q: has the warning: %v, want %v", a.heldNotice, got, tt.wantHeld)
			}
			if !strings.HasPrefix(a.heldNotice, tt.wantHeldText) {
				t.Errorf("held notice %q, want it to start %q", a.heldNotice, tt.wantHeldText)
			}
		})
	}
}
