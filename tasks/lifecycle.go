package tasks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/agent"
	"github.com/superagents/superagents/engine"
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
	if strings.TrimSpace(req.Prompt) == "" {
		return sa.Task{}, fmt.Errorf("%w: prompt is required: say what the task should do", sa.ErrInvalid)
	}
	if strings.TrimSpace(req.Description) == "" {
		return sa.Task{}, fmt.Errorf("%w: description is required: a few words naming the task", sa.ErrInvalid)
	}
	if strings.TrimSpace(req.Agent) == "" {
		return sa.Task{}, fmt.Errorf("%w: agent is required: available agents are %s", sa.ErrInvalid, strings.Join(m.engine.Agents.Names(), ", "))
	}
	if req.Timeout < 0 {
		return sa.Task{}, fmt.Errorf("%w: timeout cannot be negative", sa.ErrInvalid)
	}
	isolation, err := sa.ParseIsolation(req.Isolation)
	if err != nil {
		return sa.Task{}, err
	}
	profile, err := m.engine.Profile(req.Agent)
	if err != nil {
		return sa.Task{}, err
	}
	if req.Isolation == "" {
		isolation = profile.Isolation
	}
	parent, err := m.store.Session(ctx, req.ParentSessionID)
	if err != nil {
		return sa.Task{}, fmt.Errorf("parent session: %w", err)
	}
	ancestors, err := m.ancestry(ctx, parent.ID)
	if err != nil {
		return sa.Task{}, err
	}
	depth := len(ancestors)
	if depth >= m.limits.SpawnDepth {
		return sa.Task{}, fmt.Errorf("%w: tasks may be nested %d deep (tasks.spawn_depth) and this session is at depth %d", ErrLimit, m.limits.SpawnDepth, depth)
	}
	timeout := m.limits.Timeout.Duration
	if req.Timeout > 0 && req.Timeout < timeout {
		timeout = req.Timeout
	}
	first := []sa.Message{engine.UserMessage(req.Prompt)}
	if req.Fork {
		if first, err = m.forkContext(ctx, cmp.Or(req.ForkFrom, parent.ID), req.Prompt); err != nil {
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
	budget, err := m.launchBudget(ctx, ancestors, m.engine.ModelFor(sa.Session{Model: model}, profile, ""), req.Budget)
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
			RunnerID:        QueueRunner,
			MayAsk:          userInput(ctx),
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
	return t, err
}

// forkContext builds a forked task's first messages: a clear, so that its
// model context starts here and not with the parent's raw history (the
// session is still linked to the parent, as a fork); then the pipeline's
// preamble and digest of the parent's conversation; then the prompt.
func (m *Manager) forkContext(ctx context.Context, parentID, prompt string) ([]sa.Message, error) {
	history, err := m.store.History(ctx, parentID)
	if err != nil {
		return nil, fmt.Errorf("parent history: %w", err)
	}
	res, err := m.fork.Build(history)
	if err != nil {
		return nil, fmt.Errorf("fork context: %w", err)
	}
	return []sa.Message{
		sa.ClearMessage(),
		{Role: sa.RoleSystem, Parts: []sa.Part{sa.TextPart(res.Text())}},
		engine.UserMessage(prompt),
	}, nil
}

// Resume sends a follow-up to a completed task, in its own session (so it
// sees its whole conversation), and runs it again in the background.
func (m *Manager) Resume(ctx context.Context, ref, prompt string) (sa.Task, error) {
	return m.resume(ctx, ref, prompt, "")
}

// ResumeAs is Resume for a request that may name an agent, which must be
// the task's (see CheckResumeAgent); "" names none.
func (m *Manager) ResumeAs(ctx context.Context, ref, prompt, agent string) (sa.Task, error) {
	return m.resume(ctx, ref, prompt, agent)
}

// resume is ResumeAs.
func (m *Manager) resume(ctx context.Context, ref, prompt, agent string) (sa.Task, error) {
	if strings.TrimSpace(prompt) == "" {
		return sa.Task{}, fmt.Errorf("%w: prompt is required: the follow-up to send to the task", sa.ErrInvalid)
	}
	t, err := m.store.ResolveTask(ctx, ref)
	if err != nil {
		return sa.Task{}, err
	}
	if err := m.CheckResumeAgent(t, agent); err != nil {
		return sa.Task{}, err
	}
	if _, err := m.store.Session(ctx, t.ID); errors.Is(err, sa.ErrNotFound) {
		return sa.Task{}, fmt.Errorf("%w: the session of task %s no longer exists (it was deleted), so it cannot be resumed; start a new superagents_task instead", ErrExpired, sa.ShortID(t.ID))
	} else if err != nil {
		return sa.Task{}, err
	}
	resumed, err := m.dispatch.Resume(ctx, t.ID, func(tk *sa.Task) error {
		if tk.ClearedAt != nil {
			// Nobody would hear from it: its parent let it go.
			return fmt.Errorf("%w: task %s was cleared (superagents_clear) or its parent session was deleted, so it cannot be resumed; start a new superagents_task instead", ErrExpired, sa.ShortID(tk.ID))
		}
		switch {
		case tk.Status == sa.TaskResumed:
			return fmt.Errorf("%w: task %s is currently being resumed; wait for it with superagents_output (block: true)", sa.ErrConflict, sa.ShortID(tk.ID))
		case !tk.Resumable():
			return fmt.Errorf("%w: only completed tasks can be resumed, and task %s is %s", sa.ErrConflict, sa.ShortID(tk.ID), tk.Status)
		}
		now := time.Now()
		tk.Status, tk.ResumeCount, tk.StartedAt = sa.TaskResumed, tk.ResumeCount+1, now
		// The earlier answer (Result) stays until this run gives another.
		tk.CompletedAt, tk.ResultRetrievedAt, tk.Error = nil, nil, ""
		tk.RunnerID = QueueRunner
		return nil
	}, prompt)
	if err != nil {
		return sa.Task{}, unwrapRefusal(err)
	}
	return resumed, nil
}

// CheckResumeAgent refuses an agent named with a resume of t unless it is
// t's own: a resumed task goes on with the agent it ran, so another name
// (or one no profile defines) would be ignored without a word. No agent
// is fine.
func (m *Manager) CheckResumeAgent(t sa.Task, agent string) error {
	if agent == "" {
		return nil
	}
	profile, err := m.engine.Profile(agent)
	if err != nil {
		return err
	}
	if profile.Name != t.Agent {
		return fmt.Errorf("%w: task %s runs agent %s, and a resumed task keeps its agent: leave agent out, or launch a new task with agent %s",
			sa.ErrInvalid, sa.ShortID(t.ID), t.Agent, profile.Name)
	}
	return nil
}

// unwrapRefusal keeps the reason a change function gave (a conflict, or
// an expired task), without the store's "update task ...:" prefix, so
// tools show one clear sentence.
func unwrapRefusal(err error) error {
	for e := err; e != nil; e = errors.Unwrap(e) {
		msg := e.Error()
		if strings.HasPrefix(msg, sa.ErrConflict.Error()+": ") || strings.HasPrefix(msg, ErrExpired.Error()+": ") {
			return e
		}
	}
	return err
}

// Cancel stops a queued, running or resuming task for real: it is ended
// as cancelled (one notification), its model stream and tools stop, and
// Cancel waits for that when the task runs in this process.
func (m *Manager) Cancel(ctx context.Context, ref string) (sa.Task, error) {
	return m.cancel(ctx, ref, "cancelled")
}

// cancel is Cancel with the error the task ends with.
func (m *Manager) cancel(ctx context.Context, ref, why string) (sa.Task, error) {
	t, err := m.store.ResolveTask(ctx, ref)
	if err != nil {
		return sa.Task{}, err
	}
	if !t.Status.Active() {
		return sa.Task{}, fmt.Errorf("%w: task %s is %s already: there is nothing to cancel", sa.ErrConflict, sa.ShortID(t.ID), t.Status)
	}
	ended, err := m.finish(ctx, t.ID, sa.TaskCancelled, "", why, nil)
	if err != nil {
		return sa.Task{}, unwrapRefusal(err)
	}
	m.mu.Lock()
	r := m.runs[t.ID]
	m.mu.Unlock()
	if r != nil {
		r.cancel(errCancelled)
		select {
		case <-r.done:
		case <-time.After(cancelWait):
		case <-ctx.Done():
		}
	}
	return ended, nil
}

// Clear cancels a parent session's active tasks and removes all its tasks
// from its listing; their sessions stay in the store. Their worktrees are
// removed, and the branches that hold work are kept (see
// releaseWorktree). It returns how many were cancelled and how many
// cleared.
func (m *Manager) Clear(ctx context.Context, parentSessionID string) (cancelled, cleared int, err error) {
	cancelled, cleared, _, err = m.clear(ctx, parentSessionID)
	return cancelled, cleared, err
}

// ClearKept is Clear that also returns the branches of the cleared tasks'
// worktrees that were kept because they hold work.
func (m *Manager) ClearKept(ctx context.Context, parentSessionID string) (cancelled, cleared int, kept []string, err error) {
	return m.clear(ctx, parentSessionID)
}

// clear is ClearKept.
func (m *Manager) clear(ctx context.Context, parentSessionID string) (cancelled, cleared int, kept []string, err error) {
	list, err := m.store.ListTasks(ctx, sa.TaskFilter{ParentSessionID: parentSessionID})
	if err != nil {
		return 0, 0, nil, err
	}
	var wtErrs []error
	defer func() {
		if err == nil {
			err = errors.Join(wtErrs...)
		}
	}()
	for _, t := range list {
		if t.Status.Active() {
			if _, err := m.Cancel(ctx, t.ID); err == nil {
				cancelled++
			} else if !errors.Is(err, sa.ErrConflict) {
				return cancelled, cleared, kept, err
			}
		}
		_, err := m.store.UpdateTask(ctx, t.ID, func(tk *sa.Task) error {
			now := time.Now()
			tk.ClearedAt = &now
			return nil
		})
		if err != nil {
			return cancelled, cleared, kept, err
		}
		cleared++
		if t.Worktree != nil && !m.waitStopped(ctx, t.ID, cancelWait) {
			// Its commands may still be writing there: a work-in-progress
			// commit now could keep files half written.
			wtErrs = append(wtErrs, fmt.Errorf("the worktree of task %s was left in %s, on branch %s: its run has not stopped yet", sa.ShortID(t.ID), t.Worktree.Path, t.Worktree.Branch))
			continue
		}
		if k, err := m.releaseWorktree(ctx, t); err != nil {
			wtErrs = append(wtErrs, err)
		} else if k {
			kept = append(kept, t.Worktree.Branch)
		}
	}
	return cancelled, cleared, kept, nil
}

// waitStopped waits, at most limit, until the run of task id in this
// process (if any) has stopped: Cancel stops waiting after cancelWait,
// and a task that ended meanwhile may still be stopping. It reports
// whether it stopped.
func (m *Manager) waitStopped(ctx context.Context, id string, limit time.Duration) bool {
	m.mu.Lock()
	r := m.runs[id]
	m.mu.Unlock()
	if r == nil {
		return true
	}
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-r.done:
		return true
	case <-timer.C:
	case <-ctx.Done():
	}
	return false
}

