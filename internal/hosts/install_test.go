package hosts_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/superagents/superagents/internal/hosttest"
)

// `superagents install|uninstall HOST` against the real hosts, each in a
// home of its own: Claude Code 2.1.328 (claude mcp add/remove, which
// write ~/.claude.json), Codex 0.169.0 (~/.codex/config.toml) and
// OpenCode 1.18.33 (opencode.json and the plugin). What install wrote is
// read back by the host itself (`HOST mcp list`).

// installHome is one host's home for the install tests.
type installHome struct {
	t                    *testing.T
	host, bin, sa, name  string
	home, workspace, dir string // dir: where the host commands are on PATH
	env                  []string
}

func newInstallHome(t *testing.T, host string) *installHome {
	t.Helper()
	bin := hosttest.Binary(t, host)
	home := t.TempDir()
	h := &installHome{t: t, host: host, bin: bin, sa: superagents(t), home: home,
		workspace: filepath.Join(home, "work"), dir: filepath.Join(home, "bin")}
	for _, d := range []string{h.workspace, h.dir, filepath.Join(home, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h.name = map[string]string{hosttest.ClaudeCode: "claude", hosttest.Codex: "codex", hosttest.OpenCode: "opencode"}[host]
	if err := os.Symlink(bin, filepath.Join(h.dir, h.name)); err != nil {
		t.Fatal(err)
	}
	h.env = []string{
		"HOME=" + home, "PATH=" + h.dir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"LANG=C.UTF-8", "TERM=dumb", "NO_COLOR=1", "TMPDIR=" + filepath.Join(home, "tmp"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"SUPERAGENTS_DATA_DIR=" + filepath.Join(home, "data"),
		// Claude Code offline
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		// OpenCode offline (its npm client at a closed port)
		"npm_config_registry=http://127.0.0.1:9/", "npm_config_offline=true",
		"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"OPENCODE_DISABLE_SHARE=1", "OPENCODE_DISABLE_CLAUDE_CODE=1", "OPENCODE_PURE=1",
	}
	t.Cleanup(func() { hosttest.StopServers(t, h.sa, home) })
	return h
}

// run runs a command in the workspace with the home's environment.
func (h *installHome) run(name string, args ...string) hosttest.Result {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = h.workspace, h.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	return hosttest.Result{Stdout: stdout.String(), Stderr: stderr.String(), Err: err}
}

// superagents runs superagents (install or uninstall) and fails the test
// when it fails.
func (h *installHome) superagents(args ...string) string {
	h.t.Helper()
	r := h.run(h.sa, args...)
	if r.Err != nil {
		h.t.Fatalf("superagents %s: %s", strings.Join(args, " "), r)
	}
	return r.Stdout
}

// listed runs the host's `mcp list` and returns the names of the servers
// it shows.
func (h *installHome) listed() string {
	h.t.Helper()
	r := h.run(filepath.Join(h.dir, h.name), "mcp", "list")
	if r.Err != nil {
		h.t.Fatalf("%s mcp list: %s", h.host, r)
	}
	return r.Stdout + r.Stderr
}

// path is a path in the home.
func (h *installHome) path(rel string) string { return filepath.Join(h.home, rel) }

func (h *installHome) write(rel, content string) {
	h.t.Helper()
	p := h.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		h.t.Fatal(err)
	}
}

// snapshot reads the files (absent ones as "<none>").
func (h *installHome) snapshot(rels []string) map[string]string {
	out := map[string]string{}
	for _, rel := range rels {
		b, err := os.ReadFile(h.path(rel))
		if err != nil {
			out[rel] = "<none>"
			continue
		}
		out[rel] = string(b)
	}
	return out
}

func (h *installHome) sameFiles(what string, rels []string, want map[string]string) {
	h.t.Helper()
	got := h.snapshot(rels)
	for _, rel := range rels {
		if got[rel] != want[rel] {
			h.t.Errorf("%s changed %s:\n--- before\n%s\n--- after\n%s", what, rel, want[rel], got[rel])
		}
	}
}

// installCase is one configuration install starts from.
type installCase struct {
	name string
	args []string // install's flags
	seed func(h *installHome)
	// files are the files install and uninstall may touch, relative to
	// the home; byte for byte as before once uninstalled unless the host
	// rewrites them itself (Claude Code).
	files []string
	// own: the configuration (files[0]) holds a superagents entry of the
	// user's, which install and uninstall keep.
	own bool
	// other is a server of the user's that must survive.
	other string
}

// installRound runs install and uninstall from one configuration, and
// checks them against the host.
func installRound(t *testing.T, host string, c installCase, verify func(h *installHome, before map[string]string)) {
	h := newInstallHome(t, host)
	if c.seed != nil {
		c.seed(h)
	}
	before := h.snapshot(c.files)
	install := append([]string{"install", host}, c.args...)
	uninstall := append([]string{"uninstall", host}, c.args...)

	h.superagents(append(install, "--print")...)
	h.sameFiles("install --print", c.files, before)

	out := h.superagents(install...)
	listed := h.listed()
	if !strings.Contains(listed, "superagents") {
		t.Errorf("%s mcp list does not show superagents after install (%s):\n%s", host, out, listed)
	}
	if c.other != "" && !strings.Contains(listed, c.other) {
		t.Errorf("%s mcp list lost the server %s:\n%s", host, c.other, listed)
	}
	after := h.snapshot(c.files)
	if out := h.superagents(install...); !strings.Contains(out, "Nothing to change.") {
		t.Errorf("install again: %s", out)
	}
	h.sameFiles("install again", c.files, after)
	if c.own && host != hosttest.ClaudeCode { // Claude Code rewrites its file itself
		h.sameFiles("install over the user's own entry", c.files[:1], before)
	}
	if c.own && !strings.Contains(out, "kept as it is") {
		t.Errorf("install does not say it kept the user's entry: %s", out)
	}

	h.superagents(append(uninstall, "--print")...)
	h.sameFiles("uninstall --print", c.files, after)
	out = h.superagents(uninstall...)
	if c.own && !strings.Contains(out, "not the one install adds") {
		t.Errorf("uninstall does not say it left the user's entry: %s", out)
	}
	listed = h.listed()
	if strings.Contains(listed, "superagents") != c.own {
		t.Errorf("%s mcp list after uninstall (own entry: %v):\n%s", host, c.own, listed)
	}
	if c.other != "" && !strings.Contains(listed, c.other) {
		t.Errorf("%s mcp list lost the server %s after uninstall:\n%s", host, c.other, listed)
	}
	verify(h, before)
}

func TestInstallOpenCode(t *testing.T) {
	project := []string{"work/opencode.json", "work/.opencode/plugin/superagents.ts"}
	global := []string{".config/opencode/opencode.json", ".config/opencode/plugin/superagents.ts"}
	existing := `{
  "$schema": "https://opencode.ai/config.json",
  "autoupdate": false,
  "mcp": {
    "other-server": {"type": "local", "command": ["true"], "enabled": false}
  }
}
`
	cases := []installCase{
		{name: "fresh", files: project},
		{name: "existing", args: []string{"--global"}, files: global, other: "other-server", seed: func(h *installHome) {
			h.write(global[0], existing)
		}},
		{name: "own", files: project, own: true, seed: func(h *installHome) {
			h.write(project[0], `{"$schema": "https://opencode.ai/config.json", "mcp": {"superagents": {"type": "local", "command": ["superagents", "mcp", "--host", "opencode"]}}}`+"\n")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			installRound(t, hosttest.OpenCode, c, func(h *installHome, before map[string]string) {
				h.sameFiles("install then uninstall", c.files, before)
			})
		})
	}
}

func TestInstallCodex(t *testing.T) {
	files := []string{".codex/config.toml"}
	cases := []installCase{
		{name: "fresh", files: files},
		{name: "existing", files: files, other: "other-server", seed: func(h *installHome) {
			h.write(files[0], `# my settings
model = "gpt-5.1-codex"
approval_policy = "on-request"

[mcp_servers.other-server]
command = "true"
enabled = false

[tui]
notifications = true
`)
		}},
		{name: "own", files: files, own: true, seed: func(h *installHome) {
			h.write(files[0], "[mcp_servers.superagents]\ncommand = \"superagents\"\nargs = [\"mcp\", \"--host\", \"codex\"]\n")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			installRound(t, hosttest.Codex, c, func(h *installHome, before map[string]string) {
				h.sameFiles("install then uninstall", c.files, before)
			})
		})
	}
}

// claudeServers are the MCP servers of ~/.claude.json: the user's, and
// those of the workspace's project (scope local).
func claudeServers(t *testing.T, src, workspace string) (user, local map[string]any, rest map[string]any) {
	t.Helper()
	var cfg map[string]any
	if src == "<none>" {
		return nil, nil, nil
	}
	if err := json.Unmarshal([]byte(src), &cfg); err != nil {
		t.Fatalf(".claude.json: %v\n%s", err, src)
	}
	user, _ = cfg["mcpServers"].(map[string]any)
	projects, _ := cfg["projects"].(map[string]any)
	project, _ := projects[workspace].(map[string]any)
	local, _ = project["mcpServers"].(map[string]any)
	return user, local, cfg
}

func TestInstallClaudeCode(t *testing.T) {
	files := []string{".claude.json"}
	cases := []installCase{
		{name: "fresh", files: files},
		{name: "existing", args: []string{"--global"}, files: files, other: "other-server", seed: func(h *installHome) {
			h.write(files[0], `{"editorMode": "vim", "autoCompactEnabled": false, "mcpServers": {"other-server": {"type": "stdio", "command": "true", "args": [], "env": {}}}}`)
		}},
		{name: "own", files: files, own: true, seed: func(h *installHome) {
			h.write(files[0], `{"projects": {"`+h.workspace+`": {"mcpServers": {"superagents": {"type": "stdio", "command": "superagents", "args": ["mcp", "--host", "claude-code"], "env": {}}}}}}`)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			installRound(t, hosttest.ClaudeCode, c, func(h *installHome, before map[string]string) {
				// Claude Code rewrites .claude.json itself (its start
				// time, migrations...): its servers and the user's
				// settings are as before.
				after := h.snapshot(files)
				bu, bl, bcfg := claudeServers(t, before[files[0]], h.workspace)
				au, al, acfg := claudeServers(t, after[files[0]], h.workspace)
				if len(au)+len(bu) > 0 && !sameJSONValue(au, bu) || len(al)+len(bl) > 0 && !sameJSONValue(al, bl) {
					t.Errorf("the servers after uninstall are not those before:\nbefore %v %v\nafter  %v %v", bu, bl, au, al)
				}
				for k, v := range bcfg {
					if k != "mcpServers" && k != "projects" && !sameJSONValue(acfg[k], v) {
						t.Errorf(".claude.json %s: %v, before %v", k, acfg[k], v)
					}
				}
			})
		})
	}
}

func sameJSONValue(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}
