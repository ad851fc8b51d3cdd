package cost

import (
	"context"

	sa "github.com/superagents/superagents"
)

// Costs is what a session or a task cost, as every listing shows it (the
// command line's --json and the HTTP API): its own messages, and with
// every task it launched at any depth (for a task, resumes included).
type Costs struct {
	Cost     Price `json:"cost"`
	TreeCost Price `json:"tree_cost"`
}

// Listed returns the Costs of the session or task id.
func Listed(ctx context.Context, st sa.Store, prices Prices, id string) (Costs, error) {
	t, err := TaskTree(ctx, st, id)
	if err != nil {
		return Costs{}, err
	}
	return Costs{Cost: t.Own.Price(prices), TreeCost: t.Total.Price(prices)}, nil
}
