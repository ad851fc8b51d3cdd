// Package taskqueue runs tasks on whichever node of a cluster is free,
// through River, the job queue on PostgreSQL. Launching a task writes its
// row and its job in one transaction (a resume is a job too); every node
// that works the queue takes jobs up to its own limit (tasks.concurrency)
// and runs each job's task with its task manager (tasks.Manager.Work).
//
// A job is a claim ticket, not the task's state: the task row says
// whether the task still waits for a node. A job delivered twice (River's
// rescue of a job whose node died re-delivers it) finds its task claimed
// or ended and completes without running it; a node's death is answered
// by the task managers' reconcile, which ends the dead node's tasks as
// interrupted, once each.
package taskqueue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/postgres"
	"github.com/superagents/superagents/internal/tasks"
)

// RunArgs are a task_run job's arguments: which task, and for a resume
// the follow-up and the resume it belongs to.
type RunArgs struct {
	TaskID      string `json:"task_id"`
	Resume      bool   `json:"resume,omitempty"`
	ResumeCount int    `json:"resume_count,omitempty"`
	Prompt      string `json:"prompt,omitempty"`
	// TimeoutMS is the task's own timeout, set by the process that
	// launched it, whose configuration may allow more than the node's.
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
}

// Kind is the job's kind in River's table.
func (RunArgs) Kind() string { return "task_run" }

// maxAttempts: Work fails only when it cannot claim the task (the
// database is unreachable); a task's own failure is its ending, never a
// retry.
const maxAttempts = 5

// InsertOpts: retried a few times, on the default queue.
func (RunArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: maxAttempts} }

// DefaultRunLimit is the run limit of a queue whose options give none:
// the default task timeout and a minute.
const DefaultRunLimit = 31 * time.Minute

// rescueMargin is how long after its run limit a job is rescued.
const rescueMargin = time.Minute

// Options configure a Queue.
type Options struct {
	// ID is the River client's id: the process's runner id, so that a
	// job running under a node that died is known by its runner being
	// gone. Without it, orphaned jobs are not looked for.
	ID string
	// Interval is how often a working node looks for orphaned jobs.
	Interval time.Duration
	// Work makes this process a node that works jobs; without it the
	// queue only inserts them.
	Work bool
	// Concurrency is how many jobs (tasks) this node runs at once.
	Concurrency int
	// RunLimit is the longest a task's run may take (its timeout, plus
	// time for its ending). River gives a job that long, then takes its
	// node for dead: a minute later it hands the job out again, which,
	// its task being claimed or ended, then completes without a run.
	// River rescues only jobs that have such a limit.
	RunLimit time.Duration
	// Drain is how long Stop lets running tasks finish before it
	// interrupts them.
	Drain time.Duration
	// Logger receives River's own warnings (none when nil).
	Logger *slog.Logger
}

// Queue is the River client of one process.
type Queue struct {
	store  *postgres.Store
	client *river.Client[pgx.Tx]
	worker *runWorker
	work   bool
	drain  time.Duration

	id       string
	interval time.Duration
	stop     context.CancelFunc // stops the orphan loop
	stopped  chan struct{}
}

var _ tasks.Dispatch = (*Queue)(nil)

// New makes the River client of a process on store. It starts working
// jobs only with Start.
func New(store *postgres.Store, opts Options) (*Queue, error) {
	runLimit := cmp.Or(opts.RunLimit, DefaultRunLimit)
	q := &Queue{store: store, worker: &runWorker{limit: runLimit}, work: opts.Work, drain: opts.Drain,
		id: opts.ID, interval: cmp.Or(opts.Interval, 5*time.Second)}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, q.worker); err != nil {
		return nil, fmt.Errorf("job queue: %w", err)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg := &river.Config{
		ID:                   opts.ID,
		Schema:               store.Schema(),
		Workers:              workers,
		Logger:               logger,
		JobTimeout:           runLimit,
		RescueStuckJobsAfter: runLimit + rescueMargin,
		MaxAttempts:          maxAttempts,
		// Jobs are claim tickets: once done, there is nothing to keep.
		CompletedJobRetentionPeriod: time.Hour,
	}
	if opts.Work {
		cfg.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: max(opts.Concurrency, 1)}}
		cfg.FetchCooldown = 20 * time.Millisecond
	}
	client, err := river.NewClient(riverpgxv5.New(store.Pool()), cfg)
	if err != nil {
		return nil, fmt.Errorf("job queue: %w", err)
	}
	q.client = client
	return q, nil
}

