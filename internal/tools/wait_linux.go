package tools

import (
	"errors"

	"golang.org/x/sys/unix"
)

// waitExitNoReap blocks until the process has exited, leaving it a zombie
// for cmd.Wait to reap (waitid with WNOWAIT).
func waitExitNoReap(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}
