// Package sandbox confines the commands agents run: what they may write,
// whether they may open network connections, and what of superagents'
// own they may reach.
//
// A command runs under a Policy. In "workspace-write" mode (the default)
// it may read what the user can, but superagents' own files (Private),
// write only in the workspace, the system's temporary directories and any
// directories the configuration adds, and open no network socket unless
// the policy allows the network. In "read-only" mode it may write
// nothing. "off" runs it unconfined.
//
// On Linux the command's first process is the running program itself
// again: a Command re-executes it with a marker in its arguments and
// environment, and this package's init function, seeing the marker,
// confines itself and executes the command. Every program that links this
// package (superagents and its test binaries alike) thereby serves as the
// sandbox's first process. It starts in new mount and PID namespaces (and
// a user namespace when superagents does not run as root), where it hides
// Private under empty mounts and mounts a /proc of its own; then it drops
// every capability, sets no_new_privs, installs a seccomp filter that
// refuses every socket but Unix ones when the network is not allowed, and
// applies Landlock's rules. Being the first process of its PID namespace,
// the command takes every process it started with it when it ends, and it
// dies with superagents. On macOS the command runs under sandbox-exec with
// a generated Seatbelt profile.
//
// Where the system cannot enforce a policy (a kernel without Landlock, or
// one too old for network rules), commands run with what can be enforced
// and Sandbox.Warning says what is missing: never silently.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/superagents/superagents/internal/xdg"
)

// Mode is how much a command may change.
type Mode string

// Modes, from the strictest.
const (
	// ReadOnly: no writes anywhere (but /dev/null and the like).
	ReadOnly Mode = "read-only"
	// WorkspaceWrite: writes in the workspace and the temporary
	// directories only.
	WorkspaceWrite Mode = "workspace-write"
	// Off: no sandbox.
	Off Mode = "off"
)

// DefaultMode is the mode of a configuration that names none.
const DefaultMode = WorkspaceWrite

// Modes lists the modes, strictest first.
func Modes() []Mode { return []Mode{ReadOnly, WorkspaceWrite, Off} }

// ParseMode reads a mode as written in a configuration or profile.
func ParseMode(s string) (Mode, error) {
	m := Mode(strings.TrimSpace(s))
	if !slices.Contains(Modes(), m) {
		return "", fmt.Errorf("unknown sandbox mode %q (want \"workspace-write\", \"read-only\" or \"off\")", s)
	}
	return m, nil
}

// rank orders modes by strictness; an empty mode is the default.
func (m Mode) rank() int {
	if m == "" {
		m = DefaultMode
	}
	return slices.Index(Modes(), m)
}

// Strictest returns the strictest of the modes; empty ones are skipped,
// and none at all is DefaultMode.
func Strictest(modes ...Mode) Mode {
	best := Mode("")
	for _, m := range modes {
		if m == "" {
			continue
		}
		if best == "" || m.rank() < best.rank() {
			best = m
		}
	}
	if best == "" {
		return DefaultMode
	}
	return best
}

// Config is the [sandbox] section of the configuration file.
//
//	[sandbox]
//	mode = "workspace-write"   # or "read-only", or "off"
//	network = false            # true: commands may open network connections
//	writable = []              # more directories commands may write in
type Config struct {
	Mode     Mode     `toml:"mode"`
	Network  bool     `toml:"network"`
	Writable []string `toml:"writable"`
}

// DefaultConfig is the sandbox of a configuration without a [sandbox]
// section.
func DefaultConfig() Config { return Config{Mode: DefaultMode} }

// ConfigError is a bad value of one key of the [sandbox] section.
type ConfigError struct {
	Key string // below [sandbox]: "mode", "writable"
	Msg string
}

func (e *ConfigError) Error() string { return e.Key + ": " + e.Msg }

