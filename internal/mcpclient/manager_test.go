package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/tools"
)

func newManager(t *testing.T, opts Options, specs ...Spec) *Manager {
	t.Helper()
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	m := NewManager(Servers{List: specs}, opts)
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return m
}

func toolsByName(t *testing.T, m *Manager) map[string]tools.Tool {
	t.Helper()
	list, err := m.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]tools.Tool)
	for _, tl := range list {
		out[tl.Spec().Name] = tl
	}
	return out
}

func call(t *testing.T, tl tools.Tool, input string) tools.Result {
	t.Helper()
	res, err := tl.Run(context.Background(), json.RawMessage(input))
	if err != nil {
		t.Fatalf("%s: %v", tl.Spec().Name, err)
	}
	return res
}

func TestToolsOfAServer(t *testing.T) {
	m := newManager(t, Options{}, testSpec(t, "t"))
	got := toolsByName(t, m)
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range got {
			if !yield(n) {
				return
			}
		}
	})
	want := []string{"mcp__t__crash", "mcp__t__echo", "mcp__t__hang", "mcp__t__pid", "mcp__t__spawn", "mcp__t__weather"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	echo := got["mcp__t__echo"]
	if !echo.ReadOnly() || got["mcp__t__crash"].ReadOnly() {
		t.Fatal("readOnlyHint not carried to ReadOnly")
	}
	var schema struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(echo.Spec().InputSchema, &schema); err != nil || schema.Properties["text"] == nil {
		t.Fatalf("echo schema %s lacks its text property (%v)", echo.Spec().InputSchema, err)
	}
	tests := []struct {
		tool, input, want string
		isError           bool
	}{
		{"mcp__t__echo", `{"text":"hello"}`, "hello", false},
		{"mcp__t__echo", ``, "", true}, // the server's own validation: text is required
		{"mcp__t__echo", `[1]`, "must be a JSON object", true},
		{"mcp__t__weather", `{}`, `{"conditions":"sunny","temperature":21}`, false},
	}
	for _, tt := range tests {
		res := call(t, got[tt.tool], tt.input)
		if res.IsError != tt.isError || !strings.Contains(res.Output, tt.want) {
			t.Errorf("%s(%s) = %+v, want %q (error %v)", tt.tool, tt.input, res, tt.want, tt.isError)
		}
	}
	if st := m.Status()[0]; st.State != StateRunning || len(st.Tools) != len(want) {
		t.Fatalf("status = %+v", st)
	}
}

// TestCrashMidCall: a server that dies while answering gives an error
// result, and the next call starts it again.
func TestCrashMidCall(t *testing.T) {
	m := newManager(t, Options{}, testSpec(t, "t"))
	got := toolsByName(t, m)
	before := call(t, got["mcp__t__pid"], `{}`).Output
	res := call(t, got["mcp__t__crash"], `{}`)
	if !res.IsError || !strings.Contains(res.Output, "stopped") {
		t.Fatalf("crash = %+v, want an error saying the server stopped", res)
	}
	var after tools.Result
	eventually(t, "the server to restart", func() bool {
		after = call(t, got["mcp__t__pid"], `{}`)
		return !after.IsError
	})
	if after.Output == before {
		t.Fatalf("pid %s after the crash: the server was not restarted", after.Output)
	}
	if st := m.Status()[0]; st.State != StateRunning {
		t.Fatalf("status after restart = %+v", st)
	}
}

// TestTimeout: a call the server never answers ends at the tool timeout
// as an error result; the server stays up for the next call.
func TestTimeout(t *testing.T) {
	m := newManager(t, Options{ToolTimeout: 300 * time.Millisecond}, testSpec(t, "t", "MCPCLIENT_TEST_IGNORE_CANCEL", "1"))
	got := toolsByName(t, m)
	before := call(t, got["mcp__t__pid"], `{}`).Output
	res := call(t, got["mcp__t__hang"], `{}`)
	if !res.IsError || !strings.Contains(res.Output, "timed out after 300ms") {
		t.Fatalf("hang = %+v, want a timeout error", res)
	}
	if after := call(t, got["mcp__t__pid"], `{}`); after.IsError || after.Output != before {
		t.Fatalf("after the timeout pid = %+v, want the same server (%s)", after, before)
	}
}

