package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/superagents/superagents/internal/mcpdaemon"
	"github.com/superagents/superagents/transcripts"
)

const mcpLong = `Serve the background-task tools to an agent host (Claude Code, OpenCode,
Cursor, Codex...) over the Model Context Protocol, on standard input and
output: superagents_task, superagents_output, superagents_list,
superagents_cancel and superagents_clear.

The host starts this command itself. It connects to a background server
of this data directory, workspace and settings, which it starts when none
runs, and passes the protocol through: the tasks run in that server, with
the configured models and agents (see 'superagents agents'), or, on a
PostgreSQL database, on the cluster's serve and worker nodes. So a task
goes on to its end when the host's process exits (cancel it to stop it);
the server exits by itself once it has had no connection and no task
running for 30 seconds. Its socket is in $XDG_RUNTIME_DIR/superagents
(else in run/ of the data directory), its log in logs/ of the data
directory. With --foreground the tasks run in this process instead, and
are stopped, recorded as interrupted, when the host closes the
connection (or sends SIGTERM); when no background server can be started,
this command says so and serves in the foreground.

The tasks belong to the host's conversation, found in the host's
transcript at the first call: a later process of the same conversation
(claude --resume, codex exec resume, opencode run --session) lists,
reads, resumes and cancels them, and is told of those that ended
meanwhile. When the conversation cannot be told, each connection keeps
its own tasks. With no model key and no model named, launches are refused
with an error that says how to give the key to this server, rather than
run on the offline model. Standard output carries the protocol only;
messages go to standard error, the first of which says which model the
tasks use.

A task launched with fork: true starts with a digest of the host's own
conversation, read (never written) from the transcript the host keeps:
Claude Code, Codex and OpenCode are recognised by the name they give when
they connect, or named with --host. Every result of the tools starts with
the notices of tasks that ended since the last one, for hosts that do not
show MCP notifications to their model.

For example, in Claude Code:

  claude mcp add superagents -- superagents mcp`

func (a *app) mcpCommand() *cobra.Command {
	var f mcpFlags
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the task tools to an agent host over MCP (stdio)",
		Long:  mcpLong,
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.host != "" && f.host != hostNone {
				if _, err := transcripts.ParseHost(f.host); err != nil {
					return usagef("--host %s: use claude-code, codex, opencode or none", f.host)
				}
			}
			ways, err := a.waysIn("mcp")
			if err != nil {
				return err
			}
			if f.serveSocket != "" {
				// The background server's log is bounded.
				a.env.Stderr = mcpdaemon.LimitWriter(a.env.Stderr, mcpdaemon.MaxLog)
			}
			proc, err := a.process()
			if err != nil {
				return err
			}
			req := MCPRequest{Process: proc, Model: f.model, Host: f.host}
			switch {
			case f.detach && f.serveSocket != "":
				return a.mcpDetach(req, f)
			case f.serveSocket != "":
				return a.mcpServe(cmd.Context(), ways, req, f)
			}
			cfg, err := a.loadConfig(f.model)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.env.Stderr, "superagents mcp: tasks use %s\n", tasksModel(cfg))
			if f.foreground {
				return ways.MCP(cmd.Context(), req)
			}
			return a.mcpProxy(cmd.Context(), ways, req, cfg, f)
		},
	}
	cmd.Flags().StringVar(&f.model, "model", "", "default model of the tasks, as provider/model (default: the agent's, then the configured one)")
	cmd.Flags().StringVar(&f.host, "host", "", "the agent host whose transcripts a fork reads: claude-code, codex, opencode, or none (default: the name the client gives in initialize)")
	cmd.Flags().BoolVar(&f.foreground, "foreground", false, "run the tasks in this process, without the background server: they stop when the host closes the connection")
	cmd.Flags().StringVar(&f.serveSocket, "serve-socket", "", "be the background server on this socket")
	cmd.Flags().IntVar(&f.readyFD, "ready-fd", -1, "the pipe the background server says it is ready on")
	cmd.Flags().BoolVar(&f.detach, "detach", false, "start the background server detached, and exit")
	for _, name := range []string{"serve-socket", "ready-fd", "detach"} {
		_ = cmd.Flags().MarkHidden(name)
	}
	return cmd
}

// hostNone, as --host, turns host detection off.
const hostNone = "none"
