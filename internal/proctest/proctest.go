// Package proctest tells tests whether a process they started still runs.
package proctest

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
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

// SleepArg returns a duration for sleep, of more than 300 seconds, that
// no other call returns: it marks the sleep (and a script that holds it)
// in the process list. A sandboxed command runs in a PID namespace of its
// own, where $$ and $! are not the pids this process sees, so tests find
// a command's processes by their command line (Find).
func SleepArg(t testing.TB) string {
	t.Helper()
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("300.%09d", binary.BigEndian.Uint32(b[:])%1_000_000_000)
}

// Find returns the running processes (pids as this process sees them)
// one of whose arguments contains marker.
func Find(marker string) []int {
	dirs, _ := os.ReadDir("/proc")
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err == nil && bytes.Contains(cmdline, []byte(marker)) && Running(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// WaitFound waits until a process with marker runs, and returns its pids.
func WaitFound(t testing.TB, marker string) []int {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		if pids := Find(marker); len(pids) > 0 {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("no process with %q in its command line after %v", marker, waitLimit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WaitNoneFound waits until no process with marker runs; the test
// fails, and those processes are killed, when some still do after 30 s.
func WaitNoneFound(t testing.TB, marker string) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		pids := Find(marker)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("processes %v with %q in their command line still run after %v", pids, marker, waitLimit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