// TestCancel: cancelling the turn ends the call with the context's error.
func TestCancel(t *testing.T) {
	m := newManager(t, Options{}, testSpec(t, "t"))
	got := toolsByName(t, m)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := got["mcp__t__hang"].Run(ctx, json.RawMessage(`{}`))
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v, want context.Canceled", err)
	}
	if res := call(t, got["mcp__t__echo"], `{"text":"still here"}`); res.Output != "still here" {
		t.Fatalf("after cancel: %+v", res)
	}
}

// TestServersThatDoNotStart: a missing command and a server that never
// answers the handshake are reported, give no tools, and do not keep the
// other server's tools from the agent.
func TestServersThatDoNotStart(t *testing.T) {
	missing := Spec{Name: "missing", Type: Stdio, Command: filepath.Join(t.TempDir(), "no-such-server"), Origin: "test"}
	silent := testSpec(t, "silent", "MCPCLIENT_TEST_SILENT", "1")
	m := newManager(t, Options{StartupTimeout: 500 * time.Millisecond}, missing, silent, testSpec(t, "ok"))
	got := toolsByName(t, m)
	if got["mcp__ok__echo"] == nil || len(got) != 6 {
		t.Fatalf("tools = %v, want only the ok server's", got)
	}
	want := map[string]string{
		"missing": "cannot start: command",
		"silent":  "did not start within 500ms",
	}
	for _, st := range m.Status() {
		if w, ok := want[st.Name]; ok && (st.State != StateFailed || !strings.Contains(st.Error, w)) {
			t.Errorf("%s: %+v, want failed with %q", st.Name, st, w)
		}
	}
	// Asked again within the backoff, they are not started again.
	got = toolsByName(t, m)
	if len(got) != 6 {
		t.Fatalf("second listing: %d tools", len(got))
	}
}

// TestUnavailableToolsAnswer: once a server's tools are known, a server
// that cannot be restarted makes them return an error, not fail.
func TestUnavailableToolsAnswer(t *testing.T) {
	m := newManager(t, Options{}, testSpec(t, "t"))
	got := toolsByName(t, m)
	s := m.servers[0]
	// Break the command so the restart after the crash fails.
	s.spec.Command = filepath.Join(t.TempDir(), "gone")
	call(t, got["mcp__t__crash"], `{}`)
	eventually(t, "a restart attempt", func() bool {
		res := call(t, got["mcp__t__echo"], `{"text":"x"}`)
		if !res.IsError {
			t.Fatalf("echo on a dead server = %+v", res)
		}
		return strings.Contains(res.Output, "cannot start")
	})
}

// TestNotStarted: servers of an untrusted project, disabled ones and
// invalid ones never run.
func TestNotStarted(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	run := func(name string) Spec {
		return Spec{Name: name, Type: Stdio, Command: "sh", Args: []string{"-c", "touch " + marker + "; sleep 5"}, Origin: "test"}
	}
	untrusted := run("untrusted")
	untrusted.Project = true
	disabled := run("disabled")
	disabled.Disabled = true
	invalid := run("invalid")
	invalid.Err = errors.New("bad")
	m := newManager(t, Options{Root: dir}, untrusted, disabled, invalid)
	if got := toolsByName(t, m); len(got) != 0 {
		t.Fatalf("tools = %v", got)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a server that must not run was started")
	}
	states := map[string]string{}
	for _, st := range m.Status() {
		states[st.Name] = st.State
	}
	want := map[string]string{"untrusted": StateUntrusted, "disabled": StateDisabled, "invalid": StateInvalid}
	for k, v := range want {
		if states[k] != v {
			t.Errorf("%s: state %q, want %q", k, states[k], v)
		}
	}
}

// TestCloseStopsProcessGroup: closing the manager stops the server and
// what it started.
func TestCloseStopsProcessGroup(t *testing.T) {
	m := NewManager(Servers{List: []Spec{testSpec(t, "t")}}, Options{Env: os.Environ()})
	got := toolsByName(t, m)
	serverPID, _ := strconv.Atoi(call(t, got["mcp__t__pid"], `{}`).Output)
	childPID, _ := strconv.Atoi(call(t, got["mcp__t__spawn"], `{}`).Output)
	if serverPID == 0 || childPID == 0 {
		t.Fatal("no pids")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{serverPID, childPID} {
		eventually(t, "process "+strconv.Itoa(pid)+" to end", func() bool { return gone(pid) })
	}
	if res := call(t, got["mcp__t__echo"], `{"text":"x"}`); !res.IsError || !strings.Contains(res.Output, "stopped") {
		t.Fatalf("a call after Close = %+v", res)
	}
}

// gone reports whether the process has ended (a zombie waiting for a
// reaper counts as ended).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] == "Z"
}

