package cli

import (
	"context"
	"time"

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
