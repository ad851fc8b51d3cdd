package tasks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/cost"
)

// Budgets. A task tree (a task and every task it launched, at any depth,
// resumes included) may be held to a cost in dollars and to a number of
// tokens: every token of its model responses, input, output, cache reads
// and cache writes (sa.Usage.Total). A top-level task gets the configured
// tasks.max_cost and tasks.max_tokens; a launch may ask for less, and a
// sub-task never gets more than what is left of the trees above it. A
// task whose tree reaches a budget stops at once and ends as an error
// that says so, as do the tasks between it and the budget's task.
//
// What a tree spent is read from the store once, when a run of the tree
// starts in this process and none is running here yet, and then kept as a
// running total that every model response of the tree's runs here adds
// to: a check costs no store read. Spending by tasks of the same tree
// that run in another process at the same time is seen at the next start.

// budgetStop is why a run was stopped by a budget: the error its task
// ends with.
type budgetStop struct{ reason string }

func (e *budgetStop) Error() string { return e.reason }

// budgetBook holds the running totals of the budgeted task trees that
// have runs in this process.
type budgetBook struct {
	mu    sync.Mutex
	trees map[string]*spend // budgeted task id → its tree's total
	runs  map[*run]*runBudget
}

// spend is what a budgeted task's tree spent so far.
type spend struct {
	task  sa.Task // the budgeted task, as read when its total was
	spent cost.Figure
	refs  int // runs holding it
}

// runBudget is what a run is held to: its task and its ancestors, each
// with its tree's total if it has a budget (nil otherwise).
type runBudget struct {
	chain  []sa.Task
	spends []*spend
}

// ancestry returns the task of a session and the tasks above it, nearest
// first; a session that is not a task has none. A task that runs here
// reads them once per run: its tools, budgets and launches all ask.
func (m *Manager) ancestry(ctx context.Context, sessionID string) ([]sa.Task, error) {
	m.mu.Lock()
	r := m.runs[sessionID]
	m.mu.Unlock()
	if r == nil {
		return m.readAncestry(ctx, sessionID)
	}
	r.mu.Lock()
	chain := r.ancestry
	r.mu.Unlock()
	if chain != nil {
		return chain, nil
	}
	// The run has its task's row: only the tasks above it are read.
	above, err := m.readAncestry(ctx, r.task.ParentSessionID)
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(above, func(t sa.Task) bool { return t.ID == r.task.ID }) {
		return nil, fmt.Errorf("%w: task %s is its own ancestor", sa.ErrCorrupt, r.task.ID)
	}
	chain = append([]sa.Task{r.task}, above...)
	r.mu.Lock()
	r.ancestry = chain
	r.mu.Unlock()
	return chain, nil
}

// readAncestry reads the task of a session and the tasks above it.
func (m *Manager) readAncestry(ctx context.Context, sessionID string) ([]sa.Task, error) {
	var chain []sa.Task
	seen := map[string]bool{}
	for id := sessionID; ; {
		if seen[id] {
			return nil, fmt.Errorf("%w: task %s is its own ancestor", sa.ErrCorrupt, id)
		}
		seen[id] = true
		if m.notTasks.has(id) {
			return chain, nil
		}
		t, err := m.store.Task(ctx, id)
		if errors.Is(err, sa.ErrNotFound) {
			m.notTasks.add(id)
			return chain, nil
		}
		if err != nil {
			return nil, err
		}
		chain = append(chain, t)
		id = t.ParentSessionID
	}
}

// treeSpent is what a task's tree spent: the running total if a run of it
// is here, else read from the store.
func (m *Manager) treeSpent(ctx context.Context, id string) (cost.Figure, error) {
	b := &m.budgets
	b.mu.Lock()
	s, ok := b.trees[id]
	var spent cost.Figure
	if ok {
		spent = s.spent.Add(cost.Figure{})
	}
	b.mu.Unlock()
	tree, err := cost.TaskTree(ctx, m.store, id)
	if err != nil {
		return cost.Figure{}, fmt.Errorf("what task %s's tree spent: %w", sa.ShortID(id), err)
	}
	if ok {
		// The running total has what this process spent and not stored
		// yet; the store has what other processes (nodes) spent.
		return larger(spent, tree.Total), nil
	}
	return tree.Total, nil
}

// larger is, model by model, the larger of two figures of one tree: each
// counts every response the other does, or will.
func larger(a, b cost.Figure) cost.Figure {
	out := a.Add(cost.Figure{})
	for model, u := range b.ByModel {
		if u.Total() > out.ByModel[model].Total() {
			out.ByModel[model] = u
		}
	}
	return out
}

