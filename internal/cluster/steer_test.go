package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/authtest"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/postgres"
	"github.com/superagents/superagents/internal/postgres/pgtest"
	"github.com/superagents/superagents/internal/sqlite"
	"github.com/superagents/superagents/internal/tasktools"
)

// statelessRevision is the MCP revision the steering tests' clients
// speak: over HTTP each of its requests stands alone, and the tasks a
// client launches belong to the API token it presents, so that a client
// of any node presenting the cluster's token reaches them.
const statelessRevision = "2026-07-28"

// mcpConn is a client of a node's MCP server over HTTP.
type mcpConn struct {
	t    testing.TB
	node *serveNode
	cs   *mcp.ClientSession
}

func connectMCP(t testing.TB, n *serveNode) *mcpConn {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "cluster-test", Version: "1.0"}, nil)
	ct := &mcp.StreamableClientTransport{Endpoint: n.url + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: authtest.Bearer(token, nil)}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: statelessRevision})
	if err != nil {
		t.Fatalf("connect to %s's MCP server: %v", n.name, err)
	}
	t.Cleanup(func() { cs.Close() })
	return &mcpConn{t: t, node: n, cs: cs}
}

// call calls a tool that must succeed and returns its text and
// structured content.
func (c *mcpConn) call(name string, args map[string]any) (string, map[string]any) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("%s on %s: %v", name, c.node.name, err)
	}
	var text string
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	if res.IsError {
		c.t.Fatalf("%s %v on %s: tool error: %s", name, args, c.node.name, text)
	}
	var data map[string]any
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &data); err != nil {
		c.t.Fatalf("%s on %s: structured content: %v", name, c.node.name, err)
	}
	return text, data
}

// cancelLater cancels a task when the test ends, before the nodes stop,
// if it still runs then: on SQLite, a task worker would outlive the test.
func (c *mcpConn) cancelLater(id string) {
	c.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "superagents_cancel", Arguments: map[string]any{"task_id": id}})
	})
}

// launch launches a task of the general agent and returns its id.
func (c *mcpConn) launch(description, prompt string) string {
	c.t.Helper()
	_, data := c.call("superagents_task", map[string]any{"description": description, "prompt": prompt, "agent": "general"})
	id, _ := data["id"].(string)
	if id == "" {
		c.t.Fatalf("superagents_task on %s answered no id: %v", c.node.name, data)
	}
	return id
}

// steerCluster is the serve processes of a steering test on one store
// (a PostgreSQL database, or one SQLite file the processes share), the
// scripted model they all talk to, and the store, opened by the test.
type steerCluster struct {
	nodes     []*serveNode
	model     *llmtest.Server
	store     sa.Store
	workspace string
	// bin, env and dataDir (the first node's data directory: on SQLite,
	// the store's) run the CLI on the same store.
	bin, dataDir string
	env          []string
}

// startSteerCluster starts count serve processes on the database at url,
// or, when url is empty, one on a SQLite data directory (a second serve
// of a data directory is refused: other processes on the file are CLI
// commands and the workers they start). userConfig, when not empty, is
// their user configuration file.
func startSteerCluster(t testing.TB, bin string, count int, url, userConfig string, handle func(llmtest.Request) llmtest.Reply) *steerCluster {
	t.Helper()
	c := &steerCluster{model: llmtest.NewAnthropic(t), workspace: t.TempDir(), bin: bin, dataDir: filepath.Join(t.TempDir(), "data")}
	c.model.Handle(handle)
	home := t.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"SUPERAGENTS_TOKEN=" + token,
		"ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL=" + c.model.BaseURL(), "SUPERAGENTS_MODEL=anthropic/claude-test",
	}
	if url != "" {
		env = append(env, "SUPERAGENTS_DATABASE_URL="+url)
	}
	if userConfig != "" {
		writeUserConfig(t, env, userConfig)
	}
	c.env = env
	for i := range count {
		dir := c.dataDir
		if i > 0 {
			dir = filepath.Join(t.TempDir(), "data")
		}
		c.nodes = append(c.nodes, startNodeIn(t, bin, fmt.Sprintf("node%d", i+1), c.workspace, dir, env))
	}
	var err error
	if url != "" {
		c.store, err = postgres.Open(context.Background(), url)
	} else {
		c.store, err = sqlite.OpenDir(context.Background(), c.dataDir)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.store.Close() })
	return c
}

