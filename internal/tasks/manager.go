// Package tasks is the background task manager: it launches sub-agents
// without blocking their parent, forks them with the parent's context,
// resumes finished ones, cancels, lists and reports them, and tells the
// parent when each one ends.
//
// The store is the source of truth: a task's status, progress and result
// are written there, every ending goes through Store.FinishTask (so the
// first ending wins and writes the one notification), and other processes
// learn of changes from the store's change log. A Manager runs the tasks
// it launches or resumes, or, with a Dispatch to a job queue shared by
// several nodes, those the queue hands it (Work); it registers as a
// runner and keeps itself marked alive, so that after a crash the tasks of
// a runner that is gone are ended as interrupted instead of being left
// running.
package tasks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/forkctx"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/engine"
	"github.com/superagents/superagents/internal/events"
	"github.com/superagents/superagents/internal/runner"
)

// Why a run's context was cancelled.
var (
	errCancelled   = errors.New("cancelled")
	errEndedAway   = errors.New("ended by another process")
	errShutdown    = errors.New("interrupted: superagents stopped before the task finished")
	errTimedOut    = errors.New("timed out")
	errInactive    = errors.New("inactive")
	errTaskEnded   = errors.New("task ended")
	interruptedMsg = "interrupted by restart: the process running it stopped before it finished"
)

// How long the manager waits, and lets progress wait.
const (
	// cancelWait bounds how long Cancel waits for a run to stop.
	cancelWait = 30 * time.Second
	// defaultProgressDelay is how long after a change a run's progress
	// is stored: a task that ends sooner writes it once, with its ending.
	defaultProgressDelay = 200 * time.Millisecond
)

// Options configure a Manager.
type Options struct {
	Store  sa.Store
	Engine *engine.Engine
	Bus    *events.Bus
	Limits config.Tasks
	Fork   forkctx.Config
	// Heartbeat is how often the runner marks itself alive; a runner not
	// seen for StaleAfter is taken for dead.
	Heartbeat, StaleAfter time.Duration
	// Dispatch gets launched and resumed tasks run (nil: in this
	// process).
	Dispatch Dispatch
	// RunnerID is the id to register as (empty: a new one), for a
	// dispatch that names this process by it too.
	RunnerID string
	// WorktreeDir is where the worktrees of tasks launched with
	// isolation "worktree" are made (empty: inside the repository's git
	// directory).
	WorktreeDir string
}

// Manager runs background tasks. It is safe for concurrent use.
type Manager struct {
	store  sa.Store
	engine *engine.Engine
	bus    *events.Bus
	limits config.Tasks
	fork   *forkctx.Pipeline
	// runner is this process as the store knows it: its heartbeat, its
	// turn leases, the clean-up after runners that died.
	runner *runner.Runner
	slots  chan struct{} // one per task allowed to run at once
	// progressDelay is how long after a change a run's progress is
	// stored (see saveProgressLater).
	progressDelay time.Duration
	// dispatch gets launched and resumed tasks run.
	dispatch Dispatch
	// worktrees is Options.WorktreeDir; gitMu makes this process's
	// changes to worktrees one at a time.
	worktrees string
	gitMu     sync.Mutex

	// budgets are the running totals of budgeted task trees.
	budgets budgetBook
	// notTasks are sessions known to be no task's (see readAncestry).
	notTasks notTasks
	// siblings lines up the first requests of forks that share a prefix.
	siblings siblings

	mu       sync.Mutex
	runs     map[string]*run          // task id → its run in this process
	byParent map[string]int           // parent session → active runs here
	idle     map[string]chan struct{} // parent → closed when its runs reach 0
	closing  bool

	wg   sync.WaitGroup // runs
	stop chan struct{}  // background loops
	done sync.WaitGroup
}

