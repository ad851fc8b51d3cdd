package taskqueue

import (
	"cmp"
	"time"

	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/postgres"
	"github.com/superagents/superagents/internal/runner"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/tasks"
)

// Wire has the runtime that opts open run its tasks through a job queue
// on store: the queue becomes the runtime's dispatch, and River's client
// goes by the runtime's runner id. q says whether this process is a node
// that works the queue (Work), how long it drains (Drain) and where
// River's warnings go (Logger); its id, concurrency, run limit and
// interval are the runtime's, unless q sets them.
func Wire(store *postgres.Store, opts runtime.Options, q Options) (runtime.Options, error) {
	opts.RunnerID = cmp.Or(opts.RunnerID, q.ID, tasks.NewRunnerID())
	q.ID = opts.RunnerID
	q.Concurrency = cmp.Or(q.Concurrency, opts.Config.Tasks.Concurrency)
	q.RunLimit = cmp.Or(q.RunLimit, runLimit(opts.Config.Tasks))
	q.Interval = cmp.Or(q.Interval, opts.Heartbeat, opts.Config.Tasks.Heartbeat.Duration, runner.DefaultHeartbeat)
	queue, err := New(store, q)
	if err != nil {
		return opts, err
	}
	opts.Queue = queue
	return opts, nil
}

// runLimit is the longest a task's run may take, as the job queue needs
// to know to tell a dead node's job from a long one: its timeout, then
// time for its ending.
func runLimit(limits config.Tasks) time.Duration {
	return cmp.Or(limits.Timeout.Duration, config.DefaultTaskTimeout) + time.Minute
}
