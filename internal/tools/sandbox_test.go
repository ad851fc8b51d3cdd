package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/superagents/superagents/internal/sandboxtest"
	"github.com/superagents/superagents/sandbox"
)

// TestBashSandbox runs the bash tool's commands under each sandbox
// setting. The sandbox's temporary directory is one of the test's own, so
// that a directory outside both it and the workspace can be written to
// when the sandbox is off.
func TestBashSandbox(t *testing.T) {
	sandboxtest.Require(t, true)
	connect := fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%d && head -n 1 <&3`, sandboxtest.Listen(t, "listener says hi"))

	tests := []struct {
		name    string
		policy  sandbox.Policy
		command string // OUT is a directory outside the workspace
		want    []string
		isError bool
	}{
		{"a write inside works", sandbox.Policy{}, `echo x > inside && cat inside`, []string{"x\n[exit code 0]"}, false},
		{"a write outside is refused", sandbox.Policy{}, `echo x > "$OUT"/f`,
			[]string{"Permission denied", "[exit code ", "[sandbox: this command ran in the workspace-write sandbox", "[sandbox] writable", `[sandbox] mode = "off"`}, true},
		{"a script's write outside is refused", sandbox.Policy{}, `printf 'echo x > "$1"/f\n' > w.sh && sh w.sh "$OUT"`,
			[]string{"Permission denied", "[sandbox: "}, true},
		{"a writable directory", sandbox.Policy{Writable: []string{"OUT"}}, `echo x > "$OUT"/f && echo wrote`, []string{"wrote\n[exit code 0]"}, false},
		{"a connection is refused", sandbox.Policy{}, connect, []string{"Permission denied", "[sandbox] network = true"}, true},
		{"network = true", sandbox.Policy{Network: true}, connect, []string{"listener says hi\n[exit code 0]"}, false},
		{"read-only refuses writes inside", sandbox.Policy{Mode: sandbox.ReadOnly}, `echo x > inside`,
			[]string{"Permission denied", "read-only sandbox", `[sandbox] mode = "workspace-write"`}, true},
		{"off writes outside", sandbox.Policy{Mode: sandbox.Off}, `echo x > "$OUT"/f && echo wrote`, []string{"wrote\n[exit code 0]"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			p := tc.policy
			p.TempDirs = []string{t.TempDir()}
			if len(p.Writable) > 0 {
				p.Writable = []string{out}
			}
			env := []string{"PATH=" + os.Getenv("PATH"), "OUT=" + out}
			_, set := newTestWorkspace(t, nil, Options{Sandbox: p, Bash: BashOptions{Env: env}})
			res := call(t, set, Bash, obj{"command": tc.command})
			for _, want := range tc.want {
				if !strings.Contains(res.Output, want) {
					t.Errorf("output lacks %q:\n%s", want, res.Output)
				}
			}
			if res.IsError != tc.isError {
				t.Errorf("IsError = %v, want %v:\n%s", res.IsError, tc.isError, res.Output)
			}
			_, err := os.Stat(filepath.Join(out, "f"))
			if wrote, want := err == nil, strings.Contains(tc.command, `"$OUT"/f`) && !tc.isError; wrote != want {
				t.Errorf("wrote outside the workspace: %v, want %v", wrote, want)
			}
		})
	}
}

// TestFileToolsInReadOnlySandbox: write and edit refuse as bash does, and
// say how the user can allow writes; read still works.
func TestFileToolsInReadOnlySandbox(t *testing.T) {
	policy := sandbox.Policy{Mode: sandbox.ReadOnly, ModeSource: `the agent profile "reviewer"`}
	ws, set := newTestWorkspace(t, map[string]string{"a.txt": "old\n"}, Options{Sandbox: policy})
	for _, tc := range []struct {
		tool  string
		input obj
	}{
		{Write, obj{"path": "new.txt", "content": "x"}},
		{Edit, obj{"path": "a.txt", "old_string": "old", "new_string": "new"}},
	} {
		res := call(t, set, tc.tool, tc.input)
		for _, want := range []string{"the sandbox is read-only", `set by the agent profile "reviewer"`, `[sandbox] mode = "workspace-write"`} {
			if !res.IsError || !strings.Contains(res.Output, want) {
				t.Errorf("%s: got %+v, want an error with %q", tc.tool, res, want)
			}
		}
	}
	if data, _ := os.ReadFile(filepath.Join(ws.Dir(), "a.txt")); string(data) != "old\n" {
		t.Errorf("a.txt changed: %q", data)
	}
	if _, err := os.Stat(filepath.Join(ws.Dir(), "new.txt")); err == nil {
		t.Error("new.txt written")
	}
	if res := call(t, set, Read, obj{"path": "a.txt"}); res.IsError {
		t.Errorf("read refused: %+v", res)
	}
	// In workspace-write mode they write.
	_, set = newTestWorkspace(t, nil, Options{})
	if res := call(t, set, Write, obj{"path": "new.txt", "content": "x"}); res.IsError {
		t.Errorf("write refused in workspace-write mode: %+v", res)
	}
}

// BenchmarkBashSandbox is the cost the sandbox adds to one bash call: the
// same command with the sandbox off and in each mode.
//
// "workspace-write/project": a workspace with every protected path
// (.superagents, .mcp.json, .git/config, .git/hooks), each kept
// read-only by a mount of its own.
func BenchmarkBashSandbox(b *testing.B) {
	project := map[string]string{".superagents/config.toml": "", ".mcp.json": "{}", ".git/config": "", ".git/hooks/README": "", ".git/HEAD": "ref: refs/heads/main\n"}
	for _, tc := range []struct {
		name  string
		mode  sandbox.Mode
		files map[string]string
	}{
		{"off", sandbox.Off, nil},
		{"workspace-write", sandbox.WorkspaceWrite, nil},
		{"workspace-write/project", sandbox.WorkspaceWrite, project},
		{"read-only", sandbox.ReadOnly, nil},
	} {
		b.Run(tc.name, func(b *testing.B) {
			_, set := newTestWorkspace(b, tc.files, Options{Sandbox: sandbox.Policy{Mode: tc.mode}})
			input := []byte(`{"command":"true"}`)
			for b.Loop() {
				res, err := set.Call(context.Background(), Bash, input)
				if err != nil || res.IsError {
					b.Fatalf("%+v %v", res, err)
				}
			}
		})
	}
}

// TestSandboxNote: the bash tool tells the model what the sandbox allows,
// and never that commands are sandboxed where the system does not
// enforce it.
func TestSandboxNote(t *testing.T) {
	tests := []struct {
		name                            string
		mode                            sandbox.Mode
		enforced, noNetwork, netEnforce bool
		want                            []string
		not                             []string
	}{
		{"off", sandbox.Off, false, false, false, nil, nil},
		{"enforced", sandbox.WorkspaceWrite, true, true, true,
			[]string{"Commands run in a sandbox", "write only in the workspace", "open no network connection", "A refused write or connection"}, []string{"not sandboxed"}},
		{"network allowed", sandbox.WorkspaceWrite, true, false, true,
			[]string{"Commands run in a sandbox", "A refused write fails"}, []string{"network", "connection fails"}},
		{"read-only", sandbox.ReadOnly, true, true, true,
			[]string{"read-only sandbox", "write none", "open no network connection"}, []string{"not sandboxed"}},
		{"no network rules", sandbox.WorkspaceWrite, true, true, false,
			[]string{"Commands run in a sandbox", "cannot refuse network connections", "A refused write fails"}, []string{"refused write or connection"}},
		{"not enforced", sandbox.WorkspaceWrite, false, true, false,
			[]string{"Commands are not sandboxed", "workspace-write sandbox", "all of the user's rights", "write only in the workspace", "open no network connection"},
			[]string{"Commands run in a sandbox", "Permission denied"}},
		{"not enforced, read-only", sandbox.ReadOnly, false, false, false,
			[]string{"Commands are not sandboxed", "read-only sandbox", "write no file"}, []string{"Commands run in", "network"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			note := sandboxNote(tc.mode, tc.enforced, tc.noNetwork, tc.netEnforce)
			if tc.want == nil && note != "" {
				t.Fatalf("note %q, want none", note)
			}
			for _, w := range tc.want {
				if !strings.Contains(note, w) {
					t.Errorf("note lacks %q: %q", w, note)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(note, w) {
					t.Errorf("note has %q: %q", w, note)
				}
			}
		})
	}
}

// TestFileToolsLeaveProtectedPathsAlone: write and edit refuse the
// paths that name programs run outside the sandbox (the project's
// configuration, its MCP servers, git's configuration and hooks, a
// worktree's .git file), by any path that leads there, and write the
// rest of the workspace as before.
func TestFileToolsLeaveProtectedPathsAlone(t *testing.T) {
	files := map[string]string{
		".superagents/config.toml": "model = \"offline/echo\"\n",
		".mcp.json":                "{}\n",
		".git/config":              "[core]\n",
		".git/hooks/README":        "hooks\n",
		"a.txt":                    "old\n",
	}
	ws, set := newTestWorkspace(t, files, Options{})
	if err := os.Symlink(".git", filepath.Join(ws.Dir(), "g")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		tool  string
		input obj
	}{
		{"the project's configuration", Write, obj{"path": ".superagents/config.toml", "content": "x"}},
		{"an agent profile", Write, obj{"path": ".superagents/agents/evil.md", "content": "x"}},
		{"the MCP servers, edited", Edit, obj{"path": ".mcp.json", "old_string": "{}", "new_string": `{"mcpServers":{}}`}},
		{"a git hook", Write, obj{"path": ".git/hooks/pre-commit", "content": "x"}},
		{"git's configuration, by an absolute path", Edit, obj{"path": filepath.Join(ws.Dir(), ".git/config"), "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = x"}},
		{"a git hook through a link to .git", Write, obj{"path": "g/hooks/post-checkout", "content": "x"}},
		{"another repository's configuration", Write, obj{"path": ".git/commondir", "content": "/tmp/evil"}},
		{"a .git file", Write, obj{"path": "sub/../.git", "content": "gitdir: /tmp/evil"}},
		{"through ..", Write, obj{"path": "x/../.mcp.json", "content": "x"}},
		{"in other case (one file on macOS)", Write, obj{"path": ".Superagents/config.toml", "content": "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, set, tc.tool, tc.input)
			if !res.IsError || !strings.Contains(res.Output, "is protected") || !strings.Contains(res.Output, "tell the user") {
				t.Errorf("got %+v, want a refusal", res)
			}
		})
	}
	for name, text := range files {
		if data, _ := os.ReadFile(filepath.Join(ws.Dir(), name)); string(data) != text {
			t.Errorf("%s changed: %q", name, data)
		}
	}
	for _, name := range []string{".superagents/agents", ".Superagents", ".git/hooks/pre-commit", ".git/hooks/post-checkout", ".git/commondir"} {
		if _, err := os.Lstat(filepath.Join(ws.Dir(), name)); err == nil {
			t.Errorf("%s was written", name)
		}
	}
	for _, in := range []obj{
		{"path": ".superagents-notes.md", "content": "x"},
		{"path": ".gitignore", "content": "x"},
		{"path": "docs/.git-notes", "content": "x"},
	} {
		if res := call(t, set, Write, in); res.IsError {
			t.Errorf("write %s refused: %+v", in["path"], res)
		}
	}
	if res := call(t, set, Edit, obj{"path": "a.txt", "old_string": "old", "new_string": "new"}); res.IsError {
		t.Errorf("edit refused: %+v", res)
	}
}

// TestBashProtectedPaths: a command cannot change the project's MCP
// servers, and one it creates is moved aside when it ends, its output
// saying so.
func TestBashProtectedPaths(t *testing.T) {
	sandboxtest.Require(t, false)
	env := []string{"PATH=" + os.Getenv("PATH")}
	ws, set := newTestWorkspace(t, nil, Options{Sandbox: sandbox.Policy{TempDirs: []string{t.TempDir()}}, Bash: BashOptions{Env: env}})
	res := call(t, set, Bash, obj{"command": `echo '{"mcpServers":{"x":{"command":"sh"}}}' > .mcp.json && echo wrote`})
	for _, want := range []string{"wrote", "[sandbox: this command created or replaced " + filepath.Join(ws.Dir(), ".mcp.json"), ".refused-by-sandbox", "Tell the user"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("output lacks %q:\n%s", want, res.Output)
		}
	}
	if !res.IsError {
		t.Errorf("IsError = false:\n%s", res.Output)
	}
	if _, err := os.Stat(filepath.Join(ws.Dir(), ".mcp.json")); err == nil {
		t.Error(".mcp.json is still there")
	}
	if !sandboxtest.Isolates(t) {
		return
	}
	if err := os.WriteFile(filepath.Join(ws.Dir(), ".mcp.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = call(t, set, Bash, obj{"command": `echo '{"mcpServers":{}}' > .mcp.json`})
	for _, want := range []string{"Read-only file system", "but not .superagents, .mcp.json"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("output lacks %q:\n%s", want, res.Output)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(ws.Dir(), ".mcp.json")); string(data) != "{}\n" {
		t.Errorf(".mcp.json changed: %q", data)
	}
}
