package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/superagents/superagents/internal/golden"
)

type mcpListing struct {
	Servers []struct {
		Name    string `json:"name"`
		Origin  string `json:"origin"`
		Project bool   `json:"project"`
		Trusted bool   `json:"trusted"`
		State   string `json:"state"`
		Error   string `json:"error"`
		Tools   []struct {
			Name string `json:"name"`
		} `json:"tools"`
	} `json:"servers"`
	Problems []string `json:"problems"`
	Notice   string   `json:"notice"`
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMCPServersUntrusted: a project's servers do not start until the
// project is trusted; the listing says so and how to trust it, and so does
// a command that runs agents.
func TestMCPServersUntrusted(t *testing.T) {
	h := newHarness(t)
	ws := t.TempDir()
	marker := filepath.Join(t.TempDir(), "started")
	writeFile(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {
		"evil": {"command": "sh", "args": ["-c", "touch `+marker+`"]},
		"broken": {"type": "http"}
	}}`)
	writeFile(t, filepath.Join(h.env["HOME"], ".config", "superagents", "mcp.json"), `{"mcpServers": {"docs": {"type": "http", "url": "http://127.0.0.1:1/mcp?token=${DOCS_TOKEN:-none}"}}}`)
	h.env["DOCS_TOKEN"] = "s3cret"

	var got mcpListing
	if err := json.Unmarshal([]byte(h.ok("", "mcp-servers", "--workspace", ws, "--json", "--start")), &got); err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, s := range got.Servers {
		states[s.Name] = s.State
	}
	if states["evil"] != "untrusted" || states["broken"] != "invalid" || states["docs"] != "failed" {
		t.Fatalf("states = %v", states)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("an untrusted project's server was started")
	}
	if !strings.Contains(got.Notice, "--trust-project") || !strings.Contains(got.Notice, "evil") {
		t.Fatalf("notice = %q", got.Notice)
	}

	text := h.ok("", "mcp-servers", "--workspace", ws)
	if strings.Contains(text, "s3cret") {
		t.Fatal("the listing shows a secret")
	}
	text = strings.ReplaceAll(strings.ReplaceAll(text, marker, "/MARKER"), ws, "/WS")
	golden.Check(t, "mcp-servers.golden", []byte(text+"\n"))

	r := h.run("run", "--workspace", ws, "--model", "offline", "What is 2+2?")
	if r.code != 0 || !strings.Contains(r.stderr, "do not run until you trust the project") || strings.Count(r.stderr, "\n") > 3 {
		t.Fatalf("run: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("run started an untrusted project's server")
	}
}

// TestMCPServersTrust: --trust-project and trusted_projects let the
// project's servers run; only the user's file may trust a project.
func TestMCPServersTrust(t *testing.T) {
	h := newHarness(t)
	ws := t.TempDir()
	marker := filepath.Join(t.TempDir(), "started")
	writeFile(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"p": {"command": "sh", "args": ["-c", "touch `+marker+`"]}}}`)

	list := func(args ...string) mcpListing {
		t.Helper()
		var got mcpListing
		if err := json.Unmarshal([]byte(h.ok("", append([]string{"mcp-servers", "--workspace", ws, "--json", "--start"}, args...)...)), &got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	got := list("--trust-project")
	if s := got.Servers[0]; !s.Trusted || s.State != "failed" || got.Notice != "" {
		t.Fatalf("with --trust-project: %+v, notice %q", got.Servers, got.Notice)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("a trusted project's server was not started")
	}

	user := filepath.Join(h.env["HOME"], ".config", "superagents", "config.toml")
	writeFile(t, user, "trusted_projects = ["+strconvQuote(ws)+"]\n")
	if s := list().Servers[0]; !s.Trusted {
		t.Fatalf("with trusted_projects: %+v", s)
	}

	writeFile(t, filepath.Join(ws, ".superagents", "config.toml"), "trusted_projects = ["+strconvQuote(ws)+"]\n")
	r := h.run("mcp-servers", "--workspace", ws)
	if r.code != 2 || !strings.Contains(r.stderr, "only the user's configuration file may trust projects") {
		t.Fatalf("a project trusting itself: exit %d, stderr %q", r.code, r.stderr)
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
