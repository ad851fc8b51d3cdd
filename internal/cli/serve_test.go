package cli_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/superagents/superagents/internal/authtest"
	"github.com/superagents/superagents/internal/cli"
	"github.com/superagents/superagents/internal/frontends"
	"github.com/superagents/superagents/internal/httpapi"
)

// waitDiscovery waits until a server has written its discovery file.
func waitDiscovery(t *testing.T, dir string, exited <-chan int, stderr *syncBuffer) httpapi.Discovery {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		d, err := httpapi.ReadDiscovery(dir)
		if err == nil {
			return d
		}
		select {
		case code := <-exited:
			t.Fatalf("serve exited with %d before listening: %s", code, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("no %s within a minute: %s", httpapi.DiscoveryFile, stderr.String())
	return httpapi.Discovery{}
}

// servedAPI is a serve command run in the test, and its API.
type servedAPI struct {
	t      *testing.T
	url    string
	token  string
	client *http.Client
	stderr *syncBuffer
	exited chan int
	stop   context.CancelFunc
}

// startServe runs serve with args (an address of its own is added) and
// waits until it listens; token is the bearer its calls carry. It is
// stopped when the test ends, if it has not been.
func startServe(t *testing.T, h *harness, token string, args ...string) *servedAPI {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	s := &servedAPI{t: t, token: token, client: &http.Client{Transport: &http.Transport{}}, stderr: &syncBuffer{}, exited: make(chan int, 1), stop: stop}
	go func() {
		s.exited <- frontends.Main(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), cli.Env{
			Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: s.stderr,
			Getenv: func(k string) string { return h.env[k] },
		})
	}()
	s.url = waitDiscovery(t, h.dataDir, s.exited, s.stderr).URL
	t.Cleanup(func() {
		if s.stop != nil {
			s.shutdown()
		}
	})
	return s
}

// call sends a JSON body (none when empty) and decodes the answer into
// out, failing the test on an error status.
func (s *servedAPI) call(method, path, body string, out any) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := s.client.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		s.t.Fatalf("%s %s = %d %s", method, path, res.StatusCode, data)
	}
	if err := json.Unmarshal(data, out); err != nil {
		s.t.Fatalf("%s %s: %v: %s", method, path, err, data)
	}
}

// shutdown stops the server and returns its exit status.
func (s *servedAPI) shutdown() int {
	s.stop()
	s.stop = nil
	s.client.CloseIdleConnections()
	return <-s.exited
}

func TestServe(t *testing.T) {
	h := newHarness(t)
	ws := t.TempDir()
	token := h.ok("", "serve", "--print-token")
	info, err := os.Stat(filepath.Join(h.dataDir, httpapi.TokenFile))
	if err != nil || info.Mode().Perm() != 0o600 || len(token) < 40 {
		t.Fatalf("token %q, file %v (mode %v): want a long token in a 0600 file", token, err, info.Mode().Perm())
	}
	if again := h.ok("", "serve", "--print-token"); again != token {
		t.Fatal("--print-token printed another token the second time")
	}

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var stderr syncBuffer
	exited := make(chan int, 1)
	go func() {
		exited <- frontends.Main(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--workspace", ws}, cli.Env{
			Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr,
			Getenv: func(k string) string { return h.env[k] },
		})
	}()
	d := waitDiscovery(t, h.dataDir, exited, &stderr)
	if d.PID != os.Getpid() || d.Port == 0 || !strings.HasPrefix(d.URL, "http://127.0.0.1:") || d.Started.IsZero() {
		t.Fatalf("discovery = %+v", d)
	}
	if info, err := os.Stat(filepath.Join(h.dataDir, httpapi.DiscoveryFile)); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("discovery file mode = %v, %v: want 0600", info.Mode().Perm(), err)
	}

	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	call := func(method, path, body string, auth bool) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, d.URL+path, strings.NewReader(body))
		if auth {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(res.Body).Decode(&out)
		return res.StatusCode, out
	}
	if code, _ := call("GET", "/v1/health", "", false); code != http.StatusUnauthorized {
		t.Fatalf("health without the token = %d", code)
	}
	if code, body := call("GET", "/v1/health", "", true); code != http.StatusOK || body["status"] != "ok" {
		t.Fatalf("health = %d %v", code, body)
	}
	code, sess := call("POST", "/v1/sessions", "{}", true)
	if code != http.StatusCreated {
		t.Fatalf("create session = %d %v", code, sess)
	}
	code, turn := call("POST", "/v1/sessions/"+sess["id"].(string)+"/messages?wait=true", `{"text": "What is 2+2?"}`, true)
	if code != http.StatusOK || turn["turn"].(map[string]any)["answer"] != "2+2 equals 4." {
		t.Fatalf("a turn with the offline model = %d %v", code, turn)
	}
	// The task tools over MCP, behind the same token.
	if code, _ := call("POST", "/mcp", `{}`, false); code != http.StatusUnauthorized {
		t.Fatalf("/mcp without the token = %d", code)
	}
	mcpClient := &http.Client{Transport: authtest.Bearer(token, client.Transport)}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "probe", Version: "1.0"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.URL + "/mcp", HTTPClient: mcpClient, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("MCP over HTTP: %v", err)
	}
	toolList, err := cs.ListTools(ctx, nil)
	if err != nil || len(toolList.Tools) != 6 {
		t.Fatalf("MCP tools = %v, %v: want the six task tools", toolList, err)
	}
	cs.Close()
	if strings.Contains(stderr.String(), token) {
		t.Fatal("the token appears in the server's log")
	}

	// A second server on the same data directory is refused.
	r := h.run("serve", "--addr", "127.0.0.1:0", "--workspace", ws)
	if r.code != cli.ExitFailure || !strings.Contains(r.stderr, "already runs") {
		t.Fatalf("second serve = %d %q", r.code, r.stderr)
	}

	stop() // as SIGINT does
	if code := <-exited; code != cli.ExitOK {
		t.Fatalf("serve exited with %d after a graceful stop: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(h.dataDir, httpapi.DiscoveryFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the discovery file is still there after shutdown: %v", err)
	}
	if !strings.Contains(stderr.String(), "listening on "+d.URL) || !strings.Contains(stderr.String(), "method=POST path=/v1/sessions status=201") {
		t.Errorf("the server's log lacks the start line or request lines:\n%s", stderr.String())
	}
}

