package mcpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/engine"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/mcpclient"
	"github.com/superagents/superagents/internal/npmtest"
	"github.com/superagents/superagents/internal/stacktest"
	"github.com/superagents/superagents/internal/tools"
)

// TestFilesystemServerInATurn: the model calls mcp__fs__read_text_file
// through a real engine turn, and its answer carries what the file holds.
// The server comes from the project's .mcp.json.
func TestFilesystemServerInATurn(t *testing.T) {
	entry := npmtest.Server(t, "server-filesystem")
	ws := t.TempDir()
	const secret = "The launch code is 4711."
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte(secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mcpJSON := fmt.Sprintf(`{"mcpServers": {"fs": {"command": "node", "args": [%q, "${WS}"]}}}`, entry)
	if err := os.WriteFile(filepath.Join(ws, mcpclient.ProjectFile), []byte(mcpJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	servers := mcpclient.Load(mcpclient.Sources{Workspace: ws, LookupEnv: func(k string) (string, bool) {
		if k == "WS" {
			return ws, true
		}
		return "", false
	}})
	if len(servers.Problems) > 0 || len(servers.List) != 1 || servers.List[0].Err != nil {
		t.Fatalf("servers: %+v", servers)
	}
	m := mcpclient.NewManager(servers, mcpclient.Options{Root: ws, Env: os.Environ(), ProjectTrusted: true})
	t.Cleanup(func() { m.Close() })

	srv := llmtest.NewAnthropic(t)
	srv.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "mcp__fs__read_text_file", Input: fmt.Sprintf(`{"path": %q}`, filepath.Join(ws, "notes.txt"))}}})
	srv.Handle(func(r llmtest.Request) llmtest.Reply {
		result, _ := r.LastToolResult()
		return llmtest.Reply{Text: "The file says: " + result}
	})
	eng := newEngine(t, ws, srv, m.ToolsFor)
	sess, err := eng.Store.CreateSession(context.Background(), sa.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := eng.Run(context.Background(), sess.ID, engine.TurnOptions{}, engine.UserMessage("What do my notes say?"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Text, secret) {
		t.Fatalf("answer %q does not carry the file's content", out.Text)
	}
	var first struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := srv.Requests()[0].Decode(&first); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tl := range first.Tools {
		if tl.Name == "mcp__fs__read_text_file" {
			found = strings.Contains(string(tl.InputSchema), `"path"`)
		}
	}
	if !found {
		t.Fatal("the model was not offered mcp__fs__read_text_file with its schema")
	}
}

func newEngine(t *testing.T, ws string, srv *llmtest.Server, extra func(context.Context, []string) ([]tools.Tool, error)) *engine.Engine {
	t.Helper()
	stack := stacktest.OpenWith(t, t.TempDir(), ws, stacktest.Config(t, ws, srv.BaseURL()), stacktest.Extras{ExtraTools: extra})
	t.Cleanup(func() { stack.Close() })
	return stack.Engine
}

// TestEverythingServer runs the reference "everything" server over stdio,
// streamable HTTP and SSE: structured content, an image, an error result
// and a long-running call cancelled part-way.
func TestEverythingServer(t *testing.T) {
	entry := npmtest.Server(t, "server-everything")
	transports := []struct {
		name string
		spec func(t *testing.T) mcpclient.Spec
	}{
		{"stdio", func(*testing.T) mcpclient.Spec {
			return mcpclient.Spec{Name: "everything", Type: mcpclient.Stdio, Command: "node", Args: []string{entry, "stdio"}}
		}},
		{"streamable HTTP", func(t *testing.T) mcpclient.Spec {
			port := startHTTPServer(t, entry, "streamableHttp")
			return mcpclient.Spec{Name: "everything", Type: mcpclient.HTTP, URL: "http://127.0.0.1:" + port + "/mcp"}
		}},
		{"SSE", func(t *testing.T) mcpclient.Spec {
			port := startHTTPServer(t, entry, "sse")
			return mcpclient.Spec{Name: "everything", Type: mcpclient.SSE, URL: "http://127.0.0.1:" + port + "/sse"}
		}},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			m := mcpclient.NewManager(mcpclient.Servers{List: []mcpclient.Spec{tr.spec(t)}}, mcpclient.Options{Root: t.TempDir(), Env: os.Environ()})
			t.Cleanup(func() { m.Close() })
			list, err := m.Tools(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]tools.Tool{}
			for _, tl := range list {
				byName[tl.Spec().Name] = tl
			}
			if len(byName) == 0 {
				t.Fatalf("no tools; status %+v", m.Status())
			}
			tests := []struct {
				tool, input, want string
				isError           bool
			}{
				{"get-structured-content", `{"location": "Chicago"}`, `"conditions":"Light rain / drizzle"`, false},
				{"get-tiny-image", `{}`, "[image: image/png, ", false},
				{"get-structured-content", `{"location": "Paris"}`, "location", true}, // the server's input validation: an isError result
				{"echo", `{"message": "hi there"}`, "hi there", false},
			}
			for _, tt := range tests {
				tl := byName[mcpclient.ToolName("everything", tt.tool)]
				if tl == nil {
					t.Fatalf("no tool %s among %d", tt.tool, len(byName))
				}
				res, err := tl.Run(context.Background(), json.RawMessage(tt.input))
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError != tt.isError || !strings.Contains(res.Output, tt.want) {
					t.Errorf("%s(%s) = %+v, want %q (error %v)", tt.tool, tt.input, res, tt.want, tt.isError)
				}
			}
			// A long operation (an hour) cancelled part-way: the call
			// returns the context's error, and the server still answers.
			long := byName[mcpclient.ToolName("everything", "trigger-long-running-operation")]
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := long.Run(ctx, json.RawMessage(`{"duration": 3600, "steps": 3600}`))
				done <- err
			}()
			time.Sleep(200 * time.Millisecond) // let the call reach the server; not an assertion
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled long operation: %v", err)
			}
			res, err := byName[mcpclient.ToolName("everything", "echo")].Run(context.Background(), json.RawMessage(`{"message": "after"}`))
			if err != nil || !strings.Contains(res.Output, "after") {
				t.Fatalf("after the cancel: %+v %v", res, err)
			}
		})
	}
}

// startHTTPServer runs the everything server on a free loopback port,
// in its own process group, and waits until it listens.
func startHTTPServer(t *testing.T, entry, mode string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cmd := exec.Command("node", entry, mode)
	cmd.Env = append(os.Environ(), "PORT="+port)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err == nil {
			c.Close()
			return port
		}
		if time.Now().After(deadline) {
			t.Fatalf("the %s server did not listen on %s", mode, port)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