// List returns a parent session's tasks, newest first, optionally only
// those with one status.
func (m *Manager) List(ctx context.Context, parentSessionID string, status sa.TaskStatus) ([]sa.Task, error) {
	status, err := sa.ParseTaskStatus(string(status))
	if err != nil {
		return nil, err
	}
	return m.store.ListTasks(ctx, sa.TaskFilter{ParentSessionID: parentSessionID, Status: status})
}

// Block timeouts of Output.
const (
	DefaultBlockTimeout = 60 * time.Second
	MaxBlockTimeout     = 600 * time.Second
)

// BlockTimeout is how long a blocking Output waits: the timeout asked
// for, the default when none (0 or less), never more than the maximum.
func BlockTimeout(asked time.Duration) time.Duration {
	return min(cmpDuration(asked, DefaultBlockTimeout), MaxBlockTimeout)
}

// Output is what Output found.
type Output struct {
	Task sa.Task
	// TimedOut is set when a blocking wait ended before the task did.
	TimedOut bool
	// Waited is how long a blocking call waited.
	Waited time.Duration
	// Partial is the latest answer text of a task that has not finished.
	Partial string
}

// Output returns a task's state: for a completed task its result (and the
// task is marked retrieved), for a running one its progress. With block
// it first waits until the task ends or the timeout (default 60 s, at most
// 600 s) passes.
func (m *Manager) Output(ctx context.Context, ref string, block bool, timeout time.Duration) (Output, error) {
	t, err := m.store.ResolveTask(ctx, ref)
	if err != nil {
		return Output{}, err
	}
	var out Output
	if block && t.Status.Active() {
		start, limit := time.Now(), BlockTimeout(timeout)
		if t, out.TimedOut, err = m.waitEnd(ctx, t.ID, limit); err != nil {
			return Output{}, err
		}
		out.Waited = time.Since(start)
		if out.TimedOut {
			out.Waited = limit // what was asked, not how late a busy machine noticed
		}
	}
	if t.Status == sa.TaskCompleted && t.ResultRetrievedAt == nil {
		retrieved, err := m.store.UpdateTask(ctx, t.ID, func(tk *sa.Task) error {
			if tk.Status != sa.TaskCompleted || tk.ResultRetrievedAt != nil {
				return errTaskEnded // changed meanwhile: nothing to mark
			}
			now := time.Now()
			tk.ResultRetrievedAt = &now
			return nil
		})
		if err == nil {
			t = retrieved
		}
	}
	if t.Status.Active() {
		out.Partial = m.partial(ctx, t.ID)
	}
	out.Task = t
	return out, nil
}