// TestServeDiscoveryGoesWhenShutdownBegins: server.json is removed as
// soon as the server stops accepting connections, while a request is
// still in flight, not once everything has closed: a program that reads
// it must not be sent to a port that no longer answers.
func TestServeDiscoveryGoesWhenShutdownBegins(t *testing.T) {
	h := newHarness(t)
	h.env["SUPERAGENTS_OFFLINE_SCRIPT"] = writeScript(t)
	ws := t.TempDir()
	token := h.ok("", "serve", "--print-token")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var stderr syncBuffer
	exited := make(chan int, 1)
	go func() {
		exited <- frontends.Main(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--workspace", ws, "--shutdown-timeout", "2m"}, cli.Env{
			Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr,
			Getenv: func(k string) string { return h.env[k] },
		})
	}()
	d := waitDiscovery(t, h.dataDir, exited, &stderr)
	release := func() {
		if err := os.WriteFile(filepath.Join(ws, "release"), nil, 0o644); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() {
		if t.Failed() { // let the turn and the server end
			release()
			stop()
			select {
			case <-exited:
			case <-time.After(time.Minute):
			}
		}
	})

	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	call := func(method, path, body string) (int, map[string]any, error) {
		req, _ := http.NewRequest(method, d.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer res.Body.Close()
		var out map[string]any
		err = json.NewDecoder(res.Body).Decode(&out)
		return res.StatusCode, out, err
	}
	code, sess, err := call("POST", "/v1/sessions", "{}")
	if err != nil || code != http.StatusCreated {
		t.Fatalf("create session = %d %v %v", code, sess, err)
	}
	id := sess["id"].(string)
	// A turn that waits for the release file, asked for with wait=true:
	// its request stays in flight.
	type answer struct {
		code int
		body map[string]any
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		code, body, err := call("POST", "/v1/sessions/"+id+"/messages?wait=true", `{"text": "What is 2+2? (wait for release)"}`)
		answered <- answer{code, body, err}
	}()
	deadline := time.Now().Add(time.Minute)
	for {
		_, got, err := call("GET", "/v1/sessions/"+id, "")
		if turn, _ := got["turn"].(map[string]any); err == nil && turn["status"] == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the turn did not start within a minute: %v %v", got, err)
		}
		time.Sleep(20 * time.Millisecond)
	}

	stop() // as SIGINT does
	deadline = time.Now().Add(time.Minute)
	for {
		_, err := os.Stat(filepath.Join(h.dataDir, httpapi.DiscoveryFile))
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		select {
		case a := <-answered:
			t.Fatalf("the request in flight ended (%d %v %v) before %s was removed", a.code, a.body, a.err, httpapi.DiscoveryFile)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is still there a minute into the shutdown, with a request in flight", httpapi.DiscoveryFile)
		}
	}
	release()
	a := <-answered
	if turn, _ := a.body["turn"].(map[string]any); a.err != nil || a.code != http.StatusOK || turn["answer"] != "2+2 equals 4." {
		t.Fatalf("the request in flight got %d %v %v, want its answer", a.code, a.body, a.err)
	}
	if code := <-exited; code != cli.ExitOK {
		t.Fatalf("serve exited with %d: %s", code, stderr.String())
	}
}

func TestServeRefusesRemoteAddresses(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"all interfaces", []string{"--addr", "0.0.0.0:0"}, "not a loopback address"},
		{"empty host", []string{"--addr", ":0"}, "not a loopback address"},
		{"a name", []string{"--addr", "example.com:5165"}, "not a loopback address"},
		{"no port", []string{"--addr", "127.0.0.1"}, "HOST:PORT"},
		{"bad port", []string{"--addr", "127.0.0.1:http-ish"}, "bad port"},
		{"wildcard origin", []string{"--addr", "127.0.0.1:0", "--allow-origin", "*"}, "no wildcard"},
		{"negative rate", []string{"--rate-limit", "-1"}, "rate-limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.run(append([]string{"serve", "--workspace", t.TempDir()}, tt.args...)...)
			if r.code != cli.ExitUsage || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("serve %v = %d %q, want usage error about %q", tt.args, r.code, r.stderr, tt.want)
			}
		})
	}
}
