package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/superagents/superagents/agents"
	"github.com/superagents/superagents/config"
	"github.com/superagents/superagents/engine"
)

// lookupEnv adapts Env.Getenv to the (value, ok) form: an empty variable
// counts as unset.
func (a *app) lookupEnv(name string) (string, bool) {
	v := a.env.Getenv(name)
	return v, v != ""
}

// userConfigDir is $XDG_CONFIG_HOME/superagents, else
// ~/.config/superagents, read from the CLI's own environment.
func (a *app) userConfigDir() string {
	if xdg := a.env.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(xdg) {
		return filepath.Join(xdg, "superagents")
	}
	if home := a.env.Getenv("HOME"); home != "" {
		return filepath.Join(home, ".config", "superagents")
	}
	return ""
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
	opts := config.Options{Workspace: ws, LookupEnv: a.lookupEnv}
	if dir := a.userConfigDir(); dir != "" {
		opts.UserDir = dir
	}
	cfg, err := config.Load(opts)
	if err != nil {
		return config.Config{}, usageError{err}
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

// openEngine builds the engine for commands that run agents. It says once
// on stderr when no model was configured and the offline one is used, and
// reports profile files that do not load.
func (a *app) openEngine(ctx context.Context, model string) (*engine.Engine, error) {
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
	eng, problems, err := engine.New(engine.Options{
		Store: st, Config: cfg, Workspace: ws, AgentDirs: a.agentDirs(ws), BashEnv: a.env.Environ,
	})
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, eng.Close)
	a.noticeOnce(cfg.Notice())
	if err := a.attachMCP(eng, cfg, ws); err != nil {
		return nil, err
	}
	for _, p := range problems {
		fmt.Fprintf(a.env.Stderr, "warning: agent profile skipped: %v\n", p)
	}
	return eng, nil
}

// isUnknownAgent reports whether err is about an agent name.
func isUnknownAgent(err error) bool { return errors.Is(err, engine.ErrUnknownAgent) }

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
	if a.holdNotice {
		a.heldNotice = notice
	} else {
		fmt.Fprintln(a.env.Stderr, notice)
	}
	_ = os.WriteFile(marker, []byte(notice+"\n"), 0o600)
}