// launchByCLI launches a task of the general agent, as a child of
// session, with `superagents task launch` on the SQLite data directory:
// a worker process of its own runs it. It returns the task's id.
func (c *steerCluster) launchByCLI(t testing.TB, session, description, prompt string) string {
	t.Helper()
	cmd := exec.Command(c.bin, "--data-dir", c.dataDir, "task", "launch", "--workspace", c.workspace,
		"--session", session, "--agent", "general", "--description", description, prompt)
	cmd.Env = c.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("superagents task launch: %v\n%s", err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// tokenSession returns the session that owns the tasks the cluster's
// token launches over MCP: the parent of a task launched through conn,
// which its model ends at once.
func (c *steerCluster) tokenSession(t testing.TB, conn *mcpConn) string {
	t.Helper()
	task, err := c.store.Task(context.Background(), conn.launch("find the session", "answer at once"))
	if err != nil {
		t.Fatal(err)
	}
	return task.ParentSessionID
}

// runnerOf returns the runner (the process) that runs a task, once one
// does.
func (c *steerCluster) runnerOf(t testing.TB, id string) sa.Runner {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(90 * time.Second)
	for {
		task, err := c.store.Task(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		runners, err := c.store.Runners(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runners {
			if task.Status == sa.TaskRunning && r.ID == task.RunnerID && r.PID != 0 {
				return r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %s on runner %q, which is not known", id, task.Status, task.RunnerID)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// otherThan returns a node whose process is not r's (the first node when
// every node's is: a cluster of one).
func (c *steerCluster) otherThan(r sa.Runner) *serveNode {
	for _, n := range c.nodes {
		if n.cmd.Process.Pid != r.PID {
			return n
		}
	}
	return c.nodes[0]
}

// nameOf names the process of a runner: a node, or a worker.
func (c *steerCluster) nameOf(r sa.Runner) string {
	for _, n := range c.nodes {
		if n.cmd.Process.Pid == r.PID {
			return n.name
		}
	}
	return fmt.Sprintf("worker process %d", r.PID)
}

// requestsOf returns the model requests of the session whose first
// message holds prompt, oldest first.
func (c *steerCluster) requestsOf(prompt string) []llmtest.Request {
	var out []llmtest.Request
	for _, r := range c.model.Requests() {
		if strings.Contains(r.FirstText(), prompt) {
			out = append(out, r)
		}
	}
	return out
}

// bashCall is a model's call of the bash tool.
func bashCall(command string) llmtest.ToolCall {
	raw, _ := json.Marshal(map[string]string{"command": command})
	return llmtest.ToolCall{Name: "bash", Input: string(raw)}
}

// TestSteerReachesTheRunningNode sends a message over MCP, through the
// node that does not run the task, to a task running on another node of a
// PostgreSQL cluster: the task's next model request, made by the node
// that runs it, carries the message exactly once.
func TestSteerReachesTheRunningNode(t *testing.T) {
	url := pgtest.URL(t)
	if testing.Short() {
		t.Skip("builds the binary and runs two servers")
	}
	testSteerAcross(t, url)
}

// TestSteerAcrossProcessesOnSQLite is TestSteerReachesTheRunningNode on
// one SQLite file: the task, launched with `superagents task launch`,
// runs in its worker process, and the message is sent over MCP through a
// serve process on the same file.
func TestSteerAcrossProcessesOnSQLite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs two servers")
	}
	testSteerAcross(t, "")
}

// steerPrompt starts the prompt of the task the steering tests send to.
const steerPrompt = "steer-release:"

// testSteerAcross runs the steering test on url (SQLite when empty). The
// task's first model request calls a command that waits for a file; the
// message is sent while it waits, and the file is made once the send has
// returned, so the request that follows the command is the task's next.
func testSteerAcross(t *testing.T, url string) {
	ctx := context.Background()
	bin := buildBinary(t, t.TempDir())
	nodes := 2
	if url == "" {
		nodes = 1 // the task runs in a worker process
	}
	c := startSteerCluster(t, bin, nodes, url, "", func(r llmtest.Request) llmtest.Reply {
		switch {
		case !strings.Contains(r.FirstText(), steerPrompt):
			return llmtest.Reply{Text: "not the steered task"}
		case bytes.Contains(r.Body, []byte(`"tool_result"`)):
			return llmtest.Reply{Text: "done"}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{bashCall("until [ -e release ]; do sleep 0.05; done; echo released")}}
	})
	launcher := connectMCP(t, c.nodes[0])
	prompt := steerPrompt + " wait for the release file, then report"
	var id string
	if url == "" {
		id = c.launchByCLI(t, c.tokenSession(t, launcher), "wait for release", prompt)
	} else {
		id = launcher.launch("wait for release", prompt)
	}
	waitFor(t, "the task's first model request", func() bool { return len(c.requestsOf(steerPrompt)) > 0 })
	launcher.cancelLater(id)
	runner := c.runnerOf(t, id)
	sender := connectMCP(t, c.otherThan(runner))
	if sender.node.cmd.Process.Pid == runner.PID {
		t.Fatalf("the task runs in %s, the process it is to be sent from", sender.node.name)
	}
	marker := "steer-marker-" + sa.NewID()
	text, _ := sender.call("superagents_send", map[string]any{"task_id": id, "message": "Also look at " + marker + "."})
	if !strings.Contains(text, "Message 1 sent to task "+id) {
		t.Fatalf("superagents_send answered %q", text)
	}
	t.Logf("task %s runs in %s; the message was sent through %s", sa.ShortID(id), c.nameOf(runner), sender.node.name)
	if err := os.WriteFile(filepath.Join(c.workspace, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var task sa.Task
	waitFor(t, "the task to end", func() bool {
		var err error
		task, err = c.store.Task(ctx, id)
		return err == nil && !task.Status.Active()
	})
	if task.Status != sa.TaskCompleted || task.Result != "done" {
		t.Fatalf("the task ended %s (%q): %s", task.Status, task.Result, task.Error)
	}
	reqs := c.requestsOf(steerPrompt)
	if len(reqs) != 2 {
		t.Fatalf("the task made %d model requests, want 2 (the command, then the answer)", len(reqs))
	}
	if bytes.Contains(reqs[0].Body, []byte(marker)) {
		t.Fatal("the request before the send carries the message")
	}
	next := string(reqs[1].Body)
	if n := strings.Count(next, marker); n != 1 || !strings.Contains(next, "[Message from "+tasktools.FromHost) {
		t.Fatalf("the task's next model request carries the message %d times (want 1), from the MCP client:\n%s", n, llmtest.IndentedBody(t, reqs[1]))
	}
	checkDeliveredOnce(t, c.store, id, marker)
}

// checkDeliveredOnce checks that the one message sent to a task is
// recorded as delivered, as the one message of its session that holds
// marker.
func checkDeliveredOnce(t *testing.T, st sa.Store, id, marker string) {
	t.Helper()
	ctx := context.Background()
	sent, err := st.TaskMessages(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(sent) != 1 || sent[0].DeliveredAt == nil || sent[0].MessageID == 0 || sent[0].From != tasktools.FromHost {
		t.Fatalf("the messages sent to the task: %+v", sent)
	}
	history, err := st.History(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var holding []int64
	for _, m := range history {
		if strings.Contains(m.Text(), marker) {
			holding = append(holding, m.ID)
		}
	}
	if len(holding) != 1 || holding[0] != sent[0].MessageID {
		t.Fatalf("the task's session holds the message as messages %v, want only %d", holding, sent[0].MessageID)
	}
}
