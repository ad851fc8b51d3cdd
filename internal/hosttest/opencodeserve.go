package hosttest

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// OpenCodeServer is `opencode serve` in the host's home (seen with
// 1.18.33), with the plugins of its configuration: the host's own runs go
// without them (OPENCODE_PURE), a server started here loads them.
type OpenCodeServer struct {
	URL string
	cmd *exec.Cmd
	out *lockedBuffer
}

// ServeOpenCode starts OpenCode's server on a free loopback port and
// waits until it answers. The test's end stops it.
func (h *Host) ServeOpenCode(t testing.TB) *OpenCodeServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	var env []string
	for _, kv := range h.env {
		if !strings.HasPrefix(kv, "OPENCODE_PURE=") {
			env = append(env, kv)
		}
	}
	s := &OpenCodeServer{URL: "http://127.0.0.1:" + strconv.Itoa(port), out: &lockedBuffer{}}
	s.cmd = exec.Command(h.Bin, "serve", "--hostname", "127.0.0.1", "--port", strconv.Itoa(port), "--print-logs", "--log-level", "INFO")
	s.cmd.Dir, s.cmd.Env = h.Workspace, env
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	s.cmd.WaitDelay = waitDelay
	// A process group of its own: OpenCode signals its group when it
	// stops, which would be the test's otherwise.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	deadline := time.Now().Add(60 * time.Second)
	probe := &http.Client{Timeout: 5 * time.Second}
	for {
		resp, err := probe.Get(s.URL + "/config")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("opencode serve did not answer in 60s: %v\n%s", err, Trim(s.Log(), 3000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Stop ends the server (SIGTERM, as a user's Ctrl-C would) and waits for
// it. Its MCP servers' background server, and the tasks there, go on.
func (s *OpenCodeServer) Stop() {
	if s.cmd.Process == nil || s.cmd.ProcessState != nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck // gone already
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }() //nolint:errcheck // a signalled exit
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill() //nolint:errcheck // gone already
		<-done
	}
}

// Log is what the server printed (its log, with --print-logs).
func (s *OpenCodeServer) Log() string { return s.out.String() }

// RunAttached runs `opencode run --attach URL` once, as Run does: the
// turn runs in the server.
func (h *Host) RunAttached(ctx context.Context, url, prompt, session string) (string, Result) {
	args := append([]string{"run", "--attach", url}, h.args(prompt, session)[1:]...)
	r := run(ctx, h.Workspace, h.env, h.Bin, args...)
	return h.session(r.Stdout), r
}

// lockedBuffer is a buffer a process writes while a test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
