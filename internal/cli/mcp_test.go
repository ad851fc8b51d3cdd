//lint:file-ignore SA1019 the host of these tests receives the task notifications, which are logging messages

package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/superagents/superagents/internal/llm/llmtest"
)

// mcpWait bounds the waits of the MCP tests, so that a broken server
// fails them instead of hanging; it is not a timing assertion.
const mcpWait = 60 * time.Second

// testAPIKey must never show on the server's output.
const testAPIKey = "sk-test-never-shown-4a1f"

// mcpHost is an agent host in a test: it runs `superagents mcp` as a child
// process and talks to it with the official SDK client over the child's
// standard input and output, recording everything the child writes.
type mcpHost struct {
	t      *testing.T
	cmd    *exec.Cmd
	cs     *mcp.ClientSession
	stdout *syncBuffer
	stderr *syncBuffer
	logs   chan map[string]any
	exited chan error
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// teeReadCloser records what the client reads from the child.
type teeReadCloser struct {
	io.Reader
	io.Closer
}

func startMCP(t *testing.T, p *proc, ws, client string) *mcpHost {
	t.Helper()
	h := &mcpHost{t: t, stdout: &syncBuffer{}, stderr: &syncBuffer{}, logs: make(chan map[string]any, 16), exited: make(chan error, 1)}
	h.cmd = exec.Command(p.bin, "mcp", "--foreground", "--workspace", ws)
	h.cmd.Env = p.env
	h.cmd.Stderr = h.stderr
	stdin, err := h.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := h.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.cmd.Process.Kill()
		<-h.exited
	})
	go func() { h.exited <- h.cmd.Wait() }()
	c := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1.0"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			if data, ok := req.Params.Data.(map[string]any); ok && req.Params.Logger == "superagents" {
				h.logs <- data
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), mcpWait)
	defer cancel()
	transport := &mcp.IOTransport{Reader: teeReadCloser{io.TeeReader(stdout, h.stdout), stdout}, Writer: stdin}
	// The newest revision with sessions: the task notifications these
	// tests read are log messages, which 2026-07-28 deprecates.
	if h.cs, err = c.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}); err != nil {
		t.Fatalf("connect to superagents mcp: %v\nstderr: %s", err, h.stderr)
	}
	return h
}

// call calls a tool that must succeed and returns its text and
// structured content.
func (h *mcpHost) call(name string, args map[string]any) (string, map[string]any) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), mcpWait)
	defer cancel()
	res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		h.t.Fatalf("%s: %v\nstderr: %s", name, err, h.stderr)
	}
	var text string
	if len(res.Content) > 0 {
		text = res.Content[0].(*mcp.TextContent).Text
	}
	if res.IsError {
		h.t.Fatalf("%s %v: tool error: %s", name, args, text)
	}
	var data map[string]any
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &data); err != nil {
		h.t.Fatalf("%s: structured content: %v", name, err)
	}
	return text, data
}

func (h *mcpHost) launch(description, prompt string, fork bool) string {
	h.t.Helper()
	_, data := h.call("superagents_task", map[string]any{"description": description, "prompt": prompt, "agent": "general", "fork": fork})
	return data["id"].(string)
}

func (h *mcpHost) notification() map[string]any {
	h.t.Helper()
	select {
	case n := <-h.logs:
		return n
	case <-time.After(mcpWait):
		h.t.Fatalf("no task notification; stderr: %s", h.stderr)
		return nil
	}
}

