package tasks

import (
	"cmp"
	"context"

	"fmt"
	"strings"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/runner"

	"github.com/superagents/superagents/forkctx"
	"github.com/superagents/superagents/internal/agents"
	"github.com/superagents/superagents/internal/engine"
)

// LaunchRequest describes a task to launch.
type LaunchRequest struct {
	// ParentSessionID is the session launching the task: it is notified
	// when the task ends, and a fork inherits its context.
	ParentSessionID string
	// Description is a few words for listings and notifications.
	Description string
	// Prompt is the task's instructions.
	Prompt string
	// Agent is the agent profile to run.
	Agent string
	// Fork gives the task the parent's context, through the fork context
	// pipeline.
	Fork bool
	// ForkFrom, with Fork, is the session whose conversation the digest
	// is made of instead of the parent's (the host's own conversation,
	// imported, for a task an MCP host launches).
	ForkFrom string
	// Timeout limits the run (0: the configured limit, which it may not
	// exceed).
	Timeout time.Duration
	// BatchID groups tasks launched together (by one parent turn); empty
	// makes a batch of one.
	BatchID string
	// JoinActiveBatch puts the task in the batch of the parent's active
	// tasks, if any (see sa.NewTask); BatchID, or a new batch, otherwise.
	JoinActiveBatch bool
	// Budget is what the task's tree may spend (see launchBudget).
	Budget sa.Budget
	// Isolation is sa.IsolationWorktree for a task that works in a git
	// worktree of its own; empty takes the agent profile's.
	Isolation string
}

// Launch creates a task and has it run, through the manager's dispatch:
// here, or by whichever node takes it from a shared job queue. It returns
// at once; the task runs in the background (queued first when the
// concurrency limit is reached).
func (m *Manager) Launch(ctx context.Context, req LaunchRequest) (sa.Task, error) {
	profile, isolation, err := m.checkLaunch(req)
	if err != nil {
		return sa.Task{}, err
	}
	parent, err := m.store.Session(ctx, req.ParentSessionID)
	if err != nil {
		return sa.Task{}, fmt.Errorf("parent session: %w", err)
	}
	ancestors, err := m.ancestry(ctx, parent.ID)
	if err != nil {
		return sa.Task{}, err
	}
	if depth := len(ancestors); depth >= m.limits.SpawnDepth {
		return sa.Task{}, fmt.Errorf("%w: tasks may be nested %d deep (tasks.spawn_depth) and this session is at depth %d", sa.ErrLimit, m.limits.SpawnDepth, depth)
	}
	timeout := m.launchTimeout(req.Timeout)
	first := []sa.Message{engine.UserMessage(req.Prompt)}
	var digest forkctx.Result
	if req.Fork {
		if first, digest, err = m.forkContext(ctx, cmp.Or(req.ForkFrom, parent.ID), req.Prompt); err != nil {
			return sa.Task{}, err
		}
	}
	// The child runs its profile's model; one without a model of its own
	// keeps the parent's. A fork given no model takes its parent's, so
	// one is named for it.
	model := parent.Model
	if profile.Model != "" {
		model = ""
		if req.Fork {
			model = profile.Model
		}
	}
	label := m.engine.ModelFor(sa.Session{Model: model}, profile, "")
	budget, err := m.launchBudget(ctx, ancestors, label, req.Budget)
	if err != nil {
		return sa.Task{}, err
	}
	// A task with a worktree is named before it is created: its branch
	// and worktree carry its id, and are recorded with it.
	var id string
	var wt *sa.TaskWorktree
	if isolation == sa.IsolationWorktree {
		id = sa.NewID()
		if wt, err = m.createWorktree(ctx, id, ancestors); err != nil {
			return sa.Task{}, err
		}
	}
	t, err := m.dispatch.Launch(ctx, sa.NewTask{
		Task: sa.Task{
			ID:              id,
			Worktree:        wt,
			ParentSessionID: parent.ID,
			ParentAgent:     parent.Agent,
			Description:     strings.TrimSpace(req.Description),
			Prompt:          req.Prompt,
			Agent:           profile.Name,
			Status:          sa.TaskQueued,
			BatchID:         cmp.Or(req.BatchID, sa.NewID()),
			Timeout:         sa.Seconds(timeout),
			Budget:          budget,
			RunnerID:        runner.Queue,
			MayAsk:          userInput(ctx),
			Launcher:        launcherOf(ctx),
		},
		Fork:            req.Fork,
		Session:         sa.NewSession{Agent: profile.Name, Model: model, Title: strings.TrimSpace(req.Description), Origin: sa.OriginTask, Messages: first},
		JoinActiveBatch: req.JoinActiveBatch,
	}, ancestors)
	if err != nil && wt != nil {
		m.gitMu.Lock()
		_ = tree(wt).Discard(context.WithoutCancel(ctx))
		m.gitMu.Unlock()
	}
	if err == nil && req.Fork { // what the launch answer tells of its context
		t.ForkContext = m.forkEstimate(label, profile.Name+"\x00"+isolation, digest)
	}
	return t, err
}

