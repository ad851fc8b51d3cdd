// Package cli is the superagents command line: one cobra command tree,
// built afresh for every run so that nothing is global. cmd/superagents
// only hands it the process's arguments, streams and environment.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/tasktools"
	"github.com/superagents/superagents/internal/xdg"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1 // the operation failed
	ExitUsage   = 2 // the command line or its input is invalid
)

// Env is the process environment the CLI runs in. Tests give their own.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads an environment variable.
	Getenv func(string) string
	// Environ is the environment bash commands start from (the process's
	// own when nil).
	Environ []string
	// Version is the version stamped at build time, if any.
	Version string
	// StdinIsTerminal and StdoutIsTerminal say whether the streams are
	// interactive terminals.
	StdinIsTerminal  bool
	StdoutIsTerminal bool
	// WaysIn runs the chat, the MCP server and the HTTP server (package
	// frontends); without it those commands are not available.
	WaysIn WaysIn
}

// usageError marks an error as the caller's mistake: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// Main runs the command line and returns the process exit code.
func Main(ctx context.Context, args []string, env Env) int {
	app := &app{env: env}
	root := app.rootCommand()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	app.close()
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(env.Stderr, "superagents: %s\n", oneLine(tasktools.Message(err)))
	return exitCode(err)
}

// exitCode classifies an error: input the caller must fix is a usage
// error, everything else a failure.
func exitCode(err error) int {
	var usage usageError
	switch {
	case errors.As(err, &usage), errors.Is(err, sa.ErrInvalid), isUnknownAgent(err):
		return ExitUsage
	case isCobraUsageError(err):
		return ExitUsage
	}
	return ExitFailure
}

// isCobraUsageError recognises the errors cobra makes itself for unknown
// commands and bad arguments; it offers no types for them.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, prefix := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least", "requires at most", "invalid argument"} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}

// oneLine keeps a message on one line of stderr.
func oneLine(msg string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", "; ")), " ")
}

// app holds what the commands of one run share: the environment, the
// global flags and the lazily opened store.
type app struct {
	env       Env
	dataDir   string
	workspace string
	database  string // --database
	store     sa.Store
	closers   []func() error // run when the command ends, last first
	rt        *runtime.Runtime
	// holdNotice keeps the model notice for the command to show itself
	// (the terminal chat, in its own layout) instead of printing it.
	holdNotice bool
	heldNotice string
	// warned are the configuration's warnings already shown: the
	// configuration is loaded more than once in a run.
	warned map[string]bool
	// trustProject trusts the project (--trust-project): its MCP servers
	// run, and its config.toml may choose providers, keys and the database.
	trustProject bool
	// node makes the runtime work the job queue's tasks (serve, worker);
	// drain is how long its running tasks may finish when it stops.
	node  bool
	drain time.Duration
	// ownFiles are superagents' own files named on the command line
	// (serve --token-file), hidden from commands as its directories are.
	ownFiles []string
}

func (a *app) rootCommand() *cobra.Command {
	var chat chatFlags
	root := &cobra.Command{
		Use:   "superagents",
		Short: "Background agents with forkable memory",
		Long: `superagents runs LLM agents that can launch background sub-agents, fork
them with the parent's memory, resume them and collect their results.

Conversations are stored once, as deltas: a fork costs one row, and a
session's history is rebuilt by walking its ancestors back to a clear.

Without a command, superagents opens a chat (see 'superagents chat --help').`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.chat(cmd, chat)
		},
	}
	chat.bind(root)
	root.SetIn(a.env.Stdin)
	root.SetOut(a.env.Stdout)
	root.SetErr(a.env.Stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentFlags().StringVar(&a.dataDir, "data-dir", "",
		"directory holding the database (env SUPERAGENTS_DATA_DIR; default $XDG_DATA_HOME/superagents)")
	root.PersistentFlags().StringVar(&a.database, "database", "",
		"PostgreSQL database URL, postgres://... (env "+EnvDatabaseURL+"; config database.url; default: SQLite in the data directory)")
	root.PersistentFlags().StringVar(&a.workspace, "workspace", "",
		"directory the agents' tools work in; its .superagents/ holds project config and agents (default: the current directory)")
	a.bindMCPFlags(root)
	root.AddCommand(
		a.sessionsCommand(),
		a.importCommand(),
		a.appendCommand(),
		a.forkCommand(),
		a.clearCommand(),
		a.compactCommand(),
		a.historyCommand(),
		a.costsCommand(),
		a.exportCommand(),
		a.deleteCommand(),
		a.chatCommand(),
		a.runCommand(),
		a.tasksCommand(),
		a.taskCommand(),
		a.agentsCommand(),
		a.contextCommand(),
		a.mcpCommand(),
		a.mcpServersCommand(),
		a.noticesCommand(),
		a.installCommand(false),
		a.installCommand(true),
		a.serveCommand(),
		a.versionCommand(),
		a.migrateCommand(),
		a.workerCommand(),
		a.sandboxCommand(),
	)
	return root
}

