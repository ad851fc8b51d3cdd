package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/agents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/engine"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/sqlite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newEngine builds an engine over a real store and workspace, with the
// configuration loaded from files like the CLI does.
func newEngine(t *testing.T, projectConfig string, env map[string]string) (*engine.Engine, string) {
	t.Helper()
	ws := t.TempDir()
	if projectConfig != "" {
		if err := os.MkdirAll(filepath.Join(ws, ".superagents"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, ".superagents", "config.toml"), []byte(projectConfig), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Trusted, as the project's file sets the offline model's script.
	cfg, err := config.Load(config.Options{Workspace: ws, UserDir: t.TempDir(), TrustProject: true, LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.OpenDir(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var bashEnv []string
	for k, v := range env {
		bashEnv = append(bashEnv, k+"="+v)
	}
	eng, problems, err := engine.New(engine.Options{Store: st, Config: cfg, Workspace: ws,
		AgentDirs: agents.Dirs{Project: agents.ProjectDir(ws)}, BashEnv: append(bashEnv, "PATH="+os.Getenv("PATH"))})
	if err != nil || len(problems) > 0 {
		t.Fatalf("engine: %v %v", err, problems)
	}
	t.Cleanup(func() { eng.Close() })
	return eng, ws
}

func newSession(t *testing.T, eng *engine.Engine, agent, model string) sa.Session {
	t.Helper()
	s, err := eng.Store.CreateSession(context.Background(), sa.NewSession{Agent: agent, Model: model})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestKeysNeverReachBash: every key variable a configuration names, not
// only the built-in ones, is kept from the commands an agent runs.
func TestKeysNeverReachBash(t *testing.T) {
	script := filepath.Join(t.TempDir(), "leak.toml")
	err := os.WriteFile(script, []byte(`
[[rules]]
contains = "leak"
step = 1
tool_calls = [{ name = "bash", input = { command = "echo work=[$WORK_KEY] anthropic=[$ANTHROPIC_API_KEY] path=[${PATH:+set}]" } }]

[[rules]]
after_tool = "bash"
reply = "{{last_tool_result}}"
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	eng, _ := newEngine(t, `model = "offline"
[providers.offline]
script = "`+script+`"
[providers.work]
type = "openai"
base_url = "http://127.0.0.1:9/v1"
api_key_env = "WORK_KEY"
`, map[string]string{"WORK_KEY": "sk-work-secret", "ANTHROPIC_API_KEY": "sk-ant-secret"})
	s := newSession(t, eng, "general", "")
	out, err := eng.Run(context.Background(), s.ID, engine.TurnOptions{}, engine.UserMessage("leak the keys"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Text, "work=[] anthropic=[] path=[set]") {
		t.Fatalf("bash saw %q: key variables must be empty, PATH kept", out.Text)
	}
}

// TestProfileToolsReachTheModel: the explore profile offers only its
// read-only tools, and read_only in the permissions removes the others.
func TestProfileToolsReachTheModel(t *testing.T) {
	tests := []struct {
		name   string
		agent  string
		config string
		want   []string
	}{
		{"general gets every built-in tool", "general", "", []string{"bash", "edit", "glob", "grep", "ls", "read", "write"}},
		{"explore is read-only", "explore", "", []string{"glob", "grep", "ls", "read"}},
		{"read_only permission wins over the profile", "general", "[permissions]\nread_only = true\n", []string{"glob", "grep", "ls", "read"}},
		{"per-agent permission", "general", "[permissions.agents.general]\nread_only = true\n", []string{"glob", "grep", "ls", "read"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewAnthropic(t)
			srv.Push(llmtest.Reply{Text: "ok"})
			eng, _ := newEngine(t, tt.config, map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.BaseURL()})
			s := newSession(t, eng, tt.agent, "anthropic/claude-test")
			if _, err := eng.Run(context.Background(), s.ID, engine.TurnOptions{}, engine.UserMessage("hi")); err != nil {
				t.Fatal(err)
			}
			var body struct {
				System any `json:"system"`
				Tools  []struct {
					Name string `json:"name"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range body.Tools {
				names = append(names, tool.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, tt.want) {
				t.Fatalf("tools sent = %v, want %v", names, tt.want)
			}
			if sys, _ := json.Marshal(body.System); !strings.Contains(string(sys), "Workspace") {
				t.Fatalf("system prompt %s does not say where the workspace is", sys)
			}
		})
	}
}

func TestModelPrecedence(t *testing.T) {
	eng, ws := newEngine(t, `model = "ollama/from-config"`, nil)
	if err := os.MkdirAll(agents.ProjectDir(ws), 0o755); err != nil {
		t.Fatal(err)
	}
	profileFile := filepath.Join(agents.ProjectDir(ws), "pinned.md")
	if err := os.WriteFile(profileFile, []byte("---\ndescription: pinned\nmodel: vllm/from-profile\n---\nBe brief.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eng2, _, err := engine.New(engine.Options{Store: eng.Store, Config: eng.Config, Workspace: ws, AgentDirs: agents.Dirs{Project: agents.ProjectDir(ws)}})
	if err != nil {
		t.Fatal(err)
	}
	defer eng2.Close()
	pinned, err := eng2.Profile("pinned")
	if err != nil {
		t.Fatal(err)
	}
	general, _ := eng2.Profile("")
	tests := []struct {
		name     string
		sess     sa.Session
		profile  string
		override string
		want     string
	}{
		{"configured default", sa.Session{}, "general", "", "ollama/from-config"},
		{"profile over config", sa.Session{}, "pinned", "", "vllm/from-profile"},
		{"session over profile", sa.Session{Model: "lmstudio/from-session"}, "pinned", "", "lmstudio/from-session"},
		{"turn override over all", sa.Session{Model: "lmstudio/from-session"}, "pinned", "offline", "offline"},
	}
	for _, tt := range tests {
		p := general
		if tt.profile == "pinned" {
			p = pinned
		}
		if got := eng2.ModelFor(tt.sess, p, tt.override); got != tt.want {
			t.Errorf("%s: model = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestCheck(t *testing.T) {
	eng, _ := newEngine(t, "", nil)
	err := eng.Check(sa.Session{Agent: "nobody"})
	if !errors.Is(err, sa.ErrUnknownAgent) || !strings.Contains(err.Error(), "explore, general") {
		t.Fatalf("Check(unknown agent) = %v, want ErrUnknownAgent listing the agents", err)
	}
	if err := eng.Check(sa.Session{Model: "anthropic/claude"}); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Fatalf("Check(no key) = %v, want the variable to set", err)
	}
	if err := eng.Check(sa.Session{}); err != nil {
		t.Fatalf("Check(defaults) = %v", err)
	}
}
