package hosttest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// waitDelay bounds how long a run waits for the output of a host's
// children once the host has exited (a server it left behind holding a
// pipe): it guards against a hung test, it measures nothing.
const waitDelay = 10 * time.Second

// SubKeyEnv is the variable that holds the sub-agent model's key in the
// server's environment (superagents' config names it as api_key_env).
const SubKeyEnv = "SUPERAGENTS_TEST_MODEL_KEY"

// Options configure a host.
type Options struct {
	// Superagents is the superagents command the host runs as its MCP
	// server (superagents mcp).
	Superagents string
	// Script is the host's model.
	Script Script
	// Sub is the sub-agents' model; nil gives a server with no model
	// configured and no provider key in its environment.
	Sub *SubModel
	// DeferTools leaves Claude Code's deferral of MCP tools on: its model
	// then has ToolSearch, and must load the tools with it first.
	DeferTools bool
}

// Host is one host installed in a home of its own, with superagents as
// its MCP server.
type Host struct {
	// Name is the host's name as superagents knows it (ClaudeCode, Codex,
	// OpenCode).
	Name string
	Bin  string
	// Home is the host's HOME; Workspace its working directory; DataDir
	// superagents' data directory.
	Home, Workspace, DataDir string
	Model                    *HostModel
	Sub                      *SubModel

	superagents string
	env         []string
	// serverEnv is what the MCP server entry gives superagents.
	serverEnv map[string]string
	args      func(prompt, session string) []string
	session   func(stdout string) string
}

// New installs the host in a temporary home: its configuration, the
// scripted model, superagents as its MCP server.
func New(t testing.TB, name string, o Options) *Host {
	t.Helper()
	bin := Binary(t, name)
	home := t.TempDir()
	h := &Host{
		Name: name, Bin: bin, Home: home,
		Workspace: filepath.Join(home, "work"), DataDir: filepath.Join(home, "data"),
		Sub: o.Sub, superagents: o.Superagents, env: baseEnv(home),
		serverEnv: map[string]string{
			"SUPERAGENTS_DATA_DIR": filepath.Join(home, "data"),
			"XDG_CONFIG_HOME":      filepath.Join(home, ".config"),
		},
	}
	for _, d := range []string{h.Workspace, h.DataDir, filepath.Join(home, "tmp"), filepath.Join(home, ".config", "superagents")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if o.Sub != nil {
		writeFile(t, filepath.Join(home, ".config", "superagents", "config.toml"), fmt.Sprintf(`model = "scripted/sub-agent"

[providers.scripted]
type = "anthropic"
base_url = %q
api_key_env = %q
`, o.Sub.URL, SubKeyEnv))
		h.serverEnv[SubKeyEnv] = o.Sub.Key
	}
	switch name {
	case ClaudeCode:
		h.Model = NewHostModel(t, Messages, o.Script)
		h.claudeCode(t, o)
	case Codex:
		h.Model = NewHostModel(t, Responses, o.Script)
		h.codex(t)
	case OpenCode:
		h.Model = NewHostModel(t, ChatCompletions, o.Script)
		h.openCode(t)
	}
	t.Cleanup(func() { StopServers(t, h.superagents, h.Home) })
	return h
}

// Run runs the host once, headless, with the prompt; session, when not
// empty, continues that conversation. It returns the conversation's id
// (empty when the output names none) and the run.
func (h *Host) Run(ctx context.Context, prompt, session string) (string, Result) {
	r := run(ctx, h.Workspace, h.env, h.Bin, h.args(prompt, session)...)
	return h.session(r.Stdout), r
}

// Superagents runs the superagents command against the host's server's
// data directory and configuration.
func (h *Host) Superagents(ctx context.Context, args ...string) Result {
	env := baseEnv(h.Home)
	for k, v := range h.serverEnv {
		env = append(env, k+"="+v)
	}
	return run(ctx, h.Workspace, env, h.superagents, args...)
}

// serverEnvJSON is the server's environment, for a JSON configuration.
func (h *Host) serverEnvJSON() map[string]string { return h.serverEnv }

// serverEnvTOML is the server's environment as a TOML inline table.
func (h *Host) serverEnvTOML() string {
	keys := make([]string, 0, len(h.serverEnv))
	for k := range h.serverEnv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%q = %q", k, h.serverEnv[k]))
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(b)+"\n")
}

// jsonLines calls f with each line of out that is a JSON object.
func jsonLines(out string, f func(map[string]any)) {
	for _, line := range strings.Split(out, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(strings.TrimSpace(line)), &m) == nil {
			f(m)
		}
	}
}
