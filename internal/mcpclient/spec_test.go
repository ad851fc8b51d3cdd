package mcpclient

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/superagents/superagents/internal/config"
)

// The .mcp.json shape is Claude Code's project-scope file (its MCP
// documentation, "Project scope" and "Environment variable expansion in
// .mcp.json"): {"mcpServers": {NAME: {"command", "args", "env"} or
// {"type": "http"|"sse", "url", "headers"}}}, with ${VAR} and
// ${VAR:-default} expanded in command, args, env, url and headers. Cursor
// writes the same object and may leave out "type" for a URL.

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

func TestParseServers(t *testing.T) {
	vars := map[string]string{"TOKEN": "s3cret-token", "DIR": "/data", "HOST": "mcp.example.com"}
	tests := []struct {
		name    string
		json    string
		want    Spec
		wantErr string // in Spec.Err
	}{
		{
			name: "stdio with expansion",
			json: `{"command": "npx", "args": ["-y", "server", "${DIR}", "${MISSING:-fallback}"], "env": {"API_TOKEN": "${TOKEN}"}}`,
			want: Spec{Type: Stdio, Command: "npx", Args: []string{"-y", "server", "/data", "fallback"}, Env: map[string]string{"API_TOKEN": "s3cret-token"},
				Display: "npx -y server ${DIR} ${MISSING:-fallback}"},
		},
		{
			name: "explicit stdio type",
			json: `{"type": "stdio", "command": "srv"}`,
			want: Spec{Type: Stdio, Command: "srv", Display: "srv"},
		},
		{
			name: "http with headers",
			json: `{"type": "http", "url": "https://${HOST}/mcp?key=${TOKEN}", "headers": {"Authorization": "Bearer ${TOKEN}"}}`,
			want: Spec{Type: HTTP, URL: "https://mcp.example.com/mcp?key=s3cret-token", Headers: map[string]string{"Authorization": "Bearer s3cret-token"},
				Display: "https://${HOST}/mcp"},
		},
		{
			name: "url without type is http (as Cursor writes it)",
			json: `{"url": "http://127.0.0.1:3001/mcp"}`,
			want: Spec{Type: HTTP, URL: "http://127.0.0.1:3001/mcp", Display: "http://127.0.0.1:3001/mcp"},
		},
		{
			name: "sse",
			json: `{"type": "sse", "url": "https://example.com/sse"}`,
			want: Spec{Type: SSE, URL: "https://example.com/sse", Display: "https://example.com/sse"},
		},
		{
			name: "keys of other hosts are ignored",
			json: `{"command": "srv", "alwaysAllow": ["x"], "timeout": 5}`,
			want: Spec{Type: Stdio, Command: "srv", Display: "srv"},
		},
		{name: "no command", json: `{"args": ["x"]}`, wantErr: `server "s": a stdio server needs a "command"`},
		{name: "http without url", json: `{"type": "http"}`, wantErr: `a server of type "http" needs a "url"`},
		{name: "unknown type", json: `{"type": "ws", "url": "ws://x"}`, wantErr: `unknown type "ws"`},
		{name: "stdio with url", json: `{"command": "x", "url": "http://a"}`, wantErr: `takes no "url"`},
		{name: "http with command", json: `{"type": "sse", "url": "http://a", "command": "x"}`, wantErr: `takes no "command"`},
		{name: "missing variable", json: `{"command": "x", "env": {"K": "${NOPE}", "L": "${NOPE2}"}}`, wantErr: `${NOPE}`},
		{name: "bad url", json: `{"type": "http", "url": "ftp://${TOKEN}"}`, wantErr: `not an http:// or https:// URL`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defs, err := parseJSON("/p/.mcp.json", []byte(`{"mcpServers": {"s": `+tt.json+`}}`), true)
			if err != nil {
				t.Fatal(err)
			}
			got := newSpec("s", defs["s"], env(vars))
			if tt.wantErr != "" {
				if got.Err == nil || !strings.Contains(got.Err.Error(), tt.wantErr) || !strings.Contains(got.Err.Error(), "/p/.mcp.json") {
					t.Fatalf("error %v, want one naming the file and %q", got.Err, tt.wantErr)
				}
				if strings.Contains(got.Err.Error(), "s3cret") {
					t.Fatalf("error shows a secret: %v", got.Err)
				}
				return
			}
			if got.Err != nil {
				t.Fatal(got.Err)
			}
			tt.want.Name, tt.want.Origin, tt.want.Project = "s", "/p/.mcp.json", true
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreUnexported(Spec{})); diff != "" {
				t.Fatalf("spec (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, json, want string
	}{
		{"syntax", "{\n  \"mcpServers\": {,\n}", "/p/.mcp.json: not valid JSON with an \"mcpServers\" object: syntax error on line 2"},
		{"servers not an object", `{"mcpServers": []}`, "not valid JSON"},
		{"server not an object", `{"mcpServers": {"a": "npx"}}`, `/p/.mcp.json: server "a": want an object, not a JSON string`},
		{"args of the wrong type", `{"mcpServers": {"a": {"command": "x", "args": "y"}}}`, `server "a": "args": want []string, not a JSON string`},
		{"env value of the wrong type", `{"mcpServers": {"a": {"command": "x", "env": {"K": 1}}}}`, `server "a": "env": want string, not a JSON number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseJSON("/p/.mcp.json", []byte(tt.json), true)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestBadServerName(t *testing.T) {
	got := newSpec("has space", config.MCPServer{Command: "x", Origin: "f"}, env(nil))
	if got.Err == nil || !strings.Contains(got.Err.Error(), "1 to 32 letters") {
		t.Fatalf("error %v", got.Err)
	}
}

// TestLoadPrecedence: the project's .mcp.json wins over config.toml, which
// wins over the user's mcp.json; a broken file is a problem, not a stop.
func TestLoadPrecedence(t *testing.T) {
	ws, user := t.TempDir(), t.TempDir()
	write := func(path, s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(user, UserFile), `{"mcpServers": {"a": {"command": "user-a"}, "b": {"command": "user-b"}, "u": {"command": "user-u"}}}`)
	write(filepath.Join(ws, ProjectFile), `{"mcpServers": {"a": {"command": "project-a"}}}`)
	cfg := config.MCP{Servers: map[string]config.MCPServer{"b": {Command: "toml-b", Origin: "/home/config.toml"}}}
	got := Load(Sources{Workspace: ws, UserDir: user, Config: cfg, LookupEnv: env(nil)})
	if len(got.Problems) > 0 {
		t.Fatal(got.Problems)
	}
	want := map[string]string{"a": "project-a", "b": "toml-b", "u": "user-u"}
	for _, s := range got.List {
		if want[s.Name] != s.Command {
			t.Errorf("%s: command %q, want %q", s.Name, s.Command, want[s.Name])
		}
		if s.Project != (s.Name == "a") {
			t.Errorf("%s: project = %v", s.Name, s.Project)
		}
	}
	if !got.HasProject() || got.ProjectHash == "" {
		t.Fatal("no project hash")
	}
	// Same definitions, same hash; changed ones, a new hash.
	again := Load(Sources{Workspace: ws, UserDir: user, Config: cfg, LookupEnv: env(nil)})
	write(filepath.Join(ws, ProjectFile), `{"mcpServers": {"a": {"command": "project-a", "args": ["--evil"]}}}`)
	changed := Load(Sources{Workspace: ws, UserDir: user, Config: cfg, LookupEnv: env(nil)})
	if again.ProjectHash != got.ProjectHash || changed.ProjectHash == got.ProjectHash {
		t.Fatal("the project hash does not follow the definitions")
	}
	write(filepath.Join(ws, ProjectFile), `{"mcpServers": `)
	broken := Load(Sources{Workspace: ws, UserDir: user, Config: cfg, LookupEnv: env(nil)})
	if len(broken.Problems) != 1 || len(broken.List) != 3 || broken.HasProject() {
		t.Fatalf("broken project file: %d problems, %d servers", len(broken.Problems), len(broken.List))
	}
}

// A .mcp.json that is a dangling link or a directory is a problem naming
// it, not a project without servers.
func TestLoadUnreadableFile(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(path string) error
		want  string
	}{
		{"dangling symbolic link", func(path string) error { return os.Symlink(path+".moved", path) }, "which does not exist"},
		{"directory", func(path string) error { return os.Mkdir(path, 0o755) }, "it is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			path := filepath.Join(ws, ProjectFile)
			if err := tt.spoil(path); err != nil {
				t.Fatal(err)
			}
			got := Load(Sources{Workspace: ws, LookupEnv: env(nil)})
			if len(got.Problems) != 1 || !strings.Contains(got.Problems[0].Error(), path+": cannot be read: ") || !strings.Contains(got.Problems[0].Error(), tt.want) {
				t.Fatalf("problems %v, want one naming %s and saying %q", got.Problems, path, tt.want)
			}
		})
	}
}

func TestTrustStore(t *testing.T) {
	store := NewTrustStore(filepath.Join(t.TempDir(), "data"))
	if ok, err := store.Trusted("/p", "h1"); ok || err != nil {
		t.Fatalf("empty store: %v %v", ok, err)
	}
	if err := store.Remember("/p/", "h1", true); err != nil {
		t.Fatal(err)
	}
	if err := store.Remember("/q", "h1", false); err != nil {
		t.Fatal(err)
	}
	if trusted, asked, err := store.Answer("/q", "h1"); trusted || !asked || err != nil {
		t.Fatalf("a refusal is remembered: %v %v %v", trusted, asked, err)
	}
	if _, asked, _ := store.Answer("/q", "h2"); asked {
		t.Fatal("an answer about other definitions counts")
	}
	for _, tt := range []struct {
		dir, hash string
		want      bool
	}{{"/p", "h1", true}, {"/p", "h2", false}, {"/q", "h1", false}} {
		if ok, err := store.Trusted(tt.dir, tt.hash); ok != tt.want || err != nil {
			t.Errorf("Trusted(%s, %s) = %v, %v", tt.dir, tt.hash, ok, err)
		}
	}
}

func TestToolName(t *testing.T) {
	tests := []struct{ server, tool, want string }{
		{"fs", "read_text_file", "mcp__fs__read_text_file"},
		{"github", "get.issue/v2", "mcp__github__get_issue_v2"},
	}
	for _, tt := range tests {
		if got := ToolName(tt.server, tt.tool); got != tt.want {
			t.Errorf("ToolName(%s, %s) = %s", tt.server, tt.tool, got)
		}
	}
	long := ToolName("server", strings.Repeat("x", 80))
	if len(long) != 64 || long == ToolName("server", strings.Repeat("x", 81)) {
		t.Fatalf("long names: %s", long)
	}
}

// FuzzParseJSON: no input makes parsing or checking panic, and every
// server that parses either has a transport or says what is wrong.
func FuzzParseJSON(f *testing.F) {
	f.Add(`{"mcpServers": {"a": {"command": "x", "args": ["${A:-b}"]}}}`)
	f.Add(`{"mcpServers": {"a": {"type": "http", "url": "https://h/${X}", "headers": {"k": "${Y}"}}}}`)
	f.Add(`{"mcpServers": {"a": 1}}`)
	f.Add(`{`)
	f.Fuzz(func(t *testing.T, data string) {
		defs, _ := parseJSON("f", []byte(data), true)
		for name, def := range defs {
			s := newSpec(name, def, env(map[string]string{"A": "1"}))
			if s.Err == nil && s.Type != Stdio && s.Type != HTTP && s.Type != SSE {
				t.Fatalf("spec %q has type %q and no error", name, s.Type)
			}
		}
	})
}
