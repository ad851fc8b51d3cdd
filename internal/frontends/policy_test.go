package frontends_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/authtest"
	"github.com/superagents/superagents/internal/cli"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/frontends"
	"github.com/superagents/superagents/internal/httpapi"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/mcpserver"
	"github.com/superagents/superagents/internal/stacktest"
)

// badRequest is a task request every way in can make: the fields it
// sets (as superagents_task names them), and the refusal: the field it
// names, spelled by each way in its own way, and the rest of the
// sentence, the same everywhere (or, with no field, the whole sentence).
type badRequest struct {
	name                              string
	prompt, agent, isolation, maxCost string
	timeout, maxTokens                string
	field, rule                       string
}

// The names of the fields, where a way in spells them its own way.
var (
	chatNames = map[string]string{"prompt": "the prompt", "timeout": "--timeout", "max_cost": "--max-cost", "max_tokens": "--max-tokens", "isolation": "--isolation"}
	cliNames  = map[string]string{"prompt": "PROMPT", "timeout": "--timeout", "max_cost": "--max-cost", "max_tokens": "--max-tokens", "isolation": "--isolation"}
)

// want is the refusal as a way in whose names of the fields are names
// (nil: superagents_task's) words it.
func (c badRequest) want(names map[string]string) string {
	if c.field == "" {
		return c.rule
	}
	name := c.field
	if n, ok := names[name]; ok {
		name = n
	}
	return name + " " + c.rule
}

// TestTaskRequestPolicy sends the same bad task requests through the four
// ways in: the chat's /task, `superagents task launch`, POST /v1/tasks and
// MCP's superagents_task. Each refuses each with the same sentence, but
// for the spelling of the field it names.
func TestTaskRequestPolicy(t *testing.T) {
	ws := t.TempDir() // no git repository
	limit := int64(config.DefaultTaskTimeout / time.Second)
	cases := []badRequest{
		{name: "empty prompt", field: "prompt", rule: "is required: say what the task should do"},
		{name: "timeout too long", prompt: "p", timeout: fmt.Sprint(limit + 1), field: "timeout",
			rule: fmt.Sprintf("must be at most %d seconds, the task time limit (tasks.timeout); leave it out for that limit", limit)},
		{name: "negative timeout", prompt: "p", timeout: "-1", field: "timeout", rule: "cannot be negative (leave it out for the task time limit)"},
		{name: "negative max cost", prompt: "p", maxCost: "-0.5", field: "max_cost",
			rule: "must be a number of dollars, not negative (leave it out for the configured budget)"},
		{name: "negative max tokens", prompt: "p", maxTokens: "-5", field: "max_tokens", rule: "cannot be negative (leave it out for the configured budget)"},
		{name: "unknown isolation", prompt: "p", isolation: "vm", field: "isolation",
			rule: `"vm" is unknown: use "worktree" (a git worktree of its own) or leave it out`},
		{name: "unknown agent", prompt: "p", agent: "nobody", rule: `unknown agent "nobody"`},
		{name: "worktree outside a git repository", prompt: "p", isolation: "worktree", rule: "is not inside a git repository"},
	}
	ways := []struct {
		name  string
		names map[string]string
		send  func(t *testing.T, c badRequest) string
	}{
		{"chat", chatNames, chatWay(t, ws)},
		{"command line", cliNames, cliWay(t, ws)},
		{"HTTP", nil, httpWay(t, ws)},
		{"MCP", nil, mcpWay(t, ws)},
	}
	for _, c := range cases {
		if c.agent == "" {
			c.agent = "general"
		}
		t.Run(c.name, func(t *testing.T) {
			for _, w := range ways {
				got, want := w.send(t, c), c.want(w.names)
				if !strings.Contains(got, want) {
					t.Errorf("%s: refused with %q, want %q", w.name, got, want)
				}
			}
		})
	}
}

// run runs superagents in-process, with its data in dataDir.
func run(home, stdin string, args ...string) (code int, out string) {
	var stdout, stderr bytes.Buffer
	env := map[string]string{"HOME": home, "SUPERAGENTS_DATA_DIR": filepath.Join(home, "data")}
	code = frontends.Main(context.Background(), args, cli.Env{
		Stdin: strings.NewReader(stdin), Stdout: &stdout, Stderr: &stderr,
		Getenv: func(k string) string { return env[k] },
	})
	return code, stdout.String() + stderr.String()
}

