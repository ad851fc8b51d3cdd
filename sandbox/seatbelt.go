package sandbox

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// seatbeltArgs are sandbox-exec's arguments that run argv with writes
// allowed only below the writable directories and, unless network, no
// network but Unix sockets (as on Linux).
//
// The profile never contains a path: each directory is a parameter
// (-D WRITABLE_n=path) that the profile names, so no path, whatever it
// holds (quotes, parentheses, newlines), can change the profile.
//
// The profile starts from (allow default), so that ordinary programs
// work, and closes what it can of the ways a command could have a process
// outside the sandbox act for it (see seatbeltEscapes).
func seatbeltArgs(writable []string, network bool, argv []string) []string {
	var p strings.Builder
	p.WriteString(`(version 1)
(allow default)
(deny signal)
(allow signal (target same-sandbox))
`)
	p.WriteString(seatbeltEscapes)
	p.WriteString(`(deny file-write*)
(allow file-write*
  (literal "/dev/null")
  (literal "/dev/zero")
  (literal "/dev/tty")
  (literal "/dev/dtracehelper")
  (subpath "/dev/fd")`)
	for i := range writable {
		fmt.Fprintf(&p, "\n  (subpath (param %q))", seatbeltParam(i))
	}
	p.WriteString(")\n")
	if !network {
		p.WriteString("(deny network*)\n(allow network* (remote unix-socket))\n")
	}
	args := []string{"-p", p.String()}
	for i, dir := range writable {
		args = append(args, "-D", seatbeltParam(i)+"="+dir)
	}
	args = append(args, "--")
	return append(args, argv...)
}

// seatbeltEscapes denies the known ways out of the sandbox through
// other processes, which run unconfined: Apple Events (osascript telling
// Terminal to run a script), LaunchServices (open -a Terminal x.command
// opens an application, and the application runs the file), and launchd
// jobs (launchctl submit). A command still reaches every other Mach
// service and Unix socket; docs/agents.md says what remains open.
const seatbeltEscapes = `(deny appleevent-send)
(deny lsopen)
(deny job-creation)
(deny process-exec (literal "/bin/launchctl"))
(deny mach-lookup
  (global-name "com.apple.coreservices.appleevents")
  (global-name "com.apple.coreservices.launchservicesd")
  (global-name "com.apple.coreservices.quarantine-resolver")
  (global-name "com.apple.lsd.mapdb")
  (global-name "com.apple.lsd.modifydb")
  (global-name "com.apple.lsd.open")
  (global-name "com.apple.lsd.openurl")
  (global-name "com.apple.lsd.xpc"))
`

func seatbeltParam(i int) string { return fmt.Sprintf("WRITABLE_%d", i) }

// seatbeltPrivate adds to seatbeltArgs's arguments the rules that keep
// commands out of superagents' own files: reads and writes below each
// private path are denied (the profile's later rules win over its
// earlier ones), each path a parameter as the writable ones are; the
// workspace stays readable, and writable when writes is set, should it
// lie below one (a task's worktree in the data directory).
func seatbeltPrivate(args, private []string, workspace string, writes bool) []string {
	if len(private) == 0 || len(args) < 2 {
		return args
	}
	var p strings.Builder
	var params []string
	p.WriteString("(deny file-read* file-write*")
	for i, path := range private {
		fmt.Fprintf(&p, "\n  (subpath (param %q))", seatbeltPrivateParam(i))
		params = append(params, "-D", seatbeltPrivateParam(i)+"="+path)
	}
	p.WriteString(")\n(allow file-read* (subpath (param \"WORKSPACE\")))\n")
	if writes {
		p.WriteString("(allow file-write* (subpath (param \"WORKSPACE\")))\n")
	}
	return seatbeltAdd(args, p.String(), append(params, "-D", "WORKSPACE="+workspace))
}

// seatbeltAdd appends rules to the profile of seatbeltArgs's arguments,
// and the parameters they name before the command.
func seatbeltAdd(args []string, rules string, params []string) []string {
	out := slices.Clone(args)
	out[1] += rules
	return slices.Insert(out, slices.Index(out, "--"), params...)
}

func seatbeltPrivateParam(i int) string { return fmt.Sprintf("PRIVATE_%d", i) }

// seatbeltProtected adds to the arguments the rules that keep the
// workspace's protected paths (protectedNames) as they are, after every
// allow: no write below them, existing or not, and neither the
// workspace nor its .git may be removed or renamed (to be put back as
// another). A .git file (a worktree's) may not be rewritten either; a
// .git directory may still be made (git init).
func seatbeltProtected(args []string, workspace string) []string {
	if len(args) < 2 {
		return args
	}
	var p strings.Builder
	var params []string
	p.WriteString("(deny file-write*")
	for i, path := range protectedPaths(workspace) {
		fmt.Fprintf(&p, "\n  (subpath (param %q))", seatbeltProtectedParam(i))
		params = append(params, "-D", seatbeltProtectedParam(i)+"="+path)
	}
	p.WriteString(")\n(deny file-write-unlink (literal (param \"PROTECTED_WORKSPACE\")) (literal (param \"PROTECTED_GIT\")))\n")
	p.WriteString("(deny file-write-data (literal (param \"PROTECTED_GIT\")))\n")
	params = append(params, "-D", "PROTECTED_WORKSPACE="+workspace, "-D", "PROTECTED_GIT="+filepath.Join(workspace, gitName))
	return seatbeltAdd(args, p.String(), params)
}

func seatbeltProtectedParam(i int) string { return fmt.Sprintf("PROTECTED_%d", i) }
