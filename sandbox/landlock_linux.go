package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
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

// landlockNetABI is the first Landlock ABI with TCP rules (Linux 6.7).
const landlockNetABI = 4

// rules is what the launcher applies, as the parent computed it.
type rules struct {
	// Writable directories; none in read-only mode.
	Writable []string `json:"writable"`
	// Network: TCP connect and bind are left alone.
	Network bool `json:"network"`
}

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
	if err := r.apply(); err != nil {
		return fail(exitCannotRun, fmt.Errorf("confine the command: %w", err))
	}
	err := syscall.Exec(path, argv, os.Environ())
	if errors.Is(err, syscall.ENOENT) {
		return fail(exitNotFound, fmt.Errorf("%s: %w", path, err))
	}
	return fail(exitCannotRun, fmt.Errorf("run %s: %w", path, err))
}

// apply restricts the calling thread (and what it will run) to the
// rules; the caller has locked it and executes the command from it.
func (r rules) apply() error {
	cfg := landlock.Config{
		HandledAccessFS: landlock.V11.HandledAccessFS,
		// Signals to processes outside the sandbox are refused, so a
		// command cannot stop superagents or the user's programs.
		Scoped: landlock.V11.Scoped,
	}
	if !r.Network {
		cfg.HandledAccessNet = landlock.V11.HandledAccessNet
	} else {
		// Abstract Unix sockets are a way out to local servers, as TCP.
		cfg.Scoped &^= ll.ScopeAbstractUnixSocket
	}
	list := []landlock.Rule{
		// Read and run anything; reach any Unix socket by its path.
		landlock.RODirs("/").WithResolveUnix(),
		landlock.RWFiles(devices()...).IgnoreIfMissing(),
	}
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return fmt.Errorf("this kernel does not offer Landlock (ABI %d): %v", abi, err)
	}
	if len(r.Writable) > 0 {
		rw := landlock.RWDirs(r.Writable...).IgnoreIfMissing()
		if abi >= 2 {
			// Moving files between directories of the workspace; on
			// ABI 1, asking for it would turn the whole rule set off.
			rw = rw.WithRefer()
		}
		list = append(list, rw)
	}
	fd, flags, err := cfg.BestEffort().NewRulesetFD(list...)
	if err != nil {
		return err
	}
	if fd < 0 {
		return errors.New("the kernel's Landlock cannot enforce any of the rules")
	}
	defer unix.Close(fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// probe asks the kernel which Landlock ABI it offers.
func probe() Support {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		reason := "this kernel does not offer Landlock (Linux 5.13 or later, with landlock in the lsm= boot parameter)"
		if err != nil {
			reason += fmt.Sprintf(": %v", err)
		}
		return Support{Reason: reason}
	}
	s := Support{Mechanism: "Landlock", ABI: abi, Files: true, Network: abi >= landlockNetABI}
	if !s.Network {
		s.Reason = fmt.Sprintf("this kernel's Landlock is ABI %d, and network rules need ABI %d (Linux 6.7 or later)", abi, landlockNetABI)
	}
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
	spec, err := json.Marshal(rules{Writable: s.writable, Network: s.policy.Network})
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	cmd := &exec.Cmd{
		Path: s.self,
		Args: append([]string{launcherArg0, path}, argv...),
		Env:  append(env[:len(env):len(env)], rulesEnv+"="+string(spec)),
	}
	return cmd, nil
}
