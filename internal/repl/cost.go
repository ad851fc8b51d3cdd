package repl

import (
	"context"

	"github.com/superagents/superagents/internal/cost"
)

// refreshCost works out again what an agent has cost so far, its own
// turns and every task it launched (resumes included), for the status
// line. Models without a price leave their tokens out; an agent that ran
// only on such models has no figure.
func (c *Chat) refreshCost(ctx context.Context, id string) {
	tree, err := cost.TaskTree(ctx, c.store, id)
	if err != nil {
		return
	}
	p := tree.Total.Price(c.rt.Config().ModelInfo)
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.USD > 0 {
		c.costs[id] = p.USD
	} else {
		delete(c.costs, id)
	}
}