// Validate checks the mode and the directories; the error joins one
// *ConfigError per bad value.
func (c Config) Validate() error {
	var errs []error
	if _, err := ParseMode(string(c.Mode)); err != nil {
		errs = append(errs, &ConfigError{Key: "mode", Msg: err.Error()})
	}
	for _, dir := range c.Writable {
		switch {
		case strings.IndexByte(dir, 0) >= 0:
			errs = append(errs, &ConfigError{Key: "writable", Msg: fmt.Sprintf("%q contains a NUL byte", dir)})
		case !filepath.IsAbs(dir):
			errs = append(errs, &ConfigError{Key: "writable", Msg: fmt.Sprintf("%q is not an absolute path", dir)})
		}
	}
	return errors.Join(errs...)
}

// Looser reports whether c allows something base does not: a less strict
// mode, the network, or more writable directories. A mode that is not one
// (empty or unknown) is not looser: Validate reports it.
func (c Config) Looser(base Config) (key string, looser bool) {
	_, bad := ParseMode(string(c.Mode))
	switch {
	case bad == nil && c.Mode.rank() > base.Mode.rank():
		return "mode", true
	case c.Network && !base.Network:
		return "network", true
	}
	for _, dir := range c.Writable {
		if !slices.Contains(base.Writable, dir) {
			return "writable", true
		}
	}
	return "", false
}

// Policy is what one agent's commands may do.
type Policy struct {
	Mode Mode
	// Network lets commands open network connections.
	Network bool
	// Workspace is the directory commands work in; writable in
	// WorkspaceWrite mode.
	Workspace string
	// Writable are more directories writable in WorkspaceWrite mode.
	Writable []string
	// TempDirs are the temporary directories, writable in WorkspaceWrite
	// mode; nil: the system's (os.TempDir, /tmp..., and TMPDIR of the
	// commands' environment).
	TempDirs []string
	// ModeSource, when set, says where a mode stricter than the
	// configuration's comes from (`the agent profile "reviewer"`), for
	// the messages that explain a refusal.
	ModeSource string
	// Private are superagents' own files and directories (its data,
	// configuration and sockets), which commands may neither read nor
	// reach, whatever else the policy allows; nil: PrivatePaths of this
	// process's environment. The workspace stays reachable when it lies
	// below one of them (a task's worktree in the data directory).
	Private []string
}

// Support is what this system can enforce.
type Support struct {
	// Mechanism names it: "Landlock" or "Seatbelt"; empty when there is
	// none.
	Mechanism string
	// ABI is the Landlock ABI version (0 elsewhere).
	ABI int
	// Files and Network say whether file writes and network sockets
	// can be confined.
	Files, Network bool
	// Isolation says whether commands run in namespaces of their own,
	// which hide Private and end every process a command started with
	// it (and with superagents); IsolationKind names them.
	Isolation     bool
	IsolationKind string
	// Reason says why something is missing.
	Reason string
}

// Sandbox runs commands under a policy. It is immutable and safe for
// concurrent use.
type Sandbox struct {
	policy  Policy
	support Support
	// writable are the directories a confined command may write in,
	// absolute, with symbolic links resolved where they exist.
	writable []string
	// private are the paths hidden from commands, absolute, with
	// symbolic links resolved.
	private []string
	// protected are the workspace's paths no command or file tool may
	// write (see protectedNames), absolute, as the workspace is given.
	protected []string
	// self is the executable re-executed as the first process (Linux).
	self string
}