// Launch creates the task and its job in one transaction.
func (q *Queue) Launch(ctx context.Context, nt sa.NewTask, _ []sa.Task) (sa.Task, error) {
	return q.store.CreateTaskTx(ctx, nt, func(ctx context.Context, tx pgx.Tx, t sa.Task) error {
		return q.insert(ctx, tx, RunArgs{TaskID: t.ID, TimeoutMS: time.Duration(t.Timeout).Milliseconds()})
	})
}

// Resume marks the task resumed and queues its run in one transaction.
func (q *Queue) Resume(ctx context.Context, id string, change func(*sa.Task) error, prompt string) (sa.Task, error) {
	return q.store.UpdateTaskTx(ctx, id, change, func(ctx context.Context, tx pgx.Tx, t sa.Task) error {
		return q.insert(ctx, tx, RunArgs{TaskID: t.ID, Resume: true, ResumeCount: t.ResumeCount, Prompt: prompt,
			TimeoutMS: time.Duration(t.Timeout).Milliseconds()})
	})
}

func (q *Queue) insert(ctx context.Context, tx pgx.Tx, args RunArgs) error {
	if _, err := q.client.InsertTx(ctx, tx, args, nil); err != nil {
		return fmt.Errorf("queue task run: %w", err)
	}
	return nil
}

// Start makes the node work jobs with m (a no-op for a queue that only
// inserts). Jobs are worked until Stop.
func (q *Queue) Start(ctx context.Context, m *tasks.Manager) error {
	if !q.work {
		return nil
	}
	q.worker.manager = m
	if err := q.client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("job queue: %w", err)
	}
	if q.id != "" {
		loop, stop := context.WithCancel(context.Background())
		q.stop, q.stopped = stop, make(chan struct{})
		go q.watchOrphans(loop)
	}
	return nil
}

// Stop stops taking jobs and waits for the running ones: for up to the
// drain time they may finish; then they are interrupted (their tasks end
// as interrupted, with their notifications), and Stop waits for that
// until ctx ends.
func (q *Queue) Stop(ctx context.Context) error {
	if !q.work {
		return nil
	}
	if q.stop != nil {
		q.stop()
		<-q.stopped
	}
	soft, cancel := context.WithTimeout(ctx, q.drain)
	defer cancel()
	err := q.client.Stop(soft)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("job queue: stop: %w", err)
	}
	if err := q.client.StopAndCancel(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("job queue: stop: %w", err)
	}
	return nil
}

// runWorker works task_run jobs with the node's task manager.
type runWorker struct {
	river.WorkerDefaults[RunArgs]
	manager *tasks.Manager // set by Start, before the first job
	limit   time.Duration
}

// Timeout is the run limit: the task's own timeout ends its run first.
// A task launched where a longer timeout is allowed than here keeps its
// own, with the same minute for its ending.
func (w *runWorker) Timeout(job *river.Job[RunArgs]) time.Duration {
	return max(w.limit, time.Duration(job.Args.TimeoutMS)*time.Millisecond+time.Minute)
}

func (w *runWorker) Work(ctx context.Context, job *river.Job[RunArgs]) error {
	a := job.Args
	return w.manager.Work(ctx, tasks.Job{TaskID: a.TaskID, Resume: a.Resume, ResumeCount: a.ResumeCount, Prompt: a.Prompt})
}
