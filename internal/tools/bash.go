package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/superagents/superagents/sandbox"
)

// Defaults of the bash tool.
const (
	DefaultBashTimeout = 2 * time.Minute
	MaxBashTimeout     = 10 * time.Minute
	// MaxBashOutputChars caps what one command returns; the middle of a
	// longer output is cut, keeping its head and its tail.
	MaxBashOutputChars = 30_000
	// orphanGrace is how long output is still collected from processes
	// that left the command's process group (setsid) and hold its output
	// open, once the command itself has ended.
	orphanGrace = 2 * time.Second
)

// DefaultHiddenEnv returns the names of the environment variables the bash
// tool never passes on: the model providers' credentials, and superagents'
// own.
func DefaultHiddenEnv() []string {
	return []string{
		"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN",
		"OPENAI_API_KEY", "OPENROUTER_API_KEY",
		// superagents' own secrets: the HTTP API's token and the
		// database's address, which may hold its password.
		"SUPERAGENTS_TOKEN", "SUPERAGENTS_DATABASE_URL",
	}
}

// BashOptions configure the bash tool.
type BashOptions struct {
	// Rules decide which commands run.
	Rules BashRules
	// Timeout is the default limit of one command (DefaultBashTimeout if
	// zero); MaxTimeout caps what a call may ask for (MaxBashTimeout if
	// zero).
	Timeout, MaxTimeout time.Duration
	// Env is the environment commands start from (os.Environ() if nil).
	Env []string
	// HiddenEnv names variables removed from Env (DefaultHiddenEnv() if
	// nil).
	HiddenEnv []string
}