// New prepares a sandbox for the policy. env is the environment commands
// get (its TMPDIR is writable, as the system's temporary directory).
func New(p Policy, env []string) (*Sandbox, error) {
	p.Mode = Strictest(p.Mode)
	if _, err := ParseMode(string(p.Mode)); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	s := &Sandbox{policy: p}
	if p.Mode == Off {
		return s, nil
	}
	if p.Workspace == "" || !filepath.IsAbs(p.Workspace) {
		return nil, fmt.Errorf("sandbox: the workspace %q is not an absolute path", p.Workspace)
	}
	s.support = probe()
	s.protected = protectedPaths(filepath.Clean(p.Workspace))
	if p.Mode == WorkspaceWrite {
		dirs := append([]string{p.Workspace}, p.Writable...)
		if p.TempDirs != nil {
			dirs = append(dirs, p.TempDirs...)
		} else {
			dirs = append(dirs, tempDirs(env)...)
		}
		for _, d := range dirs {
			if !filepath.IsAbs(d) {
				return nil, fmt.Errorf("sandbox: writable directory %q is not an absolute path", d)
			}
			if info, err := os.Stat(d); err == nil && !info.IsDir() {
				return nil, fmt.Errorf("sandbox: writable directory %s is not a directory", d)
			}
			s.writable = append(s.writable, realPath(d))
		}
		slices.Sort(s.writable)
		s.writable = slices.Compact(s.writable)
	}
	private := p.Private
	if private == nil {
		private = PrivatePaths(os.Getenv)
	}
	for _, path := range private {
		if filepath.IsAbs(path) {
			s.private = append(s.private, realPath(path))
		}
	}
	slices.Sort(s.private)
	s.private = slices.Compact(s.private)
	if s.support.Files {
		self, err := selfExecutable()
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		s.self = self
	}
	return s, nil
}

// tempDirs are the system's temporary directories, and the one env names.
func tempDirs(env []string) []string {
	dirs := []string{os.TempDir()}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok && filepath.IsAbs(v) {
			dirs = append(dirs, v)
		}
	}
	return append(dirs, systemTempDirs()...)
}

// realPath is p with its symbolic links resolved, or p itself when it
// does not exist (yet).
func realPath(p string) string {
	p = filepath.Clean(p)
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return p
}

// PrivatePaths are superagents' own directories as getenv places them,
// and the extra paths given (a data directory or token file set on the
// command line): its configuration, data and state directories, and the
// directories of its sockets (mcpdaemon.PathsFor). Commands never see
// them.
func PrivatePaths(getenv func(string) string, extra ...string) []string {
	var paths []string
	if dir, err := xdg.ConfigDir(getenv); err == nil {
		paths = append(paths, dir)
	}
	if dir, err := xdg.DataDir(getenv); err == nil {
		paths = append(paths, dir)
	}
	if dir, err := xdg.StateDir(getenv); err == nil {
		paths = append(paths, dir)
	}
	if run := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(run) {
		paths = append(paths, filepath.Join(run, xdg.App))
	}
	paths = append(paths, filepath.Join(os.TempDir(), xdg.App+"-"+strconv.Itoa(os.Getuid())))
	for _, p := range extra {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			paths = append(paths, abs)
		}
	}
	return paths
}

// Private returns the paths commands may not reach.
func (s *Sandbox) Private() []string { return slices.Clone(s.private) }

// Mode returns the policy's mode.
func (s *Sandbox) Mode() Mode { return s.policy.Mode }

// Network reports whether the policy lets commands open network
// connections.
func (s *Sandbox) Network() bool { return s.policy.Network || s.policy.Mode == Off }

// Support returns what this system enforces.
func (s *Sandbox) Support() Support { return s.support }

// Enforced reports whether commands are confined at all.
func (s *Sandbox) Enforced() bool { return s.policy.Mode != Off && s.support.Files }

// Writable returns the directories commands may write in (none in
// read-only mode, none needed when off).
func (s *Sandbox) Writable() []string { return slices.Clone(s.writable) }

