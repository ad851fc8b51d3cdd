package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/agents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/postgres"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/taskqueue"
	"github.com/superagents/superagents/internal/tasktools"

	"github.com/superagents/superagents/internal/xdg"
)

// lookupEnv adapts Env.Getenv to the (value, ok) form: an empty variable
// counts as unset.
func (a *app) lookupEnv(name string) (string, bool) {
	v := a.env.Getenv(name)
	return v, v != ""
}

// userConfigDir is $XDG_CONFIG_HOME/superagents, else
// ~/.config/superagents, read from the CLI's own environment ("" when
// there is no home).
func (a *app) userConfigDir() string {
	dir, _ := xdg.ConfigDir(a.env.Getenv)
	return dir
}

// workspaceDir is --workspace, made absolute, or the current directory.
func (a *app) workspaceDir() (string, error) {
	dir := a.workspace
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("find the current directory: %w", err)
		}
		return wd, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", usagef("--workspace %s: %v", dir, err)
	}
	info, err := os.Stat(abs)
	if err != nil || !info.IsDir() {
		return "", usagef("--workspace %s is not a directory", dir)
	}
	return abs, nil
}

// loadConfig reads the configuration files and environment once per run,
// then applies the --model flag.
func (a *app) loadConfig(model string) (config.Config, error) {
	ws, err := a.workspaceDir()
	if err != nil {
		return config.Config{}, err
	}
	opts := config.Options{Workspace: ws, LookupEnv: a.lookupEnv, TrustProject: a.trustProject}
	if dir := a.userConfigDir(); dir != "" {
		opts.UserDir = dir
	}
	cfg, err := config.Load(opts)
	if err != nil {
		return config.Config{}, usageError{err}
	}
	for _, w := range cfg.Warnings {
		if !a.warned[w] {
			if a.warned == nil {
				a.warned = make(map[string]bool)
			}
			a.warned[w] = true
			a.notice("warning: " + w)
		}
	}
	if err := cfg.Apply(config.Overrides{Model: model}); err != nil {
		return config.Config{}, usageError{err}
	}
	return cfg, nil
}

// agentDirs are the profile directories for the workspace and user.
func (a *app) agentDirs(workspace string) agents.Dirs {
	dirs := agents.Dirs{Project: agents.ProjectDir(workspace), ClaudeProject: agents.ClaudeProjectDir(workspace)}
	if dir := a.userConfigDir(); dir != "" {
		dirs.User = filepath.Join(dir, "agents")
	}
	if home := a.env.Getenv("HOME"); home != "" {
		dirs.ClaudeUser = agents.ClaudeUserDir(home)
	}
	return dirs
}

// openRuntime builds what runs agents, wired as every command wires it:
// the engine (whose agents get the task tools), the event bus and the
// task manager. It says once on stderr when no model was configured and
// the offline one is used, and reports profile files that do not load.
// Everything closes with the command. The agents it runs get the user's
// MCP servers and the project's instructions.
func (a *app) openRuntime(ctx context.Context, model string) (*runtime.Runtime, error) {
	return a.open(ctx, model, true)
}

// openSessions is openRuntime for commands that only act on sessions and
// tasks (append, clear, fork, delete, import, task output and cancel):
// they run no agent, so neither MCP servers nor instructions are set up.
func (a *app) openSessions(ctx context.Context) (*runtime.Runtime, error) {
	return a.open(ctx, "", false)
}

func (a *app) open(ctx context.Context, model string, agents bool) (*runtime.Runtime, error) {
	if a.rt != nil {
		return a.rt, nil
	}
	cfg, err := a.loadConfig(model)
	if err != nil {
		return nil, err
	}
	st, err := a.openStore(ctx)
	if err != nil {
		return nil, err
	}
	ws, err := a.workspaceDir()
	if err != nil {
		return nil, err
	}
	// Tasks' worktrees go in the data directory, out of the user's
	// checkout.
	dataDir, err := a.resolveDataDir()
	if err != nil {
		return nil, err
	}
	ropts := runtime.Options{
		Store: st, Config: cfg, Workspace: ws, AgentDirs: a.agentDirs(ws), BashEnv: a.env.Environ,
		WorktreeDir: filepath.Join(dataDir, "worktrees"), TaskTools: tasktools.For,
		PrivatePaths: a.privatePaths(),
	}
	if agents {
		// The agents get the user's MCP servers and the project's
		// instructions.
		if ropts.ExtraTools, ropts.Instructions, err = a.attachMCP(cfg, ws); err != nil {
			return nil, err
		}
	}
	// On PostgreSQL, tasks go through the job queue, so that any node
	// runs them; a store one process owns runs them in that process.
	if pg, ok := st.(*postgres.Store); ok {
		if ropts, err = taskqueue.Wire(pg, ropts, taskqueue.Options{Work: a.node, Drain: a.drain, Logger: a.queueLogger()}); err != nil {
			return nil, err
		}
	}
	rt, problems, err := runtime.Open(ctx, ropts)
	if err != nil {
		return nil, err
	}
	a.rt = rt
	a.closers = append(a.closers, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), a.drain+30*time.Second)
		defer cancel()
		a.rt = nil
		return rt.Close(ctx)
	})
	a.noticeOnce(cfg.Notice())
	if agents {
		if w := rt.SandboxWarning(); w != "" {
			fmt.Fprintf(a.env.Stderr, "warning: %s\n", w)
		}
	}
	for _, p := range problems {
		fmt.Fprintf(a.env.Stderr, "warning: agent profile skipped: %v\n", p)
	}
	return rt, nil
}

// isUnknownAgent reports whether err is about an agent name.
func isUnknownAgent(err error) bool { return errors.Is(err, sa.ErrUnknownAgent) }

// noticeFile marks, in the data directory, that the offline-model notice
// was shown: the CLI says it once, not at every command.
const noticeFile = "offline-notice-shown"

// noticeOnce prints the configuration notice the first time it is due.
func (a *app) noticeOnce(notice string) {
	if notice == "" {
		return
	}
	dir, err := a.resolveDataDir()
	if err != nil {
		return
	}
	marker := filepath.Join(dir, noticeFile)
	if _, err := os.Stat(marker); err == nil {
		return
	}
	a.notice(notice)
	_ = os.WriteFile(marker, []byte(notice+"\n"), 0o600)
}

// notice shows a line to the user: kept for the terminal chat, which shows
// it in its transcript, else printed on stderr.
func (a *app) notice(line string) {
	if a.holdNotice {
		a.heldNotice = strings.TrimSpace(a.heldNotice + "\n" + line)
		return
	}
	fmt.Fprintln(a.env.Stderr, line)
}

// queueLogger is where a node's job queue reports its troubles (a job that
// could not be claimed, a lost connection): standard error, warnings only.
func (a *app) queueLogger() *slog.Logger {
	if !a.node {
		return nil
	}
	return slog.New(slog.NewTextHandler(a.env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
