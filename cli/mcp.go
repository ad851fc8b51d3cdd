package cli

import (
	"github.com/spf13/cobra"

	"github.com/superagents/superagents/transcripts"
)

const mcpLong = `Serve the background-task tools to an agent host (Claude Code, OpenCode,
Cursor, Codex...) over the Model Context Protocol, on standard input and
output: superagents_task, superagents_output, superagents_list,
superagents_cancel and superagents_clear.

The host starts this command itself. Tasks run in this process, with the
configured models and agents (see 'superagents agents'), or, on a
PostgreSQL database, on the cluster's serve and worker nodes; each
connection is a session of its own, so its list shows its own tasks, and
it receives a log notification when one of them ends. Standard output
carries the protocol only; messages go to standard error. When the host
closes the connection (or sends SIGTERM), the tasks running in this
process are stopped and recorded as interrupted.

A task launched with fork: true starts with a digest of the host's own
conversation, read (never written) from the transcript the host keeps:
Claude Code, Codex and OpenCode are recognised by the name they give when
they connect, or named with --host. Every result of the tools starts with
the notices of tasks that ended since the last one, for hosts that do not
show MCP notifications to their model.

For example, in Claude Code:

  claude mcp add superagents -- superagents mcp`

func (a *app) mcpCommand() *cobra.Command {
	var model, host string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the task tools to an agent host over MCP (stdio)",
		Long:  mcpLong,
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if host != "" && host != hostNone {
				if _, err := transcripts.ParseHost(host); err != nil {
					return usagef("--host %s: use claude-code, codex, opencode or none", host)
				}
			}
			ways, err := a.waysIn("mcp")
			if err != nil {
				return err
			}
			proc, err := a.process()
			if err != nil {
				return err
			}
			return ways.MCP(cmd.Context(), MCPRequest{Process: proc, Model: model, Host: host})
		},
	}
	cmd.Flags().StringVar(&model, "model", "", "default model of the tasks, as provider/model (default: the agent's, then the configured one)")
	cmd.Flags().StringVar(&host, "host", "", "the agent host whose transcripts a fork reads: claude-code, codex, opencode, or none (default: the name the client gives in initialize)")
	return cmd
}

// hostNone, as --host, turns host detection off.
const hostNone = "none"
