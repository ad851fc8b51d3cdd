package cli

import (
	"context"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/cost"
	"github.com/superagents/superagents/tasks"
)

// costedSession is a session as `sessions --json` prints it: the listing,
// what its own messages cost, and what it cost with every task it
// launched (at any depth).
type costedSession struct {
	sa.SessionSummary
	Cost     cost.Price `json:"cost"`
	TreeCost cost.Price `json:"tree_cost"`
	// Import is where an imported session came from (import --from).
	Import *sa.HostLink `json:"import,omitempty"`
}

// costedTask is a task as `tasks --json` prints it: the record, what its
// session cost (resumes included), and what it cost with every task it
// launched.
type costedTask struct {
	tasks.View
	Cost     cost.Price `json:"cost"`
	TreeCost cost.Price `json:"tree_cost"`
}

// treePrices returns what a session or task cost, alone and with every
// task it launched.
func treePrices(ctx context.Context, st sa.Store, prices cost.Prices, id string) (own, tree cost.Price, err error) {
	t, err := cost.TaskTree(ctx, st, id)
	if err != nil {
		return cost.Price{}, cost.Price{}, err
	}
	p := t.Priced(prices)
	return p.Cost, p.TreeCost, nil
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
		func(s sa.SessionSummary, own, tree cost.Price) costedSession {
			return costedSession{SessionSummary: s, Cost: own, TreeCost: tree}
		})
}

func (a *app) costedTasks(ctx context.Context, st sa.Store, list []sa.Task) ([]costedTask, error) {
	now := time.Now()
	return withCosts(ctx, a, st, list, func(t sa.Task) string { return t.ID },
		func(t sa.Task, own, tree cost.Price) costedTask {
			return costedTask{View: tasks.NewView(t, now), Cost: own, TreeCost: tree}
		})
}

// withCosts pairs each item of a listing with its costs (an empty listing
// gives an empty array, not null).
func withCosts[T, R any](ctx context.Context, a *app, st sa.Store, list []T, id func(T) string, pair func(T, cost.Price, cost.Price) R) ([]R, error) {
	prices, err := a.prices()
	if err != nil {
		return nil, err
	}
	out := make([]R, 0, len(list))
	for _, item := range list {
		own, tree, err := treePrices(ctx, st, prices, id(item))
		if err != nil {
			return nil, err
		}
		out = append(out, pair(item, own, tree))
	}
	return out, nil
}
