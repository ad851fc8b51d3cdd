package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/superagents/superagents/internal/proctest"
)

// The background MCP server: `superagents mcp` passes the protocol to a
// detached server that runs the tasks, so that they outlive the host's
// process. These tests run the real binary with the offline model, whose
// script makes a task wait until the test writes a file named release in
// the workspace.

// bgProc is a user's world for the background server's tests, with a
// short grace period.
func bgProc(t *testing.T) (*proc, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	p := newProc(t)
	p.env = append(p.env, "SUPERAGENTS_MODEL=offline", "SUPERAGENTS_OFFLINE_SCRIPT="+writeScript(t), "SUPERAGENTS_MCP_IDLE=1s")
	t.Cleanup(func() { stopServers(t, p) })
	return p, t.TempDir()
}

// socketDir is where the background servers of p's data directory keep
// their sockets and locks.
func socketDir(p *proc) string {
	for _, e := range p.env {
		if v, ok := strings.CutPrefix(e, "SUPERAGENTS_DATA_DIR="); ok {
			return filepath.Join(v, "run")
		}
	}
	return ""
}

// serverPIDs returns the process ids the lock files of p's servers hold.
func serverPIDs(p *proc) []int {
	locks, _ := filepath.Glob(filepath.Join(socketDir(p), "*.lock"))
	var pids []int
	for _, l := range locks {
		b, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// stopServers ends the servers a failed test left running.
func stopServers(t testing.TB, p *proc) {
	for _, pid := range serverPIDs(p) {
		if proctest.Running(pid) {
			syscall.Kill(pid, syscall.SIGTERM)
			proctest.WaitGone(t, pid)
		}
	}
}

// startProxy runs `superagents mcp` as a host does, in a process group of
// its own, and connects to it.
func startProxy(t *testing.T, p *proc, ws, client string) *mcpHost {
	t.Helper()
	h := &mcpHost{t: t, stdout: &syncBuffer{}, stderr: &syncBuffer{}, logs: make(chan map[string]any, 16), exited: make(chan error, 1)}
	h.cmd = exec.Command(p.bin, "mcp", "--workspace", ws)
	h.cmd.Env = p.env
	h.cmd.Stderr = h.stderr
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
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
	c := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1.0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), mcpWait)
	defer cancel()
	transport := &mcp.IOTransport{Reader: teeReadCloser{io.TeeReader(stdout, h.stdout), stdout}, Writer: stdin}
	if h.cs, err = c.Connect(ctx, transport, nil); err != nil {
		t.Fatalf("connect to superagents mcp: %v\nstderr: %s", err, h.stderr)
	}
	return h
}

