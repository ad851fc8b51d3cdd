package cli

import (
	"context"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/cost"
)

// costedSession is a session as `sessions --json` prints it: the listing,
// what its own messages cost, and what it cost with every task it
// launched (at any depth).
type costedSession struct {
	sa.SessionSummary
	Cost     cost.Price `json:"cost"`
	TreeCost cost.Price `json:"tree_cost"`
}

// costedTask is a task as `tasks --json` prints it: the record, what its
// session cost (resumes included), and what it cost with every task it
// launched.
type costedTask struct {
	sa.Task
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
	return t.Own.Price(prices), t.Total.Price(prices), nil
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
	prices, err := a.prices()
	if err != nil {
		return nil, err
	}
	out := make([]costedSession, 0, len(list))
	for _, s := range list {
		own, tree, err := treePrices(ctx, st, prices, s.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, costedSession{SessionSummary: s, Cost: own, TreeCost: tree})
	}
	return out, nil
}

func (a *app) costedTasks(ctx context.Context, st sa.Store, list []sa.Task) ([]costedTask, error) {
	prices, err := a.prices()
	if err != nil {
		return nil, err
	}
	out := make([]costedTask, 0, len(list))
	for _, t := range list {
		own, tree, err := treePrices(ctx, st, prices, t.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, costedTask{Task: t, Cost: own, TreeCost: tree})
	}
	return out, nil
}
