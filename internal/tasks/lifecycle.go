package tasks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/runner"
)

// Resume sends a follow-up to a completed task, in its own session (so it
// sees its whole conversation), and runs it again in the background. A
// request may name an agent, which must be the task's (see
// CheckResumeAgent); "" names none.
func (m *Manager) Resume(ctx context.Context, ref, prompt, agent string) (sa.Task, error) {
	t, err := m.store.ResolveTask(ctx, ref)
	if err != nil {
		return sa.Task{}, err
	}
	if err := m.CheckResumeAgent(t, agent); err != nil {
		return sa.Task{}, err
	}
	if _, err := m.store.Session(ctx, t.ID); errors.Is(err, sa.ErrNotFound) {
		return sa.Task{}, fmt.Errorf("%w: the session of task %s no longer exists (it was deleted), so it cannot be resumed; start a new superagents_task instead", sa.ErrExpired, sa.ShortID(t.ID))
	} else if err != nil {
		return sa.Task{}, err
	}
	resumed, err := m.dispatch.Resume(ctx, t.ID, func(tk *sa.Task) error {
		if tk.ClearedAt != nil {
			// Nobody would hear from it: its parent let it go.
			return fmt.Errorf("%w: task %s was cleared (superagents_clear) or its parent session was deleted, so it cannot be resumed; start a new superagents_task instead", sa.ErrExpired, sa.ShortID(tk.ID))
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
		tk.RunnerID = runner.Queue
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
		if strings.HasPrefix(msg, sa.ErrConflict.Error()+": ") || strings.HasPrefix(msg, sa.ErrExpired.Error()+": ") {
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
// cleared, and the branches kept.
func (m *Manager) Clear(ctx context.Context, parentSessionID string) (cancelled, cleared int, kept []string, err error) {
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
