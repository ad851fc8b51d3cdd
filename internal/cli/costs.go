package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/cost"
	"github.com/superagents/superagents/internal/tasktools"
)

// costedSession is a session as `sessions --json` prints it: the listing,
// what its own messages cost, and what it cost with every task it
// launched (at any depth).
type costedSession struct {
	sa.SessionSummary
	cost.Costs
	// Import is where an imported session came from (import --from).
	Import *sa.HostLink `json:"import,omitempty"`
}

// costedTask is a task as `tasks --json` prints it: the record, what its
// session cost (resumes included), and what it cost with every task it
// launched.
type costedTask struct {
	tasktools.View
	cost.Costs
}

// prices returns the model table of the configuration.
func (a *app) prices() (cost.Prices, error) {
	cfg, err := a.loadConfig("")
	if err != nil {
		return nil, err
	}
	return cfg.ModelInfo, nil
}

func (a *app) costedSessions(ctx context.Context, st sa.Store, list []sa.SessionSummary) ([]costedSession, error) {
	return withCosts(ctx, a, st, list, func(s sa.SessionSummary) string { return s.ID },
		func(s sa.SessionSummary, c cost.Costs) costedSession {
			return costedSession{SessionSummary: s, Costs: c}
		})
}

func (a *app) costedTasks(ctx context.Context, st sa.Store, list []sa.Task) ([]costedTask, error) {
	now := time.Now()
	return withCosts(ctx, a, st, list, func(t sa.Task) string { return t.ID },
		func(t sa.Task, c cost.Costs) costedTask {
			return costedTask{View: tasktools.NewView(t, now), Costs: c}
		})
}

// withCosts pairs each item of a listing with its costs (an empty listing
// gives an empty array, not null).
func withCosts[T, R any](ctx context.Context, a *app, st sa.Store, list []T, id func(T) string, pair func(T, cost.Costs) R) ([]R, error) {
	prices, err := a.prices()
	if err != nil {
		return nil, err
	}
	return cost.Each(ctx, st, prices, list, id, pair)
}

// costsCommand is `superagents costs ID`: what a session cost with every
// task it launched, task by task, with what the prompt cache read,
// wrote and saved (the tree `/v1/sessions/{id}/cost` answers).
func (a *app) costsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "costs ID",
		Short: "What a session and each task it launched cost, with the prompt cache's reads, writes and savings",
		Long: `What a session cost, and each task it launched (at any depth, cleared ones
included: they were paid for): dollars at the model table's prices, tokens,
and what the prompt cache read, wrote and saved. A model without a price is
named instead of counted. --json prints the tree that
GET /v1/sessions/{id}/cost answers.`,
		Example: "  superagents costs 7d3c\n  superagents costs 7d3c --json",
		Args:    exactArgs(1, "one session id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			sess, err := a.resolveSession(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			st, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			prices, err := a.prices()
			if err != nil {
				return err
			}
			tree, err := cost.TaskTree(cmd.Context(), st, sess.ID)
			if err != nil {
				return err
			}
			priced := tree.Priced(prices)
			if asJSON {
				return writeJSON(a.env.Stdout, priced)
			}
			tasks, err := taskNames(cmd.Context(), st, priced)
			if err != nil {
				return err
			}
			_, err = io.WriteString(a.env.Stdout, formatCostTree(priced, tasks))
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tree as JSON")
	return cmd
}

// taskNames reads the tasks of a priced tree, by id, to name them.
func taskNames(ctx context.Context, st sa.Store, t cost.PricedTree) (map[string]sa.Task, error) {
	out := map[string]sa.Task{}
	var walk func(cost.PricedTree) error
	walk = func(t cost.PricedTree) error {
		for _, c := range t.Tasks {
			task, err := st.Task(ctx, c.ID)
			if err != nil {
				return err
			}
			out[c.ID] = task
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(t)
}

// formatCostTree is `costs`' text: the session, then each task indented
// under the one that launched it.
func formatCostTree(t cost.PricedTree, tasks map[string]sa.Task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Session %s: %s own, %s with its tasks\n", sa.ShortID(t.ID), dollars(t.Cost), dollars(t.TreeCost))
	fmt.Fprintf(&b, "  %s\n", costLine(t.Cost))
	var walk func(cost.PricedTree, string)
	walk = func(t cost.PricedTree, indent string) {
		for _, c := range t.Tasks {
			task := tasks[c.ID]
			fmt.Fprintf(&b, "%s- task %s %q (%s, agent %s): %s", indent, sa.ShortID(c.ID), task.Description, task.Status, task.Agent, dollars(c.Cost))
			if len(c.Tasks) > 0 {
				fmt.Fprintf(&b, ", %s with its tasks", dollars(c.TreeCost))
			}
			fmt.Fprintf(&b, "\n%s  %s\n", indent, costLine(c.Cost))
			walk(c, indent+"  ")
		}
	}
	walk(t, "")
	return b.String()
}

// dollars is a price, with the models it could not price.
func dollars(p cost.Price) string {
	s := cost.Dollars(p.USD)
	if !p.Complete() {
		s += " + unpriced " + strings.Join(p.Unpriced, ", ")
	}
	return s
}

// costLine is a price's tokens and what the cache did.
func costLine(p cost.Price) string {
	line := fmt.Sprintf("tokens: %d in, %d out; cache: %d read, %d written", p.InputTokens, p.OutputTokens, p.CacheReadTokens, p.CacheWriteTokens)
	if p.CacheReadTokens > 0 || p.CacheWriteTokens > 0 {
		line += ", saved " + cost.Dollars(p.CacheSavedUSD)
	}
	return line
}