// refresh reads again from the store the totals of the trees a run is
// held to, after it waited for its own tasks: those may have run in
// other processes (other nodes of a cluster), whose spending the running
// totals here do not have.
func (b *budgetBook) refresh(ctx context.Context, m *Manager, r *run) error {
	b.mu.Lock()
	rb, ok := b.runs[r]
	b.mu.Unlock()
	if !ok {
		return nil
	}
	for _, s := range rb.spends {
		if s == nil {
			continue
		}
		tree, err := cost.TaskTree(ctx, m.store, s.task.ID)
		if err != nil {
			return fmt.Errorf("what task %s's tree spent: %w", sa.ShortID(s.task.ID), err)
		}
		b.mu.Lock()
		s.spent = larger(s.spent, tree.Total)
		b.mu.Unlock()
	}
	return nil
}

// launchBudget is the budget of a task launched from a session whose
// ancestry is ancestors (see ancestry), running model, that asked for
// asked: capped by the configuration (which a top-level task gets when it
// asks for nothing) and by what is left of every budgeted tree above it.
// A cost budget needs a priced model: a task that would be held to one
// without is refused.
func (m *Manager) launchBudget(ctx context.Context, ancestors []sa.Task, model string, asked sa.Budget) (sa.Budget, error) {
	if err := asked.Validate(); err != nil {
		return sa.Budget{}, err
	}
	top := len(ancestors) == 0
	b := sa.Budget{
		MaxCost:   capped(asked.MaxCost, m.limits.MaxCost, top),
		MaxTokens: capped(asked.MaxTokens, m.limits.MaxTokens, top),
	}
	costBy := ""
	if b.MaxCost > 0 {
		costBy = "tasks.max_cost"
		if asked.MaxCost > 0 {
			costBy = "max_cost"
		}
	}
	for _, a := range ancestors {
		if a.Budget.IsZero() {
			continue
		}
		spent, err := m.treeSpent(ctx, a.ID)
		if err != nil {
			return sa.Budget{}, err
		}
		if reason := overBudget(a.Budget, spent, m.engine.Config.ModelInfo, "the task tree of "+sa.ShortID(a.ID)); reason != "" {
			return sa.Budget{}, fmt.Errorf("%w: %s, so it cannot launch more tasks", sa.ErrLimit, reason)
		}
		if a.Budget.MaxCost > 0 {
			left := a.Budget.MaxCost - spent.Price(m.engine.Config.ModelInfo).USD
			b.MaxCost = capped(b.MaxCost, left, false)
			if costBy == "" {
				costBy = "the budget of task " + sa.ShortID(a.ID)
			}
		}
		if a.Budget.MaxTokens > 0 {
			b.MaxTokens = capped(b.MaxTokens, a.Budget.MaxTokens-spent.Usage().Total(), false)
		}
	}
	if costBy != "" {
		if price, ok := m.engine.Config.ModelInfo(model); !ok || !price.Priced() {
			msg := fmt.Sprintf("model %s has no price in the configuration ([models.%q]), so %s cannot hold the task to a cost; give the model a price (free = true for a model that costs nothing), or use max_tokens", model, model, costBy)
			if costBy == "max_cost" {
				return sa.Budget{}, &sa.FieldError{Field: "max_cost", Reason: msg}
			}
			return sa.Budget{}, fmt.Errorf("%w: %s", sa.ErrInvalid, msg)
		}
	}
	return b, nil
}

// capped is asked, at most limit (when there is a limit); fill gives an
// unset asked the limit.
func capped[N int64 | float64](asked, limit N, fill bool) N {
	if limit > 0 && (asked > limit || asked == 0 && fill) {
		return limit
	}
	return asked
}

// overBudget says how a tree's spending reached its budget, or "" if it
// did not. whose names the tree ("this task tree").
func overBudget(b sa.Budget, spent cost.Figure, prices cost.Prices, whose string) string {
	if b.MaxCost > 0 {
		if usd := spent.Price(prices).USD; usd >= b.MaxCost {
			return fmt.Sprintf("budget reached: %s of %s spent by %s", cost.Dollars(usd), cost.Dollars(b.MaxCost), whose)
		}
	}
	if b.MaxTokens > 0 {
		if n := spent.Usage().Total(); n >= b.MaxTokens {
			return fmt.Sprintf("budget reached: %d of %d tokens (input, output and cache) spent by %s", n, b.MaxTokens, whose)
		}
	}
	return ""
}