// Warning returns a sentence for the user when the system cannot enforce
// all of the policy, and "" when it can (or the sandbox is off).
func (s *Sandbox) Warning() string {
	switch {
	case s.policy.Mode == Off:
		return ""
	case !s.support.Files:
		return fmt.Sprintf("the sandbox (mode %q) is not available: %s; commands agents run have all of your rights. Set [sandbox] mode = \"off\" in config.toml to run unconfined without this warning", s.policy.Mode, s.support.Reason)
	case !s.policy.Network && !s.support.Network:
		return fmt.Sprintf("the sandbox cannot confine network connections: %s; commands agents run may reach the network. Set [sandbox] network = true in config.toml to allow it without this warning", s.support.Reason)
	case !s.support.Isolation:
		return fmt.Sprintf("the sandbox cannot isolate commands: %s; commands agents run can read superagents' own files (its database, tokens and sockets), and what they start in the background may outlive them. Run `superagents sandbox check` for details", s.support.Reason)
	}
	return ""
}

// Command returns the command that runs argv (argv[0] looked up in PATH
// as exec.Command does) under the sandbox, with the environment env. The
// caller sets its directory, streams and process attributes.
func (s *Sandbox) Command(argv, env []string) (*exec.Cmd, error) {
	if len(argv) == 0 {
		return nil, errors.New("sandbox: no command")
	}
	if !s.Enforced() {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		return cmd, nil
	}
	return s.command(argv, env)
}

// denials are how commands report a refused write or connection.
func denials() []string {
	return []string{
		"Permission denied", "permission denied",
		"Operation not permitted", "operation not permitted",
		"EACCES", "EPERM", "Read-only file system",
	}
}

// Explain returns a note for a command's output that shows a refusal the
// sandbox may have caused — what the sandbox allows and how the user can
// allow more — and "" when the output shows none or nothing is confined.
func (s *Sandbox) Explain(output string) string {
	if !s.Enforced() || !slices.ContainsFunc(denials(), func(d string) bool { return strings.Contains(output, d) }) {
		return ""
	}
	var b strings.Builder
	b.WriteString("[sandbox: this command ran in the ")
	b.WriteString(string(s.policy.Mode))
	b.WriteString(" sandbox")
	if s.policy.ModeSource != "" {
		b.WriteString(" (set by " + s.policy.ModeSource + ")")
	}
	switch s.policy.Mode {
	case ReadOnly:
		b.WriteString(": it may not write any file")
	default:
		b.WriteString(": it may write only in the workspace (but not " + strings.Join(protectedNames, ", ") + ", which name programs run outside the sandbox) and the temporary directories")
	}
	netConfined := !s.policy.Network && s.support.Network
	if netConfined {
		b.WriteString(", and may not open network connections")
	}
	b.WriteString(". If the refusal above is the sandbox's, do not try to get around it: tell the user, who can allow it in config.toml with ")
	var ways []string
	if s.policy.Mode == ReadOnly {
		ways = append(ways, `[sandbox] mode = "workspace-write"`)
	} else {
		ways = append(ways, `[sandbox] writable = ["/some/dir"]`)
	}
	if netConfined {
		ways = append(ways, "[sandbox] network = true")
	}
	ways = append(ways, `[sandbox] mode = "off"`)
	b.WriteString(joinOr(ways))
	if s.policy.ModeSource != "" {
		b.WriteString(", and in the agent profile's sandbox setting")
	}
	b.WriteString(".]")
	return b.String()
}

// WriteRefusal returns why the file tools may not write, for the model,
// or "" when they may (their own workspace checks still apply).
func (s *Sandbox) WriteRefusal() string {
	if s.policy.Mode != ReadOnly {
		return ""
	}
	msg := "the sandbox is read-only: this agent may not change files"
	if s.policy.ModeSource != "" {
		msg += " (set by " + s.policy.ModeSource + ")"
	}
	msg += `. Do not try to get around it: tell the user, who can allow writes with [sandbox] mode = "workspace-write" in config.toml`
	if s.policy.ModeSource != "" {
		msg += " and in the agent profile's sandbox setting"
	}
	return msg + "."
}

// joinOr joins phrases as "a, b or c".
func joinOr(items []string) string {
	if len(items) == 1 {
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