// resolveDataDir applies the precedence flag → env → XDG default.
func (a *app) resolveDataDir() (string, error) {
	if a.dataDir != "" {
		return a.dataDir, nil
	}
	if dir := a.env.Getenv("SUPERAGENTS_DATA_DIR"); dir != "" {
		return dir, nil
	}
	dir, err := xdg.DataDir(a.env.Getenv)
	if err != nil {
		return "", fmt.Errorf("cannot find a data directory: set --data-dir or SUPERAGENTS_DATA_DIR (%w)", err)
	}
	return dir, nil
}

// openStore opens the store once per run.
func (a *app) openStore(ctx context.Context) (sa.Store, error) {
	if a.store != nil {
		return a.store, nil
	}
	st, err := a.openConfiguredStore(ctx)
	if err != nil {
		return nil, err
	}
	a.store = st
	return st, nil
}

// waysIn returns the ways in the process was given, or an error that
// says the command is not available.
func (a *app) waysIn(command string) (WaysIn, error) {
	if a.env.WaysIn == nil {
		return nil, fmt.Errorf("superagents %s is not available in this build", command)
	}
	return a.env.WaysIn, nil
}

// process is what a way in gets of the process and of this run's setup.
func (a *app) process() (Process, error) {
	dir, err := a.resolveDataDir()
	if err != nil {
		return Process{}, err
	}
	return Process{
		Stdin: a.env.Stdin, Stdout: a.env.Stdout, Stderr: a.env.Stderr,
		Getenv: a.env.Getenv, Environ: a.env.Environ,
		Version: versionInfo(a.env.Version).Version,
		DataDir: dir,
		Open:    a.openRuntime,
	}, nil
}

func (a *app) close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
	if a.store != nil {
		a.store.Close()
		a.store = nil
	}
}

// resolveSession turns what the user typed into a live session.
func (a *app) resolveSession(ctx context.Context, ref string) (sa.Session, error) {
	st, err := a.openStore(ctx)
	if err != nil {
		return sa.Session{}, err
	}
	return st.ResolveSession(ctx, ref)
}

// exactArgs is cobra.ExactArgs with an error that says what is missing.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %s (got %d argument(s)); see '%s --help'", cmd.CommandPath(), names, len(args), cmd.CommandPath())
		}
		return nil
	}
}

func (a *app) versionCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := versionInfo(a.env.Version)
			if asJSON {
				return writeJSON(a.env.Stdout, v)
			}
			_, err := fmt.Fprintf(a.env.Stdout, "superagents %s (%s", v.Version, v.Go)
			if err == nil && v.Commit != "" {
				_, err = fmt.Fprintf(a.env.Stdout, ", commit %s", v.Commit)
			}
			if err == nil {
				_, err = fmt.Fprintln(a.env.Stdout, ")")
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

type version struct {
	Version string `json:"version"`
	Go      string `json:"go"`
	Commit  string `json:"commit,omitempty"`
}

// versionInfo prefers the version stamped at build time, then the module
// version Go records for `go install module@version` builds.
func versionInfo(stamped string) version {
	v := version{Version: stamped}
	if info, ok := debug.ReadBuildInfo(); ok {
		v.Go = info.GoVersion
		if v.Version == "" {
			v.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v.Commit = s.Value[:12]
			}
		}
	}
	if v.Version == "" || v.Version == "(devel)" {
		v.Version = "dev"
	}
	return v
}

// isNotExist reports whether err means a missing file.
func isNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }
