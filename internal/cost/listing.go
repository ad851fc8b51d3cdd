package cost

import (
	"context"
	"fmt"

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
func Listed(ctx context.Context, st Reader, prices Prices, id string) (Costs, error) {
	t, err := TaskTree(ctx, st, id)
	if err != nil {
		return Costs{}, err
	}
	return Costs{Cost: t.Own.Price(prices), TreeCost: t.Total.Price(prices)}, nil
}

// BulkReader is what a store offers to read the trees of a whole listing
// in a few queries instead of a few per entry; sqlite.Store has it.
type BulkReader interface {
	// UsageByModelOf is UsageReader.UsageByModel of many sessions:
	// session id → model → tokens.
	UsageByModelOf(ctx context.Context, sessionIDs []string) (map[string]map[string]sa.Usage, error)
	// ChildTasks returns the ids of the tasks each session launched,
	// cleared ones included, oldest first.
	ChildTasks(ctx context.Context, parentIDs []string) (map[string][]string, error)
}

// Each pairs every item of a listing with its Costs, in order (an empty
// listing gives an empty slice, not nil, so that JSON shows []). With a
// BulkReader the whole listing's trees are read a level at a time.
func Each[T, R any](ctx context.Context, st Reader, prices Prices, list []T, id func(T) string, pair func(T, Costs) R) ([]R, error) {
	out := make([]R, 0, len(list))
	bulk, ok := st.(BulkReader)
	if !ok {
		for _, item := range list {
			c, err := Listed(ctx, st, prices, id(item))
			if err != nil {
				return nil, err
			}
			out = append(out, pair(item, c))
		}
		return out, nil
	}
	ids := make([]string, len(list))
	for i, item := range list {
		ids[i] = id(item)
	}
	totals, err := bulkTotals(ctx, bulk, ids)
	if err != nil {
		return nil, err
	}
	for _, item := range list {
		f := totals[id(item)]
		out = append(out, pair(item, Costs{Cost: f.own.Price(prices), TreeCost: f.total.Price(prices)}))
	}
	return out, nil
}

type ownTotal struct{ own, total Figure }

// bulkTotals returns the own and total figures of each id's tree, as
// TaskTree adds them up, reading each level of all the trees at once.
func bulkTotals(ctx context.Context, st BulkReader, ids []string) (map[string]ownTotal, error) {
	children := map[string][]string{}
	seen := map[string]bool{}
	var all []string
	for frontier := ids; len(frontier) > 0; {
		var fresh []string
		for _, id := range frontier {
			if !seen[id] {
				seen[id] = true
				fresh = append(fresh, id)
			}
		}
		all = append(all, fresh...)
		kids, err := st.ChildTasks(ctx, fresh)
		if err != nil {
			return nil, err
		}
		frontier = nil
		for parent, list := range kids {
			children[parent] = list
			frontier = append(frontier, list...)
		}
	}
	usage, err := st.UsageByModelOf(ctx, all)
	if err != nil {
		return nil, err
	}
	out := make(map[string]ownTotal, len(all))
	const adding = 1
	state := map[string]int{} // adding, or done
	var add func(id string) (Figure, error)
	add = func(id string) (Figure, error) {
		switch state[id] {
		case adding:
			return Figure{}, fmt.Errorf("%w: task %s launched itself (a cycle)", sa.ErrCorrupt, id)
		case adding + 1:
			return out[id].total, nil
		}
		state[id] = adding
		own := Figure{ByModel: usage[id]}.Add(Figure{})
		total := own
		for _, c := range children[id] {
			f, err := add(c)
			if err != nil {
				return Figure{}, err
			}
			total = total.Add(f)
		}
		out[id], state[id] = ownTotal{own, total}, adding+1
		return total, nil
	}
	for _, id := range ids {
		if _, err := add(id); err != nil {
			return nil, err
		}
	}
	return out, nil
}