// runnerOf returns the runner a task runs in, as the store says.
func runnerOf(t *testing.T, p *proc, id string) string {
	t.Helper()
	var list []struct {
		ID       string `json:"id"`
		Status   string `json:"status"`
		RunnerID string `json:"runner_id"`
	}
	if err := json.Unmarshal([]byte(p.ok("tasks", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	for _, task := range list {
		if task.ID != id {
			continue
		}
		if task.Status != "running" || task.RunnerID == "" {
			t.Fatalf("task %s: status %q, runner %q; want it running", id, task.Status, task.RunnerID)
		}
		return task.RunnerID
	}
	t.Fatalf("no task %s in the store", id)
	return ""
}

// onlyServer returns the one background server of p's data directory.
func onlyServer(t *testing.T, p *proc) int {
	t.Helper()
	pids := serverPIDs(p)
	if len(pids) != 1 || !proctest.Running(pids[0]) {
		t.Fatalf("background servers %v; want one, running", pids)
	}
	return pids[0]
}

// waitServerGone waits until the server exited by itself, and checks that
// it left nothing behind.
func waitServerGone(t *testing.T, p *proc, pid int) {
	t.Helper()
	proctest.WaitGone(t, pid)
	left, err := os.ReadDir(socketDir(p))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Fatalf("the server left %v behind", names)
	}
}

// completed waits for a task's end and checks that it completed with the
// script's answer.
func completed(t *testing.T, p *proc, id string) {
	t.Helper()
	if out := p.ok("task", "output", id, "--block", "--timeout", "60"); !strings.Contains(out, "completed") || !strings.Contains(out, "2+2 equals 4.") {
		t.Fatalf("output of %s = %q", id, out)
	}
}

// TestMCPBackgroundTaskOutlivesHost: a task still running when the host
// closes the connection runs on in the background server, past the grace
// period, and completes; the next host reaches the same server; once
// nobody is connected and nothing runs, the server exits and leaves
// nothing behind.
func TestMCPBackgroundTaskOutlivesHost(t *testing.T) {
	p, ws := bgProc(t)
	first := startProxy(t, p, ws, "first")
	id := first.launch("add", "What is 2+2? (wait for release)", false)
	server := onlyServer(t, p)
	if !strings.Contains(first.stderr.String(), "superagents mcp: tasks use the offline model (chosen by SUPERAGENTS_MODEL)\n") {
		t.Errorf("stderr does not say which model the tasks use:\n%s", first.stderr)
	}
	first.cs.Close()
	first.wait()

	// Longer than the grace period: the running task keeps the server.
	time.Sleep(2 * time.Second)
	if !proctest.Running(server) {
		t.Fatal("the background server exited while its task ran")
	}
	if runnerOf(t, p, id) == "" {
		t.Fatal("no runner")
	}

	second := startProxy(t, p, ws, "second")
	if got := onlyServer(t, p); got != server {
		t.Fatalf("the second host reached server %d, want %d", got, server)
	}
	if err := os.WriteFile(filepath.Join(ws, "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	completed(t, p, id)
	second.cs.Close()
	second.wait()
	waitServerGone(t, p, server)
}

// TestMCPBackgroundSurvivesProcessGroupKill: a host that kills its MCP
// server's whole process group with SIGKILL (as OpenCode does when it
// exits) does not reach the background server, which is no child of the
// proxy, and the task completes.
func TestMCPBackgroundSurvivesProcessGroupKill(t *testing.T) {
	p, ws := bgProc(t)
	h := startProxy(t, p, ws, "opencode")
	id := h.launch("add", "What is 2+2? (wait for release)", false)
	server := onlyServer(t, p)
	if parent := parentOf(t, server); parent == h.cmd.Process.Pid {
		t.Fatalf("the background server is the proxy's child")
	}
	if err := syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := h.exit(); err == nil {
		t.Fatal("the proxy was not killed")
	}
	if !proctest.Running(server) {
		t.Fatal("the background server died with the host's process group")
	}
	if err := os.WriteFile(filepath.Join(ws, "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	completed(t, p, id)
	waitServerGone(t, p, server)
}

// parentOf reads a process's parent from /proc (Linux).
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	// pid (comm) state ppid ...: comm may hold spaces, so read after ')'.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		t.Fatal(err)
	}
	return ppid
}

// TestMCPBackgroundSharedStart: two hosts that start at once, with no
// server running, end up on one server; one of them stopped with SIGTERM
// leaves its task running.
func TestMCPBackgroundSharedStart(t *testing.T) {
	p, ws := bgProc(t)
	hosts := make(chan *mcpHost, 2)
	for _, name := range []string{"one", "two"} {
		go func() { hosts <- startProxy(t, p, ws, name) }()
	}
	a, b := <-hosts, <-hosts
	ida := a.launch("add", "What is 2+2? (wait for release)", false)
	idb := b.launch("add", "What is 2+2? (wait for release)", false)
	if ra, rb := runnerOf(t, p, ida), runnerOf(t, p, idb); ra != rb {
		t.Fatalf("the tasks run in two processes: %s and %s", ra, rb)
	}
	server := onlyServer(t, p)
	// A host that ends its server with SIGTERM: the proxy exits cleanly,
	// and its task runs on.
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	a.wait()
	if err := os.WriteFile(filepath.Join(ws, "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	completed(t, p, ida)
	completed(t, p, idb)
	b.cs.Close()
	b.wait()
	waitServerGone(t, p, server)
}

// TestMCPBackgroundHostHangsUp: a host that hangs up before it says
// anything starts no server, and gets not a byte.
func TestMCPBackgroundHostHangsUp(t *testing.T) {
	p, ws := bgProc(t)
	cmd := exec.Command(p.bin, "mcp", "--workspace", ws)
	cmd.Env = p.env
	out, err := cmd.Output()
	if err != nil || len(out) != 0 {
		t.Fatalf("exit %v, stdout %q", err, out)
	}
	if pids := serverPIDs(p); len(pids) != 0 {
		t.Fatalf("servers %v started for nobody", pids)
	}
}

// BenchmarkMCPInitialize measures, from the start of `superagents mcp` to
// its answer to initialize: what a host waits for before it sees the
// tools (Codex gives its model none when that takes 1.5 s or more).
func BenchmarkMCPInitialize(b *testing.B) {
	bin, err := binary()
	if err != nil {
		b.Fatalf("build: %v", err)
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n"
	world := func(b *testing.B, idle string) []string {
		home := b.TempDir()
		env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "SUPERAGENTS_DATA_DIR=" + filepath.Join(home, "data"),
			"SUPERAGENTS_MODEL=offline", "SUPERAGENTS_MCP_IDLE=" + idle}
		b.Cleanup(func() { stopServers(b, &proc{env: env}) })
		return env
	}
	answer := func(b *testing.B, env []string, ws string, args ...string) {
		cmd := exec.Command(bin, append([]string{"mcp", "--workspace", ws}, args...)...)
		cmd.Env = env
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		io.WriteString(stdin, initialize)
		line := make([]byte, 1)
		if _, err := stdout.Read(line); err != nil {
			b.Fatalf("no answer: %v", err)
		}
		b.StopTimer()
		stdin.Close()
		io.Copy(io.Discard, stdout)
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.Run("foreground", func(b *testing.B) {
		env, ws := world(b, "1m"), b.TempDir()
		for b.Loop() {
			answer(b, env, ws, "--foreground")
		}
	})
	b.Run("server running", func(b *testing.B) {
		env, ws := world(b, "1m"), b.TempDir()
		answer(b, env, ws) // starts the server
		for b.Loop() {
			answer(b, env, ws)
		}
	})
	b.Run("server started", func(b *testing.B) {
		env := world(b, "1s")
		for b.Loop() {
			answer(b, env, b.TempDir()) // another workspace: another server
		}
	})
}

// TestMCPBackgroundFallsBack: when no background server can be had (here
// no directory for it can be made: neither in the data directory nor in
// the temporary directory), `superagents mcp` says so and serves in its
// own process.
func TestMCPBackgroundFallsBack(t *testing.T) {
	p, ws := bgProc(t)
	if err := os.MkdirAll(filepath.Dir(socketDir(p)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(socketDir(p), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	if err := os.WriteFile(filepath.Join(tmp, "superagents-"+strconv.Itoa(os.Getuid())), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p.env = append(p.env, "TMPDIR="+tmp)
	h := startProxy(t, p, ws, "fallback")
	id := h.launch("add", "What is 2+2?", false)
	completed(t, p, id)
	if !strings.Contains(h.stderr.String(), "superagents mcp: warning: no background server (") ||
		!strings.Contains(h.stderr.String(), "serving in this process instead") {
		t.Fatalf("stderr does not say it serves in the foreground:\n%s", h.stderr)
	}
	h.cs.Close()
	h.wait()
}

// TestMCPBackgroundSandboxWarning: the background server's stderr is a
// log the user does not see, so `superagents mcp` itself says what the
// sandbox cannot enforce.
func TestMCPBackgroundSandboxWarning(t *testing.T) {
	p, ws := bgProc(t)
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var home string
	for _, e := range p.env {
		if v, ok := strings.CutPrefix(e, "HOME="); ok {
			home = v
		}
	}
	user := filepath.Join(home, ".config", "superagents", "config.toml")
	if err := os.MkdirAll(filepath.Dir(user), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(user, []byte("[sandbox]\nwritable = ["+strconv.Quote(notDir)+"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := startProxy(t, p, ws, "warned")
	want := "superagents mcp: warning: sandbox: writable directory " + notDir + " is not a directory"
	// Standard error is copied from the process's pipe on its own: it may
	// come after the answer to initialize.
	deadline := time.Now().Add(mcpWait)
	for !strings.Contains(h.stderr.String(), want) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := h.stderr.String(); strings.Count(got, want) != 1 || strings.Contains(got, "no background server") {
		t.Fatalf("stderr does not give the sandbox's warning once, from a background server:\n%s", got)
	}
	h.cs.Close()
	h.wait()
}