type bashInput struct {
	Command        string `json:"command" jsonschema:"The bash script to run in the workspace directory."`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"Kill the command after this many seconds. Default 120, at most 600."`
	Description    string `json:"description,omitempty" jsonschema:"What the command does, in a few words, for people watching the agent."`
}

const bashDescription = `Run a bash script (bash -c) in the workspace directory and return its combined standard output and error, then its exit code.

- Standard input is empty: interactive commands do not work (use non-interactive flags such as --yes or -y).
- The command is killed, with every process it started, after 120 seconds unless timeout_seconds says otherwise (at most 600). Processes left in the background are killed when the command ends: start a server, use it and stop it within one call.
- Output longer than 30,000 characters is cut in the middle; redirect big outputs to a file and read or grep it.
- Prefer read, ls, glob, grep, edit and write over cat, find, grep, sed or echo >: they are confined to the workspace and cheaper.
- Commands may be refused by the permission policy; the error says which part.`

// bashSandboxNote tells the model what the sandbox lets its commands do,
// and, where this system cannot enforce it, that they are not confined
// (the user is warned of that too).
func bashSandboxNote(sb *sandbox.Sandbox) string {
	return sandboxNote(sb.Mode(), sb.Enforced(), !sb.Network(), sb.Support().Network)
}

// sandboxNote is bashSandboxNote's text for a mode, whether commands are
// confined at all, whether the policy refuses connections and whether
// this system can refuse them.
func sandboxNote(mode sandbox.Mode, enforced, noNetwork, netEnforced bool) string {
	if mode == sandbox.Off {
		return ""
	}
	writes := "write only in the workspace (but not its .superagents, .mcp.json, nor git's configuration and hooks) and the temporary directories"
	if mode == sandbox.ReadOnly {
		writes = "write no file"
	}
	if !enforced {
		note := fmt.Sprintf("\n- Commands are not sandboxed: this system cannot enforce the %s sandbox the user configured, so they run with all of the user's rights. Keep to what it would allow: %s", mode, writes)
		if noNetwork {
			note += ", and open no network connection"
		}
		return note + "."
	}
	note := "\n- Commands run in a sandbox: they can read files, but " + writes
	if mode == sandbox.ReadOnly {
		note = "\n- Commands run in a read-only sandbox: they can read files, but write none"
	}
	refused := "A refused write"
	switch {
	case noNetwork && netEnforced:
		note += ", and open no network connection"
		refused += " or connection"
	case noNetwork:
		note += "; this system cannot refuse network connections, but the user's configuration allows none: open none"
	}
	return note + ". " + refused + " fails with \"Permission denied\", \"Operation not permitted\" or \"Read-only file system\"; do not try to get around it, tell the user."
}

func newBash(ws *Workspace, opts BashOptions, sb *sandbox.Sandbox) (Tool, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultBashTimeout
	}
	if opts.MaxTimeout <= 0 {
		opts.MaxTimeout = MaxBashTimeout
	}
	if opts.Timeout > opts.MaxTimeout {
		return nil, fmt.Errorf("bash: default timeout %v is above the maximum %v", opts.Timeout, opts.MaxTimeout)
	}
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	if opts.HiddenEnv == nil {
		opts.HiddenEnv = DefaultHiddenEnv()
	}
	if err := opts.Rules.Validate(); err != nil {
		return nil, fmt.Errorf("bash: %w", err)
	}
	env := commandEnv(opts.Env, opts.HiddenEnv, ws.Dir())
	return New(Bash, bashDescription+bashSandboxNote(sb), false, func(ctx context.Context, in bashInput) (Result, error) {
		if strings.TrimSpace(in.Command) == "" {
			return Errorf("command is empty"), nil
		}
		if err := opts.Rules.Check(in.Command); err != nil {
			var na *NotAllowedError
			if !errors.As(err, &na) || !opts.Rules.Asks() {
				return Errorf("%v", err), nil
			}
			asker := AskerFrom(ctx)
			if asker == nil {
				return Errorf("%v; %v", err, errNobodyToAsk), nil
			}
			refusal, err := askToRun(ctx, asker, in.Command, na)
			if err != nil {
				return Result{}, err
			}
			if refusal != nil {
				return Errorf("%v", refusal), nil
			}
		}
		timeout := opts.Timeout
		if in.TimeoutSeconds < 0 {
			return Errorf("timeout_seconds must be positive"), nil
		}
		if in.TimeoutSeconds > 0 {
			timeout = time.Duration(in.TimeoutSeconds) * time.Second
			if timeout > opts.MaxTimeout {
				return Errorf("timeout_seconds may be at most %d", int(opts.MaxTimeout/time.Second)), nil
			}
		}
		guard := sb.Guard()
		res, err := runBash(ctx, sb, ws.Dir(), env, in.Command, timeout)
		if note := sb.Explain(res.Output); note != "" {
			res.Output = withNote(res.Output, note)
		}
		// Every process of the command has ended: what it created of the
		// protected paths can be moved aside for good.
		if note := guard.Restore(); note != "" {
			res.Output, res.IsError = withNote(res.Output, note), true
		}
		return res, err
	})
}

// commandEnv is env without the hidden variables, with PWD set to dir.
func commandEnv(env, hidden []string, dir string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if name == "PWD" || name == "OLDPWD" || slices.Contains(hidden, name) {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "PWD="+dir)
}

// runBash runs the script in its own process group, in the sandbox, and
// makes sure that nothing of it outlives the call: when the script ends,
// times out or ctx is cancelled, the whole group is killed.
func runBash(ctx context.Context, sb *sandbox.Sandbox, dir string, env []string, script string, timeout time.Duration) (Result, error) {
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	pr, pw, err := os.Pipe()
	if err != nil {
		return Errorf("create output pipe: %v", err), nil
	}
	defer pr.Close()
	cmd, err := startBash(sb, dir, env, script, pw)
	pw.Close() // the children hold the write end now
	if err != nil {
		return Errorf("start bash: %v", err), nil
	}
	pgid := cmd.Process.Pid // Setpgid: the group is named after its leader

	output := newHeadTail(MaxBashOutputChars)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(output, pr)
	}()

	ended := make(chan struct{})
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		select {
		case <-runCtx.Done():
			_ = unix.Kill(-pgid, unix.SIGKILL)
		case <-ended:
		}
	}()

	// Wait for bash to exit without reaping it, so its pid (the group's
	// name) cannot be reused before the leftovers are killed.
	waitExitNoReap(cmd.Process.Pid)
	_ = unix.Kill(-pgid, unix.SIGKILL)
	close(ended)
	<-killed
	waitErr := cmd.Wait()

	select {
	case <-copied:
	case <-time.After(orphanGrace):
		pr.Close() // a process outside the group holds the pipe
		<-copied
	}

	out := output.String()
	if out == "" {
		out = "(no output)"
	}
	switch {
	case ctx.Err() != nil:
		return Result{Output: withNote(out, "[cancelled: the command and its processes were killed]"), IsError: true}, ctx.Err()
	case runCtx.Err() != nil:
		return Result{Output: withNote(out, fmt.Sprintf("[timed out after %v: the command and its processes were killed]", timeout)), IsError: true}, nil
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return Result{Output: withNote(out, fmt.Sprintf("[bash failed: %v]", waitErr)), IsError: true}, nil
	}
	state := cmd.ProcessState
	if status, ok := state.Sys().(syscall.WaitStatus); ok && status.Signaled() {
		return Result{Output: withNote(out, fmt.Sprintf("[killed by signal %v]", status.Signal())), IsError: true}, nil
	}
	code := state.ExitCode()
	return Result{Output: withNote(out, fmt.Sprintf("[exit code %d]", code)), IsError: code != 0}, nil
}

// startBash starts the script in the sandbox, in a process group of its
// own, its output to out. The sandbox's first process keeps its pid (on
// Linux it becomes bash, or the shell of the PID namespace that runs
// bash): the group is named after it.
func startBash(sb *sandbox.Sandbox, dir string, env []string, script string, out *os.File) (*exec.Cmd, error) {
	cmd, err := sb.Command([]string{"bash", "-c", script}, env)
	if err != nil {
		return nil, err
	}
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out // an *os.File: no copying goroutine
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	return cmd, cmd.Start()
}

// withNote appends a note on a line of its own.
func withNote(out, note string) string {
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out + note
}
