package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/superagents/superagents/internal/runtime"
)

func (a *app) compactCommand() *cobra.Command {
	var (
		asJSON bool
		model  string
	)
	cmd := &cobra.Command{
		Use:   "compact ID [INSTRUCTIONS...]",
		Short: "Replace a session's conversation with a summary written by its model",
		Long: `Ask the session's model for a summary of its conversation and store it:
a compaction marker, then the summary. Later turns send the model the
summary and what follows it; nothing is deleted, and 'history' still shows
everything. Forks made afterwards start at the summary.

Optional INSTRUCTIONS say what the summary must keep ("keep the API
names"). Sessions also compact on their own when their context passes a
share of the model's context window (see [compaction] in config.toml).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			rt, err := a.openRuntime(ctx, model)
			if err != nil {
				return err
			}
			sess, err := a.resolveSession(ctx, args[0])
			if err != nil {
				return err
			}
			res, err := rt.Sessions().Compact(ctx, sess.ID, runtime.HolderCLI, model, strings.Join(args[1:], " "))
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.env.Stdout, res)
			}
			_, err = fmt.Fprintf(a.env.Stdout, "Compacted %d messages into a summary (message %d):\n\n%s\n", res.Compacted, res.Summary.ID, res.Summary.Text())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the stored marker and summary as JSON")
	cmd.Flags().StringVar(&model, "model", "", "model that writes the summary (default: the session's)")
	return cmd
}