// New registers a runner, ends the tasks of runners that are gone, and
// starts the manager's background loops.
func New(ctx context.Context, opts Options) (*Manager, error) {
	pipeline, err := forkctx.New(opts.Fork)
	if err != nil {
		return nil, fmt.Errorf("task manager: %w", err)
	}
	limits := opts.Limits
	if limits.Concurrency <= 0 {
		limits.Concurrency = config.DefaultTaskConcurrency
	}
	if limits.Timeout.Duration <= 0 {
		limits.Timeout.Duration = config.DefaultTaskTimeout
	}
	if limits.InactivityTimeout.Duration <= 0 {
		limits.InactivityTimeout.Duration = config.DefaultTaskInactivityTimeout
	}
	m := &Manager{
		store:         opts.Store,
		engine:        opts.Engine,
		bus:           opts.Bus,
		limits:        limits,
		fork:          pipeline,
		slots:         make(chan struct{}, limits.Concurrency),
		progressDelay: defaultProgressDelay,
		worktrees:     opts.WorktreeDir,
		runs:          make(map[string]*run),
		byParent:      make(map[string]int),
		idle:          make(map[string]chan struct{}),
		stop:          make(chan struct{}),
	}
	m.dispatch = opts.Dispatch
	if m.dispatch == nil {
		m.dispatch = inProcess{m}
	}
	m.runner, err = runner.Register(ctx, runner.Options{Store: opts.Store, ID: opts.RunnerID,
		Heartbeat: opts.Heartbeat, StaleAfter: opts.StaleAfter, Interrupt: interrupter(opts.Store)})
	if err != nil {
		return nil, fmt.Errorf("task manager: %w", err)
	}
	m.done.Add(1)
	go m.followEndings()
	return m, nil
}

// NewRunnerID makes a new runner id.
func NewRunnerID() string { return runner.NewID() }

func cmpDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// RunnerID is this manager's runner.
func (m *Manager) RunnerID() string { return m.runner.ID() }

// Runner is this process as the store knows it, whose turn leases the
// runtime takes too.
func (m *Manager) Runner() *runner.Runner { return m.runner }

// Limits are the task limits the manager applies, defaults filled in.
func (m *Manager) Limits() config.Tasks { return m.limits }

// Close stops the manager: running tasks are ended as interrupted (with
// their notifications), the loops stop and the runner is removed. It waits
// for the runs until ctx is done.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closing {
		m.mu.Unlock()
		return nil
	}
	m.closing = true
	for _, r := range m.runs {
		r.cancel(errShutdown)
	}
	m.mu.Unlock()
	finished := make(chan struct{})
	go func() { m.wg.Wait(); close(finished) }()
	var err error
	select {
	case <-finished:
	case <-ctx.Done():
		err = fmt.Errorf("task manager: runs still stopping: %w", ctx.Err())
	}
	close(m.stop)
	m.done.Wait()
	if rmErr := m.runner.Close(ctx); rmErr != nil && err == nil {
		err = rmErr
	}
	return err
}

// Active returns how many tasks of a parent session run in this manager.
func (m *Manager) Active(parentSessionID string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.byParent[parentSessionID]
}

// WaitIdle waits until no task of the parent session is active, in this
// process or any other: first for the runs here, then, following the
// change log, for those anywhere else (a node of a cluster, or a process
// that died and whose tasks a reconcile ends).
func (m *Manager) WaitIdle(ctx context.Context, parentSessionID string) error {
	if err := m.waitLocalIdle(ctx, parentSessionID); err != nil {
		return err
	}
	cursor := m.bus.Now() // before looking, so that no ending is missed
	for {
		active, err := m.store.ListTasks(ctx, sa.TaskFilter{ParentSessionID: parentSessionID, Active: true, IncludeCleared: true, Limit: 1})
		if err != nil {
			return err
		}
		if len(active) == 0 {
			return nil
		}
		_, err = cursor.NextMatching(ctx, func(c sa.Change) bool { return EndsTask(c) && c.SessionID == parentSessionID })
		if err != nil {
			return err
		}
	}
}