// wait waits for the child to exit and checks what it wrote.
func (h *mcpHost) wait() {
	h.t.Helper()
	if err := h.exit(); err != nil {
		h.t.Errorf("superagents mcp exited with %v; stderr: %s", err, h.stderr)
	}
	// Standard output carries the protocol and nothing else.
	for line := range strings.Lines(h.stdout.String()) {
		var msg struct {
			JSONRPC string `json:"jsonrpc"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil || msg.JSONRPC != "2.0" {
			h.t.Errorf("stdout holds a line that is not JSON-RPC: %q", line)
		}
	}
	if strings.Contains(h.stderr.String()+h.stdout.String(), testAPIKey) {
		h.t.Error("the API key was written out")
	}
}

// exit waits for the child to exit.
func (h *mcpHost) exit() error {
	h.t.Helper()
	select {
	case err := <-h.exited:
		h.exited <- err // for the cleanup
		return err
	case <-time.After(mcpWait):
		h.t.Fatal("superagents mcp did not exit")
		return nil
	}
}

// stoppedTasks returns the ids of the tasks ended because the process
// running them stopped.
func stoppedTasks(t *testing.T, p *proc) map[string]bool {
	t.Helper()
	var list []struct {
		ID, Status, Error string
	}
	if err := json.Unmarshal([]byte(p.ok("tasks", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	stopped := map[string]bool{}
	for _, task := range list {
		if task.Status == "error" && strings.Contains(task.Error, "superagents stopped") {
			stopped[task.ID] = true
		}
	}
	return stopped
}

// TestMCPStdio runs `superagents mcp --foreground` as a host does, with the Anthropic
// SDK inside it talking to a fake model server, and two hosts at once:
// each sees its own tasks; closing the connection or SIGTERM stops the
// server, and the tasks still running are recorded as interrupted.
func TestMCPStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	model := llmtest.NewAnthropic(t)
	model.APIKey = testAPIKey
	model.Handle(func(req llmtest.Request) llmtest.Reply {
		body := string(req.Body)
		switch {
		case strings.Contains(body, "please stall"):
			return llmtest.Reply{Fault: llmtest.Stall}
		case strings.Contains(body, "What is 2+2?"):
			return llmtest.Reply{Text: "2+2 equals 4."}
		}
		return llmtest.Reply{Text: "Done."}
	})
	p := newProc(t)
	p.env = append(p.env, "ANTHROPIC_API_KEY="+testAPIKey, "ANTHROPIC_BASE_URL="+model.BaseURL(), "SUPERAGENTS_MODEL=anthropic/claude-test")
	ws := t.TempDir()

	alpha := startMCP(t, p, ws, "alpha")
	if info := alpha.cs.InitializeResult(); info.ServerInfo.Name != "superagents" || !strings.Contains(info.Instructions, "superagents_task") {
		t.Fatalf("initialize result %+v", info)
	}
	tools, err := alpha.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if schema, _ := tool.InputSchema.(map[string]any); tool.Description == "" || schema["type"] != "object" {
			t.Errorf("%s: description %q, schema %v", tool.Name, tool.Description, tool.InputSchema)
		}
	}
	slices.Sort(names)
	if want := []string{"superagents_cancel", "superagents_clear", "superagents_list", "superagents_output", "superagents_send", "superagents_task"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v", names)
	}

	// Launch, hear of the ending, read the result.
	sum := alpha.launch("add", "What is 2+2?", false)
	if n := alpha.notification(); n["task_id"] != sum || !regexp.MustCompile(`^✓ Agent "add" finished in \d+s\.`).MatchString(n["text"].(string)) {
		t.Fatalf("notification %v", n)
	}
	if text, _ := alpha.call("superagents_output", map[string]any{"task_id": sum, "block": true}); !strings.HasSuffix(text, "Result:\n2+2 equals 4.") {
		t.Fatalf("output = %q", text)
	}
	if len(model.Requests()) == 0 {
		t.Fatal("the task never reached the model server")
	}
	forked := alpha.launch("forked", "What is 2+2?", true)
	alpha.call("superagents_output", map[string]any{"task_id": forked, "block": true})
	if text, _ := alpha.call("superagents_list", map[string]any{}); !strings.Contains(text, forked+" (forked) [completed]") || !strings.Contains(text, sum+" [completed]") {
		t.Fatalf("list:\n%s", text)
	}

	// A second host has a session of its own.
	beta := startMCP(t, p, ws, "beta")
	if text, _ := beta.call("superagents_list", map[string]any{}); text != "No background tasks found" {
		t.Fatalf("beta's list before it launched anything:\n%s", text)
	}
	betaSlow := beta.launch("beta's slow one", "please stall", false)
	if text, _ := beta.call("superagents_list", map[string]any{}); !strings.Contains(text, betaSlow) || strings.Contains(text, sum) {
		t.Fatalf("beta's list:\n%s", text)
	}
	if text, _ := alpha.call("superagents_list", map[string]any{}); strings.Contains(text, betaSlow) {
		t.Fatalf("alpha's list shows beta's task:\n%s", text)
	}

	// Cancel and clear.
	slow := alpha.launch("slow one", "please stall", false)
	if text, _ := alpha.call("superagents_cancel", map[string]any{"task_id": slow}); !strings.Contains(text, "is cancelled") {
		t.Fatalf("cancel = %q", text)
	}
	if text, data := alpha.call("superagents_clear", map[string]any{}); !strings.Contains(text, "Cleared 3 task(s)") || data["cleared"] != 3.0 {
		t.Fatalf("clear = %q", text)
	}

	// The host closes beta's connection: the server ends, and stops the
	// task that still ran.
	beta.cs.Close()
	beta.wait()
	// SIGTERM ends alpha the same way.
	doomed := alpha.launch("doomed", "please stall", false)
	if err := alpha.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	alpha.wait()

	if stopped := stoppedTasks(t, p); !stopped[betaSlow] || !stopped[doomed] {
		t.Fatalf("the running tasks were not ended as interrupted: %v", stopped)
	}
}

// TestMCPHostStopsReading: a host that closes the server's output while
// its input stays open ends the session; the server is not killed by
// SIGPIPE, and stops its tasks as it should. The host speaks raw
// JSON-RPC here, so that it writes after it stopped reading.
func TestMCPHostStopsReading(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	model := llmtest.NewAnthropic(t)
	model.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Fault: llmtest.Stall} })
	p := newProc(t)
	p.env = append(p.env, "ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL="+model.BaseURL(), "SUPERAGENTS_MODEL=anthropic/claude-test")
	cmd := exec.Command(p.bin, "mcp", "--foreground", "--workspace", t.TempDir())
	cmd.Env = p.env
	var stderr syncBuffer
	cmd.Stderr = &stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() { cmd.Process.Kill(); <-exited }()
	replies := bufio.NewScanner(stdout)
	send := func(msg string) {
		if _, err := io.WriteString(stdin, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	reply := func() string {
		if !replies.Scan() {
			t.Fatalf("no reply: %v; stderr: %s", replies.Err(), stderr.String())
		}
		return replies.Text()
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"careless","version":"1"}}}`)
	reply()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"superagents_task","arguments":{"description":"left behind","prompt":"work on","agent":"general"}}}`)
	var launched struct {
		Result struct {
			StructuredContent struct {
				TaskID string `json:"id"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if line := reply(); json.Unmarshal([]byte(line), &launched) != nil || launched.Result.StructuredContent.TaskID == "" {
		t.Fatalf("launch reply %s", line)
	}
	stdout.Close()
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"superagents_list","arguments":{}}}`)
	var err error
	select {
	case err = <-exited:
		exited <- err
	case <-time.After(mcpWait):
		t.Fatal("superagents mcp goes on with nobody reading")
	}
	if exit, ok := err.(*exec.ExitError); ok && exit.ProcessState.Sys().(syscall.WaitStatus).Signaled() {
		t.Fatalf("superagents mcp was killed: %v", err)
	}
	if !stoppedTasks(t, p)[launched.Result.StructuredContent.TaskID] {
		t.Fatalf("the running task was not ended as interrupted; stderr: %s", stderr.String())
	}
}

func TestMCPCommand(t *testing.T) {
	h := newHarness(t)
	// The host hung up at once: a clean exit, and not a byte on stdout.
	if r := h.runIn("", "mcp", "--foreground", "--workspace", t.TempDir()); r.code != 0 || r.stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := h.run("mcp", "extra"); r.code != 2 || !strings.Contains(r.stderr, "takes no arguments") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
}
