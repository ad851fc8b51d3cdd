package runner

import (
	"context"
	"fmt"
	"os"
	"time"

	sa "github.com/superagents/superagents"
)

// Reconcile ends the active tasks whose runner is gone, as interrupted,
// with their notifications. It returns how many it ended.
func (r *Runner) Reconcile(ctx context.Context) (int, error) {
	return reconcile(ctx, r.store, r.self, r.stale, r.interrupt)
}

// Reconcile ends, from outside any runner, the active tasks whose runner
// is gone, as Runner.Reconcile does: commands that only read the store
// call it so that they never show a task of a dead process as running.
func Reconcile(ctx context.Context, st Store, interrupt Interrupt) (int, error) {
	host, _ := os.Hostname()
	return reconcile(ctx, st, sa.Runner{Host: host}, DefaultStaleAfter, interrupt)
}

// reconcile ends the active tasks whose runner is gone; self (if it has an
// id) is alive, and runners on self's host are checked by process id.
//
// The active tasks are listed before the runners are read: a runner
// registers before it creates a task, so every listed task's runner is
// among those read after. Read the other way round, a process that
// registered and launched a task between the two reads would be taken
// for dead and its new task ended.
func reconcile(ctx context.Context, st Store, self sa.Runner, stale time.Duration, interrupt Interrupt) (int, error) {
	active, err := st.ListTasks(ctx, sa.TaskFilter{Active: true, IncludeCleared: true})
	if err != nil {
		return 0, err
	}
	runners, err := st.Runners(ctx)
	if err != nil {
		return 0, err
	}
	alive := map[string]bool{}
	if self.ID != "" {
		alive[self.ID] = true
	}
	for _, r := range runners {
		if r.ID == self.ID {
			continue
		}
		if Alive(r, self.Host, stale) {
			alive[r.ID] = true
		} else {
			_ = st.RemoveRunner(ctx, r.ID)
		}
	}
	ended := 0
	for _, t := range active {
		if alive[t.RunnerID] || t.RunnerID == Queue {
			continue // a queued job is nobody's yet: the queue hands it out
		}
		err := interrupt(ctx, t, func(cur *sa.Task) error {
			// Ended, or resumed by another runner, since it was listed:
			// what was judged of it no longer holds.
			if alive[cur.RunnerID] || cur.RunnerID != t.RunnerID || cur.ResumeCount != t.ResumeCount {
				return fmt.Errorf("%w: task %s has a live runner", sa.ErrConflict, cur.ID)
			}
			return nil
		})
		if err == nil {
			ended++
		}
	}
	return ended, nil
}
