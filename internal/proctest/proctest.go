// Package proctest tells tests whether a process they started still runs.
package proctest

import (
	"syscall"
	"testing"
	"time"

	"github.com/superagents/superagents/internal/proc"
)

// waitLimit bounds WaitGone: it guards against a hung test, it does not
// measure speed.
const waitLimit = 30 * time.Second

// Running tells whether a process exists and is not a zombie. A process
// killed after its parent ended is reaped by whichever process adopted
// it, which may take a while or, in a container whose first process
// reaps nothing, never happen: as a zombie it is dead all the same.
func Running(pid int) bool { return proc.Alive(pid) }

// WaitGone waits until the process no longer runs; the test fails, and
// the process is killed, when it still does after 30 s.
func WaitGone(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for Running(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d still runs after %v", pid, waitLimit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