// EndsTask reports whether a change ends a task (its session is the
// task's parent).
func EndsTask(c sa.Change) bool {
	switch c.Kind {
	case sa.ChangeTaskCancelled, sa.ChangeTaskError, sa.ChangeTaskCompleted:
		return true
	}
	return false
}

// WaitLocalIdle waits until no task of the parent session runs in this
// process (WaitIdle also waits for those other processes run): what a
// process that runs tasks itself waits for before it exits.
func (m *Manager) WaitLocalIdle(ctx context.Context, parentSessionID string) error {
	return m.waitLocalIdle(ctx, parentSessionID)
}

// waitLocalIdle waits until no task of the parent session runs in this
// manager.
func (m *Manager) waitLocalIdle(ctx context.Context, parentSessionID string) error {
	m.mu.Lock()
	if m.byParent[parentSessionID] == 0 {
		m.mu.Unlock()
		return nil
	}
	ch, ok := m.idle[parentSessionID]
	if !ok {
		ch = make(chan struct{})
		m.idle[parentSessionID] = ch
	}
	m.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// track records a run about to start.
func (m *Manager) track(r *run) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closing {
		return sa.ErrClosed
	}
	m.runs[r.task.ID] = r
	m.byParent[r.task.ParentSessionID]++
	m.wg.Add(1)
	return nil
}

// untrack forgets a run that ended and, if it was its parent's last, says
// the parent is idle.
func (m *Manager) untrack(r *run) {
	m.mu.Lock()
	if m.runs[r.task.ID] == r { // a later resume may have taken the slot
		delete(m.runs, r.task.ID)
	}
	parent := r.task.ParentSessionID
	m.byParent[parent]--
	if m.byParent[parent] <= 0 {
		delete(m.byParent, parent)
		if ch, ok := m.idle[parent]; ok {
			close(ch)
			delete(m.idle, parent)
		}
	}
	m.mu.Unlock()
	close(r.done)
	m.wg.Done()
}

// followEndings stops local runs whose task another process ended (a
// cancel from the command line, a reconcile that took this runner for
// dead).
func (m *Manager) followEndings() {
	defer m.done.Done()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-m.stop; cancel() }()
	cursor := m.bus.Now()
	for {
		ch, err := cursor.Next(ctx)
		if err != nil {
			return
		}
		if ch.TaskID == "" {
			continue
		}
		if !EndsTask(ch) {
			continue
		}
		m.mu.Lock()
		r := m.runs[ch.TaskID]
		m.mu.Unlock()
		if r == nil || r.ending() {
			continue
		}
		// Only an ending of this very launch or resume stops it: the end
		// of an earlier resume may be read after a new one started.
		if ended, err := ch.Task(); err == nil && ended.ResumeCount == r.task.ResumeCount {
			r.cancel(errEndedAway)
		}
	}
}

// Reconcile ends the active tasks whose runner is gone, as interrupted,
// with their notifications. It returns how many it ended.
func (m *Manager) Reconcile(ctx context.Context) (int, error) { return m.runner.Reconcile(ctx) }

// Reconcile ends, from outside any manager, the active tasks whose runner
// is gone, as Manager.Reconcile does: commands that only read the store
// call it so that they never show a task of a dead process as running.
func Reconcile(ctx context.Context, st sa.Store) (int, error) {
	return runner.Reconcile(ctx, st, interrupter(st))
}

// interrupter ends a task whose runner is gone, as interrupted, with its
// notification.
func interrupter(st sa.Tasks) runner.Interrupt {
	return func(ctx context.Context, t sa.Task, check func(*sa.Task) error) error {
		_, err := finish(ctx, st, t.ID, sa.TaskError, "", interruptedMsg, check, nil)
		return err
	}
}

// Depth returns how many task launches separate a session from a session
// no task created (which is depth 0).
func (m *Manager) Depth(ctx context.Context, sessionID string) (int, error) {
	chain, err := m.ancestry(ctx, sessionID)
	return len(chain), err
}
