// Package stacktest builds, for tests, everything that runs agents: a
// SQLite store in a directory, the engine with the built-in tools, the
// event bus and the task manager, wired together as the command line
// wires them. Its models talk to a fake server of package llmtest.
package stacktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/agents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/engine"
	"github.com/superagents/superagents/internal/events"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/postgres"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/sqlite"
	"github.com/superagents/superagents/internal/taskqueue"
	"github.com/superagents/superagents/internal/tasks"
	"github.com/superagents/superagents/internal/tasktools"
	"github.com/superagents/superagents/internal/tools"
)

// Stack is the store and the runtime of one test, with the runtime's
// parts at hand.
type Stack struct {
	Store   *sqlite.Store
	Runtime *runtime.Runtime
	Engine  *engine.Engine
	Bus     *events.Bus
	Tasks   *tasks.Manager
	// Tools are the task tools over the runtime, as the agents get them.
	Tools *tasktools.Tools
}

// Config loads the configuration of a workspace whose default model is
// anthropic/claude-test, served by the fake Anthropic API at baseURL.
func Config(t testing.TB, workspace, baseURL string) config.Config {
	t.Helper()
	env := map[string]string{
		"ANTHROPIC_API_KEY":  "test-key",
		"ANTHROPIC_BASE_URL": baseURL,
		"SUPERAGENTS_MODEL":  "anthropic/claude-test",
	}
	cfg, err := config.Load(config.Options{Workspace: workspace, UserDir: t.TempDir(), LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Open opens the stack on the data directory dir (again, after Close, to
// test a restart), wired by runtime.Open as every command is, with the
// task tools. The bus
// polls every 50 ms for other processes' writes.
func Open(t testing.TB, dir, workspace string, cfg config.Config, storeOpts ...sqlite.Option) *Stack {
	t.Helper()
	return OpenWith(t, dir, workspace, cfg, Extras{}, storeOpts...)
}

// Extras are what the command line adds to a runtime besides the store
// and the configuration: the tools of the user's MCP servers and the
// project's instructions.
type Extras struct {
	ExtraTools   func(ctx context.Context, patterns []string) ([]tools.Tool, error)
	Instructions string
}

// OpenWith is Open with extras, given to runtime.Open as the command line
// gives them.
func OpenWith(t testing.TB, dir, workspace string, cfg config.Config, extras Extras, storeOpts ...sqlite.Option) *Stack {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.OpenDir(ctx, dir, storeOpts...)
	if err != nil {
		t.Fatal(err)
	}
	rt, problems, err := runtime.Open(ctx, runtime.Options{Store: st, Config: cfg, Workspace: workspace,
		AgentDirs: agents.Dirs{Project: agents.ProjectDir(workspace)}, BashEnv: []string{"PATH=" + os.Getenv("PATH")},
		PollInterval: 50 * time.Millisecond, TaskTools: tasktools.For, ExtraTools: extras.ExtraTools, Instructions: extras.Instructions})
	if err != nil || len(problems) > 0 {
		st.Close()
		t.Fatalf("runtime: %v %v", err, problems)
	}
	tools, err := tasktools.New(rt)
	if err != nil {
		t.Fatal(err)
	}
	parts := runtime.PartsOf(rt)
	return &Stack{Store: st, Runtime: rt, Engine: parts.Engine, Bus: parts.Bus, Tasks: parts.Tasks, Tools: tools}
}

// NodeOptions say how a node of OpenNode works the job queue.
type NodeOptions struct {
	// Work makes it work the queue's tasks (serve, worker); otherwise it
	// only queues the tasks it launches (run, chat, mcp).
	Work bool
	// Drain is how long, closing, it lets its running tasks finish.
	Drain time.Duration
	// Heartbeat is its runner's (the configured one when 0).
	Heartbeat time.Duration
}

// OpenNode opens a node of a cluster on the PostgreSQL database at url:
// its own store connection and a runtime whose tasks go through the job
// queue, wired as the command line wires one, with the task tools. The
// bus polls every 50 ms. Closing both is the caller's (runtime first).
func OpenNode(t testing.TB, url, workspace string, cfg config.Config, opts NodeOptions) (*postgres.Store, *runtime.Runtime) {
	t.Helper()
	ctx := context.Background()
	st, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	ropts, err := taskqueue.Wire(st, runtime.Options{Store: st, Config: cfg, Workspace: workspace,
		AgentDirs: agents.Dirs{Project: agents.ProjectDir(workspace)}, BashEnv: []string{"PATH=" + os.Getenv("PATH")},
		PollInterval: 50 * time.Millisecond, Heartbeat: opts.Heartbeat, TaskTools: tasktools.For},
		taskqueue.Options{Work: opts.Work, Drain: opts.Drain})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	rt, problems, err := runtime.Open(ctx, ropts)
	if err != nil || len(problems) > 0 {
		st.Close()
		t.Fatalf("runtime: %v %v", err, problems)
	}
	return st, rt
}

// Close stops the runtime (running tasks end as interrupted), then the
// store.
func (s *Stack) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return errors.Join(s.Runtime.Close(ctx), s.Store.Close())
}

// WaitTask waits until a task has ended, through the manager's blocking
// output (no polling), and returns it; it fails the test after a minute.
func (s *Stack) WaitTask(t testing.TB, id string) sa.Task {
	t.Helper()
	// A wait that stops early for a question of the task goes on.
	for deadline := time.Now().Add(time.Minute); ; {
		out, err := s.Tasks.Output(context.Background(), id, true, time.Until(deadline))
		if err != nil {
			t.Fatal(err)
		}
		if !out.Task.Status.Active() {
			return out.Task
		}
		if out.TimedOut || time.Now().After(deadline) {
			t.Fatalf("task %s did not end within a minute: %+v", id, out.Task)
		}
	}
}

// ToolCall is a scripted tool call with its input as JSON.
func ToolCall(name string, input any) llmtest.ToolCall {
	raw, err := json.Marshal(input)
	if err != nil {
		panic(fmt.Sprintf("stacktest: tool input %v: %v", input, err))
	}
	return llmtest.ToolCall{Name: name, Input: string(raw)}
}