// waitEnd waits until a task is no longer active, or the timeout passes.
func (m *Manager) waitEnd(ctx context.Context, id string, timeout time.Duration) (sa.Task, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cursor := m.bus.Now() // before reading the task, so no ending is missed
	for {
		t, err := m.store.Task(ctx, id)
		if err != nil {
			return sa.Task{}, false, err
		}
		if !t.Status.Active() {
			return t, false, nil
		}
		_, err = cursor.NextMatching(ctx, func(c sa.Change) bool { return c.TaskID == id })
		if errors.Is(err, context.DeadlineExceeded) {
			t, err := m.store.Task(context.WithoutCancel(ctx), id)
			return t, t.Status.Active(), err
		}
		if err != nil {
			return sa.Task{}, false, err
		}
	}
}

// WakeDue reports whether a session's agent is to be woken to answer its
// tasks: none of its tasks is active any more (in any process: one wake
// answers a whole batch), and notifications wait that it has not
// answered. Every way in and every task that launched tasks of its own
// wakes by this one rule.
func (m *Manager) WakeDue(ctx context.Context, sessionID string) (bool, error) {
	mark, err := m.WakeMark(ctx, sessionID)
	return mark > 0, err
}

// WakeMark is WakeDue with, when the agent is due, the id of the newest
// notification it has not answered (0 when it is not due): a waker that
// remembers it wakes once for those notifications, however often it
// looks.
func (m *Manager) WakeMark(ctx context.Context, sessionID string) (int64, error) {
	active, err := m.store.ListTasks(ctx, sa.TaskFilter{ParentSessionID: sessionID, Active: true, IncludeCleared: true, Limit: 1})
	if err != nil || len(active) > 0 {
		return 0, err
	}
	return m.unseen(ctx, sessionID)
}

