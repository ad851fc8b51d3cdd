package tasks

import (
	"context"

	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	sa "github.com/superagents/superagents"

	"github.com/superagents/superagents/internal/engine"
)

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
	if !m.takeRunSlot(r) {
		return
	}
	defer func() { <-m.slots }()
	ctx, cancel := context.WithTimeoutCause(r.ctx, cmpDuration(r.task.Timeout.Duration(), m.limits.Timeout.Duration), errTimedOut)
	defer cancel()
	ctx = withSelf(m.withAsker(ctx, r), r.task.ID)
	go m.watchActivity(ctx, r)

	// The task's session is its own: its run holds the session's lease,
	// so no turn, append or clear from elsewhere lands in it. A launch
	// here took it with the task.
	release := m.releaser(ctx, r.task.ID)
	if !r.launched.leased {
		var err error
		if release, err = m.Lease(ctx, r.task.ID, HolderTask, r.task.ID); err != nil {
			m.end(r, sa.TurnOutcome{}, err, ctx)
			return
		}
	}
	opts := engine.TurnOptions{OnEvent: func(e sa.TurnEvent) { m.observe(r, e) }, Inbox: m.inbox(r.task.ID), WrapProvider: m.siblings.wrap}
	// A task with a worktree (its own, or its launcher's) works there.
	ws, gitDirs, err := m.runWorkspace(ctx, r)
	if err != nil {
		if ended, _ := m.end(r, sa.TurnOutcome{}, err, ctx); !ended {
			release()
		}
		return
	}
	if ws != nil {
		defer ws.Close()
		opts.Workspace, opts.Writable = ws, gitDirs
	}
	outcome, err := m.settleRun(ctx, r, opts, false)
	// The task's ending gives the lease back with it (see FinishTask), so
	// that a resume can take it at once; a run whose task was ended
	// elsewhere gives it back itself. A message sent just before it
	// would have completed keeps it running: it reads the message first.
	for {
		ended, again := m.end(r, outcome, err, ctx)
		if again {
			outcome, err = m.settleRun(ctx, r, opts, true)
			continue
		}
		if !ended {
			release()
		}
		break
	}
	if err != nil {
		// Stopped before its own tasks ended (a run that went well waited
		// for them).
		m.cancelSubtasks(r.task.ID)
	}
}

// takeRunSlot waits for a run slot, unless the launch took one, and marks
// a launch that waited for it running. When it reports false the run has
// ended (cancelled while queued, or its task ended meanwhile).
func (m *Manager) takeRunSlot(r *run) bool {
	if !r.slot {
		select {
		case m.slots <- struct{}{}:
		case <-r.ctx.Done():
			m.end(r, sa.TurnOutcome{}, context.Cause(r.ctx), r.ctx)
			return false
		}
	}
	if !r.resume && !r.slot {
		_, err := m.store.UpdateTask(r.ctx, r.task.ID, func(tk *sa.Task) error {
			if tk.Status != sa.TaskQueued {
				return errTaskEnded
			}
			tk.Status, tk.StartedAt = sa.TaskRunning, time.Now()
			return nil
		})
		if err != nil {
			m.end(r, sa.TurnOutcome{}, err, r.ctx)
			<-m.slots
			return false
		}
	}
	return true
}

// settleRun runs the task's agent through the one turn loop (Settle): an
// agent that launched tasks of its own finishes with them, waiting for
// them and woken while they left notifications it has not seen, or was
// sent a message. It returns the last turn's outcome. again runs it
// once more, without its input: for a message that came as it ended.
func (m *Manager) settleRun(ctx context.Context, r *run, opts engine.TurnOptions, again bool) (sa.TurnOutcome, error) {
	var outcome sa.TurnOutcome
	err := m.Settle(ctx, r.task.ID, Loop{
		Turn: func(ctx context.Context, wake bool) error {
			var err error
			switch {
			case wake || again:
				outcome, err = m.runAgent(ctx, r, opts)
			default:
				// A launch here made the session (not a fork's): its
				// first turn reads it as new.
				first := opts
				first.NewSession = r.launched.session != nil
				outcome, err = m.runAgent(ctx, r, first, r.input...)
			}
			return err
		},
		// Waiting for its own tasks is progress: the inactivity clock
		// is stopped meanwhile and starts again afresh.
		Waiting: func(waiting bool) {
			r.mu.Lock()
			r.waiting = waiting
			if !waiting {
				r.activity = time.Now()
			}
			r.mu.Unlock()
		},
		BeforeWake: func(ctx context.Context) error { return m.budgets.refresh(ctx, m, r) },
	})
	return outcome, err
}

// runAgent runs one turn of the task's agent in its session.
func (m *Manager) runAgent(ctx context.Context, r *run, opts engine.TurnOptions, input ...sa.Message) (sa.TurnOutcome, error) {
	if r.launched.session != nil {
		return m.engine.RunIn(ctx, *r.launched.session, opts, input...)
	}
	return m.engine.Run(ctx, r.task.ID, opts, input...)
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

// end records how a run ended, unless the task was ended already (a
// cancel, or another process). It reports whether it ended the task, and
// again when it did not because a message waits for the run to read it
// (sa.ErrUndelivered): the run goes on.
func (m *Manager) end(r *run, o sa.TurnOutcome, runErr error, ctx context.Context) (ended, again bool) {
	r.mu.Lock()
	r.ended = true
	m.stopProgressSaves(r)
	r.mu.Unlock()
	status, result, errMsg := sa.TaskCompleted, o.Text, ""
	if runErr != nil {
		status = sa.TaskError
		cause := context.Cause(ctx)
		var overBudget *budgetStop
		switch {
		case errors.As(cause, &overBudget):
			errMsg = overBudget.reason
		case errors.Is(cause, errCancelled), errors.Is(cause, errEndedAway), errors.Is(runErr, errTaskEnded):
			m.budgets.release(r)
			return false, false // ended already, by whoever cancelled it
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
	if errors.Is(err, sa.ErrUndelivered) && ctx.Err() == nil {
		r.mu.Lock()
		r.ended = false
		r.mu.Unlock()
		return false, true
	}
	m.budgets.release(r)
	return err == nil, false
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
func (m *Manager) observe(r *run, e sa.TurnEvent) {
	m.charge(r, e)
	r.mu.Lock()
	r.activity = time.Now()
	switch e.Type {
	case sa.TurnEventToolStart:
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
	case sa.TurnEventToolEnd:
		r.tools--
		r.progress.Phase, r.progress.LastUpdate = "model", time.Now()
	case sa.TurnEventStep:
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
