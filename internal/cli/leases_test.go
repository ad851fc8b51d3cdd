package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/superagents/superagents/internal/proctest"
	"github.com/superagents/superagents/internal/sandboxtest"
)

// runSession runs one turn through the real binary and returns the id of
// the session it created.
func runSession(t *testing.T, p *proc, ws string) string {
	t.Helper()
	out := p.ok("run", "--workspace", ws, "--json", "What is 1+1?")
	var done struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(out[strings.LastIndex(out, "\n")+1:]), &done); err != nil || done.SessionID == "" {
		t.Fatalf("run --json: %q: %v", out, err)
	}
	return done.SessionID
}

// refusedFromEveryWayIn: run, chat, append and clear, each in a process
// of its own, are refused on the session with exit 1 and a message that
// holds want.
func refusedFromEveryWayIn(t *testing.T, p *proc, ws, session, want string) {
	t.Helper()
	for _, args := range [][]string{
		{"run", "--workspace", ws, "--session", session, "What is 2+2?"},
		{"append", session, "--text", "an aside"},
		{"clear", session},
	} {
		_, errOut, code := p.run(args...)
		if code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("%v: exit %d, %q; want exit 1 and %q", args, code, errOut, want)
		}
	}
	cmd := exec.Command(p.bin, "chat", "--workspace", ws, "--session", session)
	cmd.Env, cmd.Stdin = p.env, strings.NewReader("What is 2+2?\n")
	out, err := cmd.CombinedOutput()
	if exit, ok := err.(*exec.ExitError); want != "busy" && (!ok || exit.ExitCode() != 1 || !strings.Contains(string(out), want)) {
		t.Errorf("chat --session: %v, %q; want exit 1 and %q", err, out, want)
	}
	if want == "busy" && !strings.Contains(string(out), want) {
		t.Errorf("chat --session on a busy session: %q; want %q", out, want)
	}
}

// TestTaskSessionIsTheTasks: while a task runs in a detached worker, no
// other process writes to its session: run, chat, append and clear are
// refused with what to do instead, and the task's history is untouched.
func TestTaskSessionIsTheTasks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	p := newProc(t)
	ws := t.TempDir()
	p.env = append(p.env, "SUPERAGENTS_OFFLINE_SCRIPT="+writeScript(t))
	parent := runSession(t, p, ws)
	task := p.ok("task", "launch", "--workspace", ws, "--session", parent, "--agent", "general", "--description", "sleeper", "sleep please")
	sleeper := waitSleeper(t, filepath.Join(ws, "sleeper.pid"))
	before := p.ok("history", task, "--json")

	refusedFromEveryWayIn(t, p, ws, task, "resume the task")

	if after := p.ok("history", task, "--json"); after != before {
		t.Fatalf("the task's session changed:\nbefore %s\nafter  %s", before, after)
	}
	if out := p.ok("task", "cancel", task); !strings.Contains(out, "cancelled") {
		t.Fatalf("cancel = %q", out)
	}
	proctest.WaitNoneFound(t, sleeper)
	// Ended, it is still the task's: continued by resuming it.
	refusedFromEveryWayIn(t, p, ws, task, "resume the task")
}

// TestTurnLeaseAcrossProcesses: a turn running in one process keeps every
// other process out of its session; once that process is killed outright,
// the next one reclaims the session.
func TestTurnLeaseAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	p := newProc(t)
	ws := t.TempDir()
	p.env = append(p.env, "SUPERAGENTS_OFFLINE_SCRIPT="+writeScript(t))
	session := runSession(t, p, ws)

	holder := exec.Command(p.bin, "run", "--workspace", ws, "--session", session, "sleep please")
	holder.Env = p.env
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	sleeper := waitSleeper(t, filepath.Join(ws, "sleeper.pid"))
	t.Cleanup(func() {
		for _, pid := range proctest.Find(sleeper) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})

	refusedFromEveryWayIn(t, p, ws, session, "busy")

	// kill -9: the holder never gives its lease back.
	if err := holder.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()
	if sandboxtest.Isolates(t) {
		proctest.WaitNoneFound(t, sleeper) // its command died with it
	}
	for _, pid := range proctest.Find(sleeper) {
		_ = syscall.Kill(pid, syscall.SIGKILL) // unconfined, it outlives its process
	}
	if out := p.ok("run", "--workspace", ws, "--session", session, "What is 3+3?"); !strings.Contains(out, "3+3 equals 6") {
		t.Fatalf("run after the holder died = %q", out)
	}
	if out := p.ok("clear", session); out != "" {
		t.Fatalf("clear printed %q", out)
	}
	if _, err := os.Stat(filepath.Join(ws, "sleeper.pid")); err != nil {
		t.Fatal(err)
	}
}