// unseen returns the id of the newest task notification of a session that
// its agent has not answered yet (it came after its last message), or 0.
func (m *Manager) unseen(ctx context.Context, sessionID string) (int64, error) {
	last, ok, err := m.store.LatestMessage(ctx, sessionID, sa.MessageMatch{
		Kinds: []sa.Kind{sa.KindNotification}, Roles: []sa.Role{sa.RoleAssistant}})
	if err != nil || !ok || last.Kind != sa.KindNotification {
		return 0, err
	}
	return last.ID, nil
}

// partial returns the text of the task session's latest answer.
func (m *Manager) partial(ctx context.Context, id string) string {
	history, err := m.store.History(ctx, id)
	if err != nil {
		return ""
	}
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Role == sa.RoleAssistant {
			if text := history[i].Text(); text != "" {
				return text
			}
		}
	}
	return ""
}

// run is one launch or resume of a task, running in this process.
type run struct {
	task     sa.Task
	launched launched // what its launch here knew
	input    []sa.Message
	resume   bool
	slot     bool // took its run slot at launch (and so started running)
	ctx      context.Context
	cancel   context.CancelCauseFunc
	done     chan struct{}

	mu       sync.Mutex
	progress sa.TaskProgress
	activity time.Time
	tools    int  // tools running now
	waiting  bool // waiting for the tasks its agent launched
	ended    bool // the run is ending: a change it sees is its own
	// progressSaving: a save of progress is due or runs (saveTimer);
	// progressChanged: progress changed since the last save read it.
	progressSaving, progressChanged bool
	saveTimer                       *time.Timer
	// ancestry is the task and the tasks above it, read once (see
	// Manager.ancestry).
	ancestry []sa.Task
}

