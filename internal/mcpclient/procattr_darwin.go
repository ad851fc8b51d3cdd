package mcpclient

import "syscall"

// serverProcAttr starts a stdio server in a process group of its own.
// macOS has no parent-death signal: a server outlives a process killed
// outright (its stdin closes, and MCP servers exit on that).
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