// TestHTTPHeaders: the configured headers reach a streamable HTTP server
// on every request.
func TestHTTPHeaders(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "h", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "Says who called."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.Extra.Header.Get("Authorization")}}}, nil, nil
		})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var unauthorized atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0k" {
			unauthorized.Add(1)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	defer hs.Close()
	m := NewManager(Servers{List: []Spec{{Name: "h", Type: HTTP, URL: hs.URL, Headers: map[string]string{"Authorization": "Bearer t0k"}}}}, Options{})
	got := toolsByName(t, m)
	if res := call(t, got["mcp__h__whoami"], `{}`); res.Output != "Bearer t0k" {
		t.Fatalf("whoami = %+v", res)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if n := unauthorized.Load(); n != 0 {
		t.Fatalf("%d requests went without the header", n)
	}
}

// TestSecretsStayOut: what variables expand to, header values and the
// URL's query never show in errors, even when a transport quotes the URL.
func TestSecretsStayOut(t *testing.T) {
	const secret = "sup3r-secret-token"
	def := config.MCPServer{Type: "http", URL: "http://127.0.0.1:1/mcp?key=${TOKEN}", Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"}, Origin: "test"}
	spec := newSpec("s", def, func(k string) (string, bool) { return secret, k == "TOKEN" })
	if spec.Err != nil {
		t.Fatal(spec.Err)
	}
	if got := spec.redact("Post \"http://127.0.0.1:1/mcp?key=" + secret + "\": refused"); strings.Contains(got, secret) || !strings.Contains(got, redacted) {
		t.Fatalf("redact = %q", got)
	}
	m := newManager(t, Options{StartupTimeout: 5 * time.Second}, spec)
	if got := toolsByName(t, m); len(got) != 0 {
		t.Fatalf("tools = %v", got)
	}
	st := m.Status()[0]
	if st.State != StateFailed || strings.Contains(st.Error, secret) || !strings.Contains(st.Error, redacted) || strings.Contains(st.Display, secret) {
		t.Fatalf("status shows the secret or did not fail: %+v", st)
	}
}

// TestStderrShown: the end of what a failing stdio server wrote on stderr
// is reported, without its secrets.
func TestStderrShown(t *testing.T) {
	spec := Spec{Name: "noisy", Type: Stdio, Command: "sh", Args: []string{"-c", "echo starting >&2; echo 'error: bad token t0ken-value' >&2; exit 1"},
		Origin: "test", secrets: []string{"t0ken-value"}}
	m := newManager(t, Options{}, spec)
	toolsByName(t, m)
	st := m.Status()[0]
	if st.State != StateFailed || st.Stderr != "starting\nerror: bad token [redacted]" {
		t.Fatalf("status = %+v", st)
	}
}

// TestToolsFor: an agent whose tool list cannot name an MCP tool starts no
// server.
func TestToolsFor(t *testing.T) {
	for pattern, want := range map[string]bool{
		"*": true, "m*": true, "mcp__*": true, "mcp__github__*": true, "mcp__fs__read_text_file": true, "[m]cp__*": true,
		"read": false, "superagents_*": false, "mcx*": false, "mcp_x*": false,
	} {
		if got := mayMatchPrefix(pattern); got != want {
			t.Errorf("mayMatchPrefix(%q) = %v, want %v", pattern, got, want)
		}
	}
	m := newManager(t, Options{}, testSpec(t, "t"))
	if list, err := m.ToolsFor(context.Background(), []string{"read", "grep"}); err != nil || len(list) != 0 || m.Status()[0].State != StateNotStarted {
		t.Fatalf("a profile without MCP tools: %d tools, %v, state %s", len(list), err, m.Status()[0].State)
	}
	if list, err := m.ToolsFor(context.Background(), []string{"read", "mcp__t__echo"}); err != nil || len(list) != 6 {
		t.Fatalf("a profile naming one: %d tools, %v", len(list), err)
	}
}