// chatWay sends a request as /task in a piped chat.
func chatWay(t *testing.T, ws string) func(*testing.T, badRequest) string {
	home := t.TempDir()
	return func(t *testing.T, c badRequest) string {
		line := "/task"
		for opt, v := range map[string]string{"timeout": c.timeout, "max-cost": c.maxCost, "max-tokens": c.maxTokens, "isolation": c.isolation} {
			if v != "" {
				line += fmt.Sprintf(" --%s=%s", opt, v)
			}
		}
		line += " " + c.agent
		if c.prompt != "" {
			line += fmt.Sprintf(" %q", c.prompt)
		}
		_, out := run(home, line+"\n", "--workspace", ws, "chat")
		return out
	}
}

// cliWay sends a request as superagents task launch (--wait: in this
// process).
func cliWay(t *testing.T, ws string) func(*testing.T, badRequest) string {
	home := t.TempDir()
	code, session := run(home, `{"role":"user","text":"hi"}`+"\n", "import", "-")
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, session)
	}
	session = strings.TrimSpace(session)
	return func(t *testing.T, c badRequest) string {
		args := []string{"--workspace", ws, "task", "launch", "--wait", "--session", session, "--agent", c.agent, "--description", "d"}
		for flag, v := range map[string]string{"--timeout": c.timeout, "--max-cost": c.maxCost, "--max-tokens": c.maxTokens, "--isolation": c.isolation} {
			if v != "" {
				args = append(args, flag+"="+v)
			}
		}
		code, out := run(home, "", append(args, c.prompt)...)
		if code == 0 {
			t.Errorf("command line: %s accepted", c.name)
		}
		return out
	}
}

// stack is a runtime over a store of its own, on a fake model server.
func stack(t *testing.T, ws string) *stacktest.Stack {
	model := llmtest.NewAnthropic(t)
	s := stacktest.Open(t, t.TempDir(), ws, stacktest.Config(t, ws, model.BaseURL()))
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// body is a request's JSON fields, as superagents_task and POST /v1/tasks
// take them.
func (c badRequest) body(t *testing.T) map[string]any {
	m := map[string]any{"description": "d", "prompt": c.prompt, "agent": c.agent}
	for field, v := range map[string]string{"timeout": c.timeout, "max_cost": c.maxCost, "max_tokens": c.maxTokens} {
		if v != "" {
			var n json.Number
			if err := json.Unmarshal([]byte(v), &n); err != nil {
				t.Fatal(err)
			}
			m[field] = n
		}
	}
	if c.isolation != "" {
		m["isolation"] = c.isolation
	}
	return m
}

// httpWay sends a request as POST /v1/tasks to a server on loopback.
func httpWay(t *testing.T, ws string) func(*testing.T, badRequest) string {
	s := stack(t, ws)
	parent, err := s.Runtime.Sessions().Create(context.Background(), sa.NewSession{Agent: "general"})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := httpapi.New(httpapi.Options{Runtime: s.Runtime, Token: "policy-test-token-0123456789", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	client := &http.Client{Transport: authtest.Bearer("policy-test-token-0123456789", &http.Transport{})}
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Error(err)
		}
		client.CloseIdleConnections()
	})
	url := "http://" + ln.Addr().String() + "/v1/tasks"
	return func(t *testing.T, c badRequest) string {
		body := c.body(t)
		body["session_id"] = parent.ID
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Post(url, "application/json", bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var answer struct {
			Error string `json:"error"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || resp.StatusCode < 400 {
			t.Errorf("HTTP: %s answered %d (%v)", c.name, resp.StatusCode, err)
		}
		return answer.Error
	}
}

// mcpWay sends a request as superagents_task from an MCP client.
func mcpWay(t *testing.T, ws string) func(*testing.T, badRequest) string {
	s := stack(t, ws)
	srv, err := mcpserver.New(mcpserver.Options{Runtime: s.Runtime, Version: "test", Host: mcpserver.HostNone,
		Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	serverSide, clientSide := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, serverSide) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "policy-test", Version: "1"}, nil)
	session, err := client.Connect(ctx, clientSide, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		session.Close()
		stop()
		<-served
	})
	return func(t *testing.T, c badRequest) string {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "superagents_task", Arguments: c.body(t)})
		if err != nil {
			return err.Error()
		}
		if !res.IsError {
			t.Errorf("MCP: %s accepted", c.name)
		}
		var text []string
		for _, content := range res.Content {
			if tc, ok := content.(*mcp.TextContent); ok {
				text = append(text, tc.Text)
			}
		}
		return strings.Join(text, "\n")
	}
}
