package mcpclient

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// envServer makes the test binary an MCP server over stdio instead of
// running the tests: the servers that crash, hang or spawn children are
// this binary.
const envServer = "MCPCLIENT_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(envServer) == "1" {
		serveTestServer()
		return
	}
	goleak.VerifyTestMain(m)
}

type echoIn struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

type weather struct {
	Temperature int    `json:"temperature"`
	Conditions  string `json:"conditions"`
}

// serveTestServer runs the test server: echo (read-only), weather
// (structured content), crash (exits in the middle of the call), hang
// (never answers), spawn (starts a child process and returns its pid) and
// pid (its own pid).
func serveTestServer() {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes the text.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "weather", Description: "Structured weather."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, weather, error) {
			return nil, weather{Temperature: 21, Conditions: "sunny"}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exits while answering."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			os.Exit(3)
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "hang", Description: "Never answers."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if os.Getenv("MCPCLIENT_TEST_IGNORE_CANCEL") == "1" {
				select {}
			}
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	mcp.AddTool(s, &mcp.Tool{Name: "spawn", Description: "Starts a child that outlives its parent's stdin."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			cmd := exec.Command("sleep", "1000")
			if err := cmd.Start(); err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(cmd.Process.Pid)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "Its pid."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(os.Getpid())}}}, nil, nil
		})
	if os.Getenv("MCPCLIENT_TEST_SILENT") == "1" {
		select {} // never answers the handshake
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// testSpec is a stdio spec running this binary as the test server.
func testSpec(t *testing.T, name string, env ...string) Spec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := map[string]string{envServer: "1"}
	for i := 0; i+1 < len(env); i += 2 {
		e[env[i]] = env[i+1]
	}
	return Spec{Name: name, Type: Stdio, Command: exe, Env: e, Origin: "test"}
}

// eventually polls cond until it holds or the test's patience runs out
// (not a timing assertion: only a bound on waiting).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