// charge holds a run to its budgets: before each model request it checks
// them, and each stored response adds its usage to the totals of the
// trees the run is in. A run whose tree reached a budget is stopped.
func (m *Manager) charge(r *run, e sa.TurnEvent) {
	switch {
	case e.Type == sa.TurnEventStep:
	case e.Type == sa.TurnEventMessage && e.Message != nil && !e.Message.Usage.IsZero():
	default:
		return
	}
	rb, err := m.budgets.acquire(r.ctx, m, r)
	if err != nil {
		r.cancel(&budgetStop{fmt.Sprintf("cannot check the task's budget: %v", err)})
		return
	}
	if len(rb.spends) == 0 {
		return
	}
	var msg *sa.Message
	if e.Type == sa.TurnEventMessage {
		msg = e.Message
	}
	stop := m.budgets.account(rb, msg, m.engine.Config.ModelInfo)
	if len(stop) == 0 {
		return
	}
	// Ended in the store first, innermost first, so that the outer tasks
	// stopping do not cancel the inner ones (which would hide why): one
	// ending, and one notification, each.
	for i, reason := range stop {
		_, _ = m.finish(context.WithoutCancel(r.ctx), rb.chain[i].ID, sa.TaskError, "", reason, nil)
	}
	for i, reason := range stop {
		stopped := r
		if i > 0 {
			m.mu.Lock()
			stopped = m.runs[rb.chain[i].ID]
			m.mu.Unlock()
		}
		if stopped != nil {
			stopped.cancel(&budgetStop{reason}) // its model stream and tools stop
		}
	}
}

// account adds a stored response's usage (msg, if not nil) to the totals
// of the trees a run is in and checks their budgets. It returns the error
// each task from the run's outwards is to end with, up to the outermost
// one whose tree reached its budget, or none.
func (b *budgetBook) account(rb *runBudget, msg *sa.Message, prices cost.Prices) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var stop []string
	for i, s := range rb.spends {
		if s == nil {
			continue
		}
		if msg != nil {
			s.spent.ByModel[msg.Model] = s.spent.ByModel[msg.Model].Add(msg.Usage)
		}
		own := overBudget(s.task.Budget, s.spent, prices, "this task tree")
		if own == "" {
			continue
		}
		stop = stop[:0]
		if i > 0 {
			inner := overBudget(s.task.Budget, s.spent, prices,
				fmt.Sprintf("the task tree of task %s (%q)", sa.ShortID(s.task.ID), s.task.Description))
			for range i {
				stop = append(stop, inner)
			}
		}
		stop = append(stop, own)
	}
	return stop
}

// acquire returns what the run is held to, reading it at its first call:
// its task's ancestry, and the running total of each budgeted tree,
// shared with the other runs of that tree here.
func (b *budgetBook) acquire(ctx context.Context, m *Manager, r *run) (*runBudget, error) {
	b.mu.Lock()
	rb, ok := b.runs[r]
	b.mu.Unlock()
	if ok {
		return rb, nil
	}
	chain, err := m.ancestry(ctx, r.task.ID)
	if err != nil {
		return nil, err
	}
	rb = &runBudget{chain: chain}
	for _, t := range chain {
		if !t.Budget.IsZero() {
			rb.spends = make([]*spend, len(chain))
			break
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.runs == nil {
		b.runs, b.trees = map[*run]*runBudget{}, map[string]*spend{}
	}
	for i, t := range chain {
		if rb.spends == nil || t.Budget.IsZero() {
			continue
		}
		s, ok := b.trees[t.ID]
		if !ok {
			// Read under the lock, so that two runs of one tree starting
			// together read it once and share it.
			tree, err := cost.TaskTree(ctx, m.store, t.ID)
			if err != nil {
				b.releaseLocked(rb)
				return nil, fmt.Errorf("what task %s's tree spent: %w", sa.ShortID(t.ID), err)
			}
			s = &spend{task: t, spent: tree.Total.Add(cost.Figure{})} // a map of its own, added to in place
			b.trees[t.ID] = s
		}
		s.refs++
		rb.spends[i] = s
	}
	b.runs[r] = rb
	return rb, nil
}

// release forgets a run that ended; a tree total no run holds is dropped
// (the next run reads it again, with what other processes added).
func (b *budgetBook) release(r *run) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if rb, ok := b.runs[r]; ok {
		delete(b.runs, r)
		b.releaseLocked(rb)
	}
}

func (b *budgetBook) releaseLocked(rb *runBudget) {
	for _, s := range rb.spends {
		if s == nil {
			continue
		}
		if s.refs--; s.refs <= 0 {
			delete(b.trees, s.task.ID)
		}
	}
}

// notTasks remembers sessions that have no task: the chat's and the
// HTTP API's, whose launches would otherwise look for their task every
// time. A task and its session are created in one transaction, so a
// session seen without a task never gets one. It is bounded: when full,
// it starts over.
type notTasks struct {
	mu  sync.Mutex
	ids map[string]struct{}
}

const maxNotTasks = 4096

func (n *notTasks) has(id string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, ok := n.ids[id]
	return ok
}

func (n *notTasks) add(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ids == nil || len(n.ids) >= maxNotTasks {
		n.ids = make(map[string]struct{})
	}
	n.ids[id] = struct{}{}
}