// progressCopy is the run's progress, shared with nothing. r.mu must be
// held.
func (r *run) progressCopy() sa.TaskProgress {
	p := r.progress
	p.ByName = maps.Clone(p.ByName)
	p.LastTools = slices.Clone(p.LastTools)
	return p
}

func (r *run) ending() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ended
}

// takeSlot takes a free run slot if there is one.
func (m *Manager) takeSlot() bool {
	select {
	case m.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// launched is what a launch in this process knows of its task's run.
type launched struct {
	// session is the task's new session (nil for a fork, which takes
	// what it was not given from its parent: the run reads it).
	session *sa.Session
	// leased says that the session was leased to this runner with the
	// task (sa.NewTask.Lease).
	leased bool
	// ancestry is the task and the tasks above it, as the launch read
	// them (see Manager.ancestry); nil makes the run read them.
	ancestry []sa.Task
}

// start begins a run in the background; slot says whether the caller
// took its run slot already.
func (m *Manager) start(t sa.Task, known launched, input []sa.Message, resume, slot bool) (*run, error) {
	ctx, cancel := context.WithCancelCause(context.Background())
	r := &run{task: t, launched: known, input: input, resume: resume, slot: slot, ctx: ctx, cancel: cancel, done: make(chan struct{}),
		progress: t.Progress, activity: time.Now(), ancestry: known.ancestry}
	if err := m.track(r); err != nil {
		cancel(err)
		if slot {
			<-m.slots
		}
		return nil, err
	}
	go m.execute(r)
	return r, nil
}

// execute runs a task: it waits for a slot, runs the agent, waits for the
// agent's own tasks and wakes it when they end, and records how it ended.
func (m *Manager) execute(r *run) {
	defer m.untrack(r)
	defer r.cancel(nil)
	if !r.slot {
		select {
		case m.slots <- struct{}{}:
		case <-r.ctx.Done():
			m.end(r, agent.Outcome{}, context.Cause(r.ctx), r.ctx)
			return
		}
	}
	defer func() { <-m.slots }()
	if !r.resume && !r.slot {
		_, err := m.store.UpdateTask(r.ctx, r.task.ID, func(tk *sa.Task) error {
			if tk.Status != sa.TaskQueued {
				return errTaskEnded
			}
			tk.Status, tk.StartedAt = sa.TaskRunning, time.Now()
			return nil
		})
		if err != nil {
			m.end(r, agent.Outcome{}, err, r.ctx)
			return
		}
	}
	ctx, cancel := context.WithTimeoutCause(r.ctx, cmpDuration(r.task.Timeout.Duration(), m.limits.Timeout.Duration), errTimedOut)
	defer cancel()
	ctx = m.withAsker(ctx, r)
	go m.watchActivity(ctx, r)

	// The task's session is its own: its run holds the session's lease,
	// so no turn, append or clear from elsewhere lands in it. A launch
	// here took it with the task.
	release := m.releaser(ctx, r.task.ID)
	if !r.launched.leased {
		var err error
		if release, err = m.Lease(ctx, r.task.ID, HolderTask, r.task.ID); err != nil {
			m.end(r, agent.Outcome{}, err, ctx)
			return
		}
	}
	opts := engine.TurnOptions{OnEvent: func(e agent.Event) { m.observe(r, e) }}
	// A task with a worktree (its own, or its launcher's) works there.
	ws, gitDirs, err := m.runWorkspace(ctx, r)
	if err != nil {
		if !m.end(r, agent.Outcome{}, err, ctx) {
			release()
		}
		return
	}
	if ws != nil {
		defer ws.Close()
		opts.Workspace, opts.Writable = ws, gitDirs
	}
	runAgent := func(opts engine.TurnOptions, input ...sa.Message) (agent.Outcome, error) {
		if r.launched.session != nil {
			return m.engine.RunIn(ctx, *r.launched.session, opts, input...)
		}
		return m.engine.Run(ctx, r.task.ID, opts, input...)
	}
	// A launch here made the session (not a fork's): its first turn
	// reads it as new.
	first := opts
	first.NewSession = r.launched.session != nil
	outcome, err := runAgent(first, r.input...)
	// An agent that launched tasks of its own finishes with them: it waits
	// for them, and is woken while they left notifications it has not seen.
	due := false
	waker := m.NewCheckedWaker(func(string) bool { due = true; return true })
	waker.Watch(r.task.ID)
	for err == nil {
		// A session that never had tasks of its own has none to wait for
		// and no notification to answer: one indexed read tells, where
		// waiting and checking cost several.
		var own []sa.Task
		if own, err = m.store.ListTasks(ctx, sa.TaskFilter{ParentSessionID: r.task.ID, IncludeCleared: true, Limit: 1}); err != nil || len(own) == 0 {
			break
		}
		if err = m.waitForOwnTasks(ctx, r); err != nil {
			break
		}
		if err = m.budgets.refresh(ctx, m, r); err != nil {
			break
		}
		due = false
		if err = waker.Check(ctx, r.task.ID); err != nil || !due {
			break
		}
		outcome, err = runAgent(opts)
	}
	// The task's ending gives the lease back with it (see FinishTask), so
	// that a resume can take it at once; a run whose task was ended
	// elsewhere gives it back itself.
	if !m.end(r, outcome, err, ctx) {
		release()
	}
	if err != nil {
		// Stopped before its own tasks ended (a run that went well waited
		// for them).
		m.cancelSubtasks(r.task.ID)
	}
}

// subtaskCancelled is the error of a task stopped because the task that
// launched it ended first.
const subtaskCancelled = "cancelled: the task that launched it ended first"

// cancelSubtasks cancels the tasks a task launched that are still active:
// a task that ended (cancelled, failed, timed out) leaves nobody to read
// their results. Each of them does the same for its own when it stops.
func (m *Manager) cancelSubtasks(taskID string) {
	m.mu.Lock()
	closing := m.closing
	m.mu.Unlock()
	if closing {
		return // they are being interrupted, as this one was
	}
	ctx := context.Background()
	active, err := m.store.ListTasks(ctx, sa.TaskFilter{ParentSessionID: taskID, Active: true, IncludeCleared: true})
	if err != nil {
		return
	}
	for _, t := range active {
		_, _ = m.cancel(ctx, t.ID, subtaskCancelled)
	}
}

// waitForOwnTasks waits until the tasks the run's agent launched have
// ended. Waiting for them is progress: the inactivity clock is stopped
// meanwhile and starts again afresh.
func (m *Manager) waitForOwnTasks(ctx context.Context, r *run) error {
	r.mu.Lock()
	r.waiting = true
	r.mu.Unlock()
	err := m.WaitIdle(ctx, r.task.ID)
	r.mu.Lock()
	r.waiting, r.activity = false, time.Now()
	r.mu.Unlock()
	return err
}

// end records how a run ended, unless the task was ended already (a
// cancel, or another process). It reports whether it ended the task.
func (m *Manager) end(r *run, o agent.Outcome, runErr error, ctx context.Context) bool {
	r.mu.Lock()
	r.ended = true
	m.stopProgressSaves(r)
	r.mu.Unlock()
	m.budgets.release(r)
	status, result, errMsg := sa.TaskCompleted, o.Text, ""
	if runErr != nil {
		status = sa.TaskError
		cause := context.Cause(ctx)
		var overBudget *budgetStop
		switch {
		case errors.As(cause, &overBudget):
			errMsg = overBudget.reason
		case errors.Is(cause, errCancelled), errors.Is(cause, errEndedAway), errors.Is(runErr, errTaskEnded):
			return false // ended already, by whoever cancelled it
		case errors.Is(cause, errShutdown):
			errMsg = errShutdown.Error()
		case errors.Is(cause, errTimedOut):
			errMsg = fmt.Sprintf("timed out after %s (the task's time limit)", sa.FormatDuration(cmpDuration(r.task.Timeout.Duration(), m.limits.Timeout.Duration)))
		case errors.Is(cause, errInactive):
			errMsg = fmt.Sprintf("stopped after %s without progress (tasks.inactivity_timeout)", sa.FormatDuration(m.limits.InactivityTimeout.Duration))
		default:
			errMsg = runErr.Error()
		}
	}
	// The run's last progress goes with its ending: saves of progress
	// are not waited for, one still due was dropped above, and one that
	// runs now is refused once the task ended.
	r.mu.Lock()
	progress := r.progressCopy()
	r.mu.Unlock()
	// What its worktree holds goes with it too (read while the task is
	// still active: no resume can start in the worktree meanwhile).
	wt := m.settleWorktree(context.Background(), r.task)
	_, err := finish(context.Background(), m.store, r.task.ID, status, result, errMsg, func(cur *sa.Task) error {
		if wt != nil && cur.Worktree != nil {
			cur.Worktree = wt
		}
		return nil
	}, &progress)
	return err == nil
}

// finish ends a task in the store with its notification; check, if set,
// may refuse based on the task as it is in the transaction, or add to
// the ending.
func (m *Manager) finish(ctx context.Context, id string, status sa.TaskStatus, result, errMsg string, check func(*sa.Task) error) (sa.Task, error) {
	return finish(ctx, m.store, id, status, result, errMsg, check, nil)
}

// finish ends a task; progress, if set, is stored with the ending.
func finish(ctx context.Context, st sa.Tasks, id string, status sa.TaskStatus, result, errMsg string, check func(*sa.Task) error, progress *sa.TaskProgress) (sa.Task, error) {
	ended, _, err := st.FinishTask(ctx, id, func(t *sa.Task) error {
		if !t.Status.Active() {
			return fmt.Errorf("%w: task %s is %s already", sa.ErrConflict, sa.ShortID(t.ID), t.Status)
		}
		if check != nil {
			if err := check(t); err != nil {
				return err
			}
		}
		if status == sa.TaskCompleted && t.Status == sa.TaskQueued {
			return fmt.Errorf("%w: task %s never ran", sa.ErrConflict, sa.ShortID(t.ID))
		}
		now := time.Now()
		t.Status, t.CompletedAt, t.RunnerID = status, &now, ""
		t.Error = errMsg
		if progress != nil {
			t.Progress = *progress
		}
		switch {
		case status == sa.TaskCompleted:
			t.Result = result
		case t.ResumeCount == 0:
			t.Result = ""
			// A resume that ended without an answer leaves the earlier one.
		}
		return nil
	}, notification)
	return ended, err
}

// observe turns the agent's events into progress: every event is activity;
// tool calls are counted and saved.
func (m *Manager) observe(r *run, e agent.Event) {
	m.charge(r, e)
	r.mu.Lock()
	r.activity = time.Now()
	switch e.Type {
	case agent.EventToolStart:
		r.tools++
		p := &r.progress
		p.ToolCalls++
		if p.ByName == nil {
			p.ByName = map[string]int{}
		}
		p.ByName[e.Call.Name]++
		p.LastTools = append(p.LastTools, e.Call.Name)
		if len(p.LastTools) > 5 {
			p.LastTools = slices.Clone(p.LastTools[len(p.LastTools)-5:])
		}
		p.Phase, p.LastUpdate = "tool: "+e.Call.Name, time.Now()
	case agent.EventToolEnd:
		r.tools--
		r.progress.Phase, r.progress.LastUpdate = "model", time.Now()
	case agent.EventStep:
		r.progress.Phase, r.progress.LastUpdate = "model", time.Now()
	default:
		r.mu.Unlock()
		return
	}
	r.progressChanged = true
	if !r.progressSaving {
		r.progressSaving = true
		m.saveProgressLater(r)
	}
	r.mu.Unlock()
}

// saveProgressLater has the run's progress stored a while from now.
// The run does not wait for it (a write per model step would hold up each
// step for a commit); the changes that come meanwhile are stored together,
// as one, and a run that ends before then stores its progress with its
// ending instead. r.mu must be held.
func (m *Manager) saveProgressLater(r *run) {
	m.wg.Add(1)
	r.saveTimer = time.AfterFunc(m.progressDelay, func() { m.saveProgress(r) })
}

// saveProgress stores a run's progress, and has it stored again later if
// it changed meanwhile.
func (m *Manager) saveProgress(r *run) {
	defer m.wg.Done()
	r.mu.Lock()
	if r.ended {
		r.progressSaving = false
		r.mu.Unlock()
		return
	}
	progress := r.progressCopy()
	r.progressChanged = false
	r.mu.Unlock()
	_, _ = m.store.UpdateTask(context.Background(), r.task.ID, func(tk *sa.Task) error {
		if !tk.Status.Active() {
			return errTaskEnded
		}
		tk.Progress = progress
		return nil
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.progressChanged && !r.ended {
		m.saveProgressLater(r)
		return
	}
	r.progressSaving = false
}

// stopProgressSaves drops a save of the run's progress that has not
// started: its ending stores the progress. r.mu must be held.
func (m *Manager) stopProgressSaves(r *run) {
	if r.saveTimer != nil && r.saveTimer.Stop() {
		r.progressSaving = false
		m.wg.Done()
	}
}

// watchActivity ends a run that shows no progress for the inactivity
// timeout. A tool that is running counts as progress, and so does waiting
// for the run's own tasks (each of which has its own watch).
func (m *Manager) watchActivity(ctx context.Context, r *run) {
	limit := m.limits.InactivityTimeout.Duration
	// A few looks per limit, at most a second apart, and never a zero
	// interval (which NewTicker refuses) for a limit of a few nanoseconds.
	tick := time.NewTicker(max(min(limit/4, time.Second), time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		r.mu.Lock()
		idle := r.tools == 0 && !r.waiting && time.Since(r.activity) > limit
		r.mu.Unlock()
		if idle {
			r.cancel(errInactive)
			return
		}
	}
}
