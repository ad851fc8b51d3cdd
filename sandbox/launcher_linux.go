package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// The marker of a re-execution as the sandbox's first process: both must
// be present, so that neither a stray variable in a user's environment
// nor an odd argv[0] alone turns the program into a launcher.
const (
	launcherArg0 = "superagents-sandbox"
	rulesEnv     = "SUPERAGENTS_SANDBOX_RULES"
)

// Exit statuses of the launcher, as a shell's: 126 when the command
// cannot run, 127 when it is not found.
const (
	exitCannotRun = 126
	exitNotFound  = 127
)

// rules is what the launcher applies, as the parent computed it.
type rules struct {
	// Writable directories; none in read-only mode.
	Writable []string `json:"writable"`
	// Network: sockets of every family, TCP connect and bind are left
	// alone.
	Network bool `json:"network"`
	// Isolate: the launcher starts in namespaces of its own (see
	// isolation), where it hides Private and mounts its own /proc.
	Isolate bool `json:"isolate,omitempty"`
	// Private are hidden; Expose, below them, stay reachable (the
	// workspace of a task whose worktree is in the data directory).
	Private []string `json:"private,omitempty"`
	Expose  []string `json:"expose,omitempty"`
	// Pin are bound on themselves, so that they can be neither renamed
	// nor removed (the workspace, its .git directory); ReadOnly are
	// bound on themselves read-only (the protected paths that exist).
	Pin      []string `json:"pin,omitempty"`
	ReadOnly []string `json:"read_only,omitempty"`
	// Probe: confine this process and exit 0, running nothing (see
	// probeIsolation).
	Probe bool `json:"probe,omitempty"`
}

// The first process of a PID namespace ignores the signals it has no
// handler for when they come from inside it: a command that ran as that
// process would survive its own `kill $$`. So the first process is a
// shell that runs the command as its child, with the same standard input
// (a background job's would be /dev/null), and exits with its status
// (128+n when signal n killed it); when it exits, every process left in
// the namespace is killed.
const (
	initShell  = "/bin/sh"
	initScript = `exec 9<&0; "$@" <&9 9<&- & exec 9<&-; wait $! 2>/dev/null`
)

// devices are written to by ordinary commands in every mode.
func devices() []string { return []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"} }

func init() {
	if len(os.Args) < 3 || os.Args[0] != launcherArg0 {
		return
	}
	spec, ok := os.LookupEnv(rulesEnv)
	if !ok {
		return
	}
	os.Exit(launch(spec, os.Args[1], os.Args[2:]))
}

// launch confines this process and becomes the command; it returns only
// on failure, with the exit status. The command never runs unconfined.
func launch(spec, path string, argv []string) int {
	fail := func(code int, err error) int {
		fmt.Fprintf(os.Stderr, "superagents sandbox: %v\n", err)
		return code
	}
	if err := os.Unsetenv(rulesEnv); err != nil {
		return fail(exitCannotRun, err)
	}
	var r rules
	if err := json.Unmarshal([]byte(spec), &r); err != nil {
		return fail(exitCannotRun, fmt.Errorf("read the rules: %w", err))
	}
	// The rules bind this thread, which then becomes the command: exec
	// keeps only the calling thread, so no other needs restricting.
	runtime.LockOSThread() // never unlocked: the process ends or execs
	if err := r.confine(); err != nil {
		return fail(exitCannotRun, fmt.Errorf("confine the command: %w", err))
	}
	if r.Probe {
		return 0
	}
	if r.Isolate {
		path, argv = initShell, append([]string{"sh", "-c", initScript, "sh", path}, argv[1:]...)
	}
	err := syscall.Exec(path, argv, os.Environ())
	if errors.Is(err, syscall.ENOENT) {
		return fail(exitNotFound, fmt.Errorf("%s: %w", path, err))
	}
	return fail(exitCannotRun, fmt.Errorf("run %s: %w", path, err))
}

// confine applies every rule to the calling thread, in the only order
// that works: the mounts need the capabilities that are dropped next,
// and Landlock and seccomp need no_new_privs (set as the capabilities
// go) when the process has none left.
func (r rules) confine() error {
	if r.Isolate {
		// The command dies with superagents: it is the first process
		// of its PID namespace, so everything it started dies too. (Set
		// here rather than by the parent's exec, whose check of the
		// parent's pid misreads 0 in a new PID namespace.)
		if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
			return fmt.Errorf("prctl(PR_SET_PDEATHSIG): %w", err)
		}
		if err := r.isolate(); err != nil {
			return err
		}
	}
	ruleset, err := r.landlockRuleset()
	if err != nil {
		return err
	}
	defer ruleset.close()
	if err := dropPrivileges(); err != nil {
		return err
	}
	if !r.Network {
		if err := denySockets(); err != nil {
			return err
		}
	}
	return ruleset.restrict()
}

// probe asks the kernel what it can enforce.
func probe() Support {
	s := probeLandlock()
	if !s.Files {
		return s
	}
	if err := seccompAvailable(); err != nil {
		s.Network = false
		s.Reason = fmt.Sprintf("seccomp cannot refuse network sockets here: %v", err)
		return s
	}
	iso, err := isolationSupport()
	if err != nil {
		s.Reason = err.Error()
		return s
	}
	s.Isolation, s.IsolationKind = true, iso.String()
	return s
}

func systemTempDirs() []string { return []string{"/tmp", "/var/tmp", "/dev/shm"} }

// selfExecutable is this very program, even when its file was replaced
// or removed since it started (an upgrade while it runs).
func selfExecutable() (string, error) {
	const self = "/proc/self/exe"
	if _, err := os.Stat(self); err != nil {
		return "", fmt.Errorf("find this program to start confined commands with: %w", err)
	}
	return self, nil
}

// command re-executes this program as the sandbox's first process: its
// init function applies the rules and executes argv.
func (s *Sandbox) command(argv, env []string) (*exec.Cmd, error) {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, err
	}
	return s.commandPath(path, argv, env)
}

// commandPath is command for the program at path, with argv as its
// arguments (argv[0] included).
func (s *Sandbox) commandPath(path string, argv, env []string) (*exec.Cmd, error) {
	r := rules{Writable: s.writable, Network: s.policy.Network}
	attr := &syscall.SysProcAttr{}
	if s.support.Isolation {
		iso, err := isolationSupport()
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		r.Isolate, r.Private, r.Expose = true, s.private, []string{realPath(s.policy.Workspace)}
		r.Pin, r.ReadOnly = s.shields()
		attr = iso.attr()
	}
	spec, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	cmd := &exec.Cmd{
		Path:        s.self,
		Args:        append([]string{launcherArg0, path}, argv...),
		Env:         append(env[:len(env):len(env)], rulesEnv+"="+string(spec)),
		SysProcAttr: attr,
	}
	return cmd, nil
}
