// Package proc tells whether a process still runs.
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Alive reports whether a process exists and still runs: a zombie (a
// killed process its parent has not reaped yet) does not. Where /proc is
// missing (macOS), existing is all it can tell.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !os.IsNotExist(err) || !procMounted()
	}
	// "pid (command) state ...": the command may hold any character, so
	// the state is read after the last parenthesis.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return true
	}
	return stat[i+2] != 'Z' && stat[i+2] != 'X'
}

// procMounted reports whether this system has a /proc of processes.
func procMounted() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}
