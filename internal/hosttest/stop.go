package hosttest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/superagents/superagents/internal/proctest"
)

// StopServers ends the processes of the superagents command bin that
// still run for the home (its path in their command line or environment):
// servers a host left behind, or a background server superagents started
// for them. It gives them SIGTERM, then SIGKILL after 10 s.
func StopServers(t testing.TB, bin, home string) {
	t.Helper()
	pids := serversOf(bin, home)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for proctest.Running(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if proctest.Running(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// serversOf lists the processes running bin whose command line or
// environment names home.
func serversOf(bin, home string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || strings.TrimSuffix(exe, " (deleted)") != bin {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		environ, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if strings.Contains(string(cmdline), home) || strings.Contains(string(environ), home) {
			pids = append(pids, pid)
		}
	}
	return pids
}
