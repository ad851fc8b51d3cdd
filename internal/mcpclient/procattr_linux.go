package mcpclient

import "syscall"

// serverProcAttr starts a stdio server in a process group of its own,
// killed by the kernel if this process dies first.
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
