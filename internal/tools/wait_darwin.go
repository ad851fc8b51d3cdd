package tools

import (
	"errors"

	"golang.org/x/sys/unix"
)

// waitExitNoReap blocks until the process has exited, leaving it a zombie
// for cmd.Wait to reap. macOS has no waitid with WNOWAIT: a kqueue
// watches for the exit instead (EVFILT_PROC, NOTE_EXIT), which does not
// reap. A process that is gone already (ESRCH) has exited.
func waitExitNoReap(pid int) {
	kq, err := unix.Kqueue()
	if err != nil {
		return // cmd.Wait still waits; only the pid's reuse window widens
	}
	defer unix.Close(kq)
	var change unix.Kevent_t
	unix.SetKevent(&change, pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	change.Fflags = unix.NOTE_EXIT
	events := make([]unix.Kevent_t, 1)
	for {
		n, err := unix.Kevent(kq, []unix.Kevent_t{change}, events, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil, n > 0:
			return
		}
	}
}
