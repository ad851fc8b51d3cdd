// Package cost says what conversations cost: per message, per session and
// per task tree (a task and every task it launched, at any depth, resumes
// included since a resume runs in the task's own session).
//
// Tokens are added up per model and priced once at the end, so sums are
// exact and a figure never depends on the order it was added in. A model
// without a price (a local one) is not counted as free: its tokens are
// listed as unpriced and the figure says its dollar amount is incomplete.
package cost

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
)

// Prices finds the price of a "provider/model" string; config.Config's
// ModelInfo is one.
type Prices func(model string) (config.Model, bool)

// Figure is the tokens some messages used, per model, and what they cost.
type Figure struct {
	// ByModel is the usage per "provider/model" string ("" for messages
	// that name no model).
	ByModel map[string]sa.Usage
}

// Add returns f and g together.
func (f Figure) Add(g Figure) Figure {
	out := Figure{ByModel: make(map[string]sa.Usage, len(f.ByModel)+len(g.ByModel))}
	for _, src := range []map[string]sa.Usage{f.ByModel, g.ByModel} {
		for model, u := range src {
			out.ByModel[model] = out.ByModel[model].Add(u)
		}
	}
	return out
}

// Usage is the tokens of every model together.
func (f Figure) Usage() sa.Usage {
	var total sa.Usage
	for _, u := range f.ByModel {
		total = total.Add(u)
	}
	return total
}

// Price is a figure in dollars.
type Price struct {
	// USD is the cost of the priced models' tokens.
	USD float64 `json:"usd"`
	// Unpriced lists the models used whose price is unknown; USD leaves
	// their tokens out.
	Unpriced []string `json:"unpriced,omitempty"`
	// CacheSavedUSD is what the prompt cache saved the priced models'
	// input: what its reads and writes would have cost at the input
	// price, less what they cost (a write costs more than input, so it
	// counts against the reads).
	CacheSavedUSD float64 `json:"cache_saved_usd,omitempty"`
	sa.Usage
}

// CacheSaved is what the prompt cache saved on usage at a model's rates.
func CacheSaved(m config.Model, u sa.Usage) float64 {
	return (float64(u.CacheReadTokens)*(m.Input-m.CacheRead) + float64(u.CacheWriteTokens)*(m.Input-m.CacheWrite)) / 1e6
}

// Complete reports whether every token was priced.
func (p Price) Complete() bool { return len(p.Unpriced) == 0 }

// Of prices usage at a model's rates.
func Of(m config.Model, u sa.Usage) float64 {
	return (float64(u.InputTokens)*m.Input + float64(u.OutputTokens)*m.Output +
		float64(u.CacheReadTokens)*m.CacheRead + float64(u.CacheWriteTokens)*m.CacheWrite) / 1e6
}

// Price prices the figure.
func (f Figure) Price(prices Prices) Price {
	p := Price{Usage: f.Usage()}
	for _, model := range slices.Sorted(maps.Keys(f.ByModel)) {
		u := f.ByModel[model]
		m, ok := prices(model)
		if !ok || !m.Priced() {
			if !u.IsZero() {
				p.Unpriced = append(p.Unpriced, model)
			}
			continue
		}
		p.USD += Of(m, u)
		if !m.Free {
			p.CacheSavedUSD += CacheSaved(m, u)
		}
	}
	return p
}

// Message is the figure of one message.
func Message(m sa.Message) Figure {
	if m.Usage.IsZero() {
		return Figure{ByModel: map[string]sa.Usage{}}
	}
	return Figure{ByModel: map[string]sa.Usage{m.Model: m.Usage}}
}

// Reader is the part of a store that costs are read from.
type Reader interface {
	sa.SessionReader
	sa.TaskReader
}

// UsageReader is what a store offers to sum a session's usage: the
// tokens of all the messages it stores itself, per model. sqlite.Store
// has it.
type UsageReader interface {
	UsageByModel(ctx context.Context, sessionID string) (map[string]sa.Usage, error)
}

// Session is the figure of the messages a session stores itself (not the
// ones it inherits from a parent, which the parent paid for). A store
// without UsageReader is read through History, which misses messages
// before a clear.
func Session(ctx context.Context, st Reader, sessionID string) (Figure, error) {
	if r, ok := st.(UsageReader); ok {
		by, err := r.UsageByModel(ctx, sessionID)
		if err != nil {
			return Figure{}, err
		}
		return Figure{ByModel: by}, nil
	}
	history, err := st.History(ctx, sessionID)
	if err != nil {
		return Figure{}, fmt.Errorf("cost of session %s: %w", sessionID, err)
	}
	f := Figure{ByModel: map[string]sa.Usage{}}
	for _, m := range history {
		if m.SessionID == sessionID {
			f = f.Add(Message(m))
		}
	}
	return f, nil
}

// Tree is the cost of a session and of every task it launched, with the
// same for each of those tasks.
type Tree struct {
	// ID is the session's (for a task, the task's) id.
	ID string
	// Own is the session's own figure; Total adds every descendant's.
	Own, Total Figure
	Children   []Tree
}

// TaskTree returns the tree of the session id: its own figure, then that
// of each task launched from it (cleared ones too: they were paid for),
// recursively. A task's id is its session's id.
func TaskTree(ctx context.Context, st Reader, id string) (Tree, error) {
	return taskTree(ctx, st, id, map[string]bool{})
}

func taskTree(ctx context.Context, st Reader, id string, seen map[string]bool) (Tree, error) {
	if seen[id] {
		return Tree{}, fmt.Errorf("%w: task %s launched itself (a cycle)", sa.ErrCorrupt, id)
	}
	seen[id] = true
	own, err := Session(ctx, st, id)
	if err != nil {
		return Tree{}, err
	}
	tree := Tree{ID: id, Own: own, Total: own}
	tasks, err := st.ListTasks(ctx, sa.TaskFilter{ParentSessionID: id, IncludeCleared: true})
	if err != nil {
		return Tree{}, fmt.Errorf("tasks of %s: %w", id, err)
	}
	// Oldest first, so the tree reads in launch order.
	slices.Reverse(tasks)
	for _, t := range tasks {
		child, err := taskTree(ctx, st, t.ID, seen)
		if errors.Is(err, sa.ErrNotFound) {
			continue // its session was deleted with its rows: nothing left to count
		}
		if err != nil {
			return Tree{}, err
		}
		tree.Children = append(tree.Children, child)
		tree.Total = tree.Total.Add(child.Total)
	}
	return tree, nil
}

// PricedTree is a Tree in dollars, as the API and the command line show
// it.
type PricedTree struct {
	ID string `json:"id"`
	// Cost is the session's own; TreeCost adds every task it launched.
	Cost     Price        `json:"cost"`
	TreeCost Price        `json:"tree_cost"`
	Tasks    []PricedTree `json:"tasks,omitempty"`
}

// Priced prices the tree and every subtree.
func (t Tree) Priced(prices Prices) PricedTree {
	p := PricedTree{ID: t.ID, Cost: t.Own.Price(prices), TreeCost: t.Total.Price(prices)}
	for _, c := range t.Children {
		p.Tasks = append(p.Tasks, c.Priced(prices))
	}
	return p
}