// launchTimeout is a launch's time limit: the one asked for, at most the
// configured limit (0: that limit).
func (m *Manager) launchTimeout(asked time.Duration) time.Duration {
	if asked > 0 && asked < m.limits.Timeout.Duration {
		return asked
	}
	return m.limits.Timeout.Duration
}

// checkLaunch returns the profile of a launch request's agent and the
// isolation the task runs with (the request's, else the profile's). The
// request's shape was checked by the runtime's policy (runtime.Tasks.Check).
func (m *Manager) checkLaunch(req LaunchRequest) (agents.Profile, string, error) {
	isolation, err := sa.ParseIsolation(req.Isolation)
	if err != nil {
		return agents.Profile{}, "", err
	}
	profile, err := m.engine.Profile(req.Agent)
	if err != nil {
		return agents.Profile{}, "", err
	}
	if req.Isolation == "" {
		isolation = profile.Isolation
	}
	return profile, isolation, nil
}

// forkContext builds a forked task's first messages: a clear, so that its
// model context starts here and not with the parent's raw history (the
// session is still linked to the parent, as a fork); then the pipeline's
// preamble and digest of the parent's conversation; then the prompt.
func (m *Manager) forkContext(ctx context.Context, parentID, prompt string) ([]sa.Message, forkctx.Result, error) {
	history, err := m.store.History(ctx, parentID)
	if err != nil {
		return nil, forkctx.Result{}, fmt.Errorf("parent history: %w", err)
	}
	res, err := m.fork.Build(history)
	if err != nil {
		return nil, forkctx.Result{}, fmt.Errorf("fork context: %w", err)
	}
	// The digest in parts, its stable start first, so that a prompt
	// cache reads back what later forks share (forkctx.Result.Parts).
	var parts []sa.Part
	for _, p := range res.Parts() {
		parts = append(parts, sa.TextPart(p))
	}
	return []sa.Message{
		sa.ClearMessage(),
		{Role: sa.RoleSystem, Parts: parts},
		engine.UserMessage(prompt),
	}, res, nil
}

// forkEstimate is what a fork inherits and what its first request is
// expected to pay for it: a read of what a fork launched here within the
// cache's lifetime shares with it (all of it for a sibling, the stable
// start for a later fork of the same parent), a write of the rest. Tokens
// are the pipeline's count (o200k_base), plus a quarter of the preamble's
// bytes.
func (m *Manager) forkEstimate(model, agent string, res forkctx.Result) *sa.ForkContext {
	parts := res.Parts()
	whole, start := m.siblings.noteLaunch(launchKey(model, agent, res.Text()), launchKey(model, agent, parts[0]))
	fc := &sa.ForkContext{Tokens: int64(res.Stats.FinalTokens + len(res.Preamble)/4)}
	switch {
	case whole:
		fc.CacheReadTokens = fc.Tokens
	case start && res.Stats.FinalChars > 0:
		fc.CacheReadTokens = fc.Tokens * int64(res.Stats.StableChars) / int64(res.Stats.FinalChars)
	}
	fc.CacheWriteTokens = fc.Tokens - fc.CacheReadTokens
	if info, ok := m.engine.Config.ModelInfo(model); ok && info.Priced() {
		write := info.CacheWrite
		if write == 0 { // no write price (OpenAI): written tokens are input
			write = info.Input
		}
		usd := 0.0
		if !info.Free {
			usd = (float64(fc.CacheReadTokens)*info.CacheRead + float64(fc.CacheWriteTokens)*write) / 1e6
		}
		fc.USD = &usd
	}
	return fc
}

type launcherKey struct{}

// WithLauncher marks ctx as that of a launch made as a principal, which
// the task records (sa.Task.Launcher): an MCP client's.
func WithLauncher(ctx context.Context, launcher string) context.Context {
	return context.WithValue(ctx, launcherKey{}, launcher)
}

// launcherOf is the principal a launch is made as, if any.
func launcherOf(ctx context.Context) string {
	l, _ := ctx.Value(launcherKey{}).(string)
	return l
}
