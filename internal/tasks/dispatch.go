package tasks

import (
	"context"
	"errors"
	"fmt"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/engine"
	"github.com/superagents/superagents/internal/runner"
)

// Dispatch is how a manager's launched and resumed tasks get run: in
// this process (the default, for a store one process owns), or by a job
// queue that any node on a shared database works (see Manager.Work).
//
// The task arrives queued (a launch) or resumed (a resume), with
// runner.Queue as its runner; an implementation may run it here instead,
// as its own runner.
type Dispatch interface {
	// Launch creates the task (Store.CreateTask) and has it run; what makes
	// it run is written in the same transaction as the task. ancestors are
	// the tasks above it, nearest first, as the launch read them (its
	// parent session's task and up): a run here starts with them.
	Launch(ctx context.Context, nt sa.NewTask, ancestors []sa.Task) (sa.Task, error)
	// Resume applies change to the task (Store.UpdateTask), which marks it
	// resumed, and has it run with prompt as the follow-up, again in one
	// transaction.
	Resume(ctx context.Context, id string, change func(*sa.Task) error, prompt string) (sa.Task, error)
}

// inProcess runs tasks in the manager's own process, as soon as a slot is
// free.
type inProcess struct{ m *Manager }

func (d inProcess) Launch(ctx context.Context, nt sa.NewTask, ancestors []sa.Task) (sa.Task, error) {
	m := d.m
	// Take a free slot now, so that a task under the concurrency limit is
	// running from the start; otherwise it waits, queued.
	slot := m.takeSlot()
	if slot {
		nt.Task.Status = sa.TaskRunning
	}
	nt.Task.RunnerID = m.runner.ID()
	// Its run here holds its session from the start.
	nt.Lease = &sa.TurnLease{RunnerID: m.runner.ID(), Holder: HolderTask}
	t, err := m.store.CreateTask(ctx, nt)
	if err != nil {
		if slot {
			<-m.slots
		}
		return sa.Task{}, err
	}
	// A new session is made as asked, so its run need not read it; a fork
	// takes what it was not given from its parent.
	known := launched{leased: true, ancestry: append([]sa.Task{t}, ancestors...)}
	if !nt.Fork {
		known.session = &sa.Session{ID: t.ID, Agent: nt.Session.Agent, Model: nt.Session.Model}
	}
	if _, err := m.start(t, known, nil, false, slot); err != nil {
		// Shutting down between create and start: end it at once.
		_, _ = m.finish(context.WithoutCancel(ctx), t.ID, sa.TaskError, "", errShutdown.Error(), nil)
		return sa.Task{}, err
	}
	return t, nil
}

func (d inProcess) Resume(ctx context.Context, id string, change func(*sa.Task) error, prompt string) (sa.Task, error) {
	m := d.m
	resumed, err := m.store.UpdateTask(ctx, id, func(tk *sa.Task) error {
		if err := change(tk); err != nil {
			return err
		}
		tk.RunnerID = m.runner.ID()
		return nil
	})
	if err != nil {
		return sa.Task{}, err
	}
	if _, err := m.start(resumed, launched{}, []sa.Message{engine.UserMessage(prompt)}, true, m.takeSlot()); err != nil {
		_, _ = m.finish(context.WithoutCancel(ctx), resumed.ID, sa.TaskError, "", errShutdown.Error(), nil)
		return sa.Task{}, err
	}
	return resumed, nil
}

// Job is a task's run as a job queue hands it to a node.
type Job struct {
	TaskID string
	// Resume, with the follow-up Prompt, marks a resume; ResumeCount is
	// the task's count when the job was queued (0 for a launch).
	Resume      bool
	ResumeCount int
	Prompt      string
}

// Work runs a task that a job queue handed to this node, here, and
// returns when its run has ended (the task ended, with its notification).
// It first claims the task: a launch still queued, or that very resume,
// whose runner is still runner.Queue, gets this runner. A task that ended
// meanwhile (cancelled before it started, ended by a reconcile) or that
// another node claimed is left alone and Work returns nil: a job delivered
// twice runs its task once. When ctx ends (the node stops) the run is
// interrupted, as Close interrupts it.
func (m *Manager) Work(ctx context.Context, job Job) error {
	// A runner owns a task only while it is registered: after a long
	// pause another node may have taken this one for dead and removed it,
	// and would end what it claims before the next heartbeat registers it
	// again.
	if err := m.runner.EnsureAlive(ctx); err != nil {
		return fmt.Errorf("mark this node alive before taking task %s: %w", sa.ShortID(job.TaskID), err)
	}
	claimed, err := m.store.UpdateTask(ctx, job.TaskID, func(tk *sa.Task) error {
		want := sa.TaskQueued
		if job.Resume {
			want = sa.TaskResumed
		}
		if tk.Status != want || tk.RunnerID != runner.Queue || tk.ResumeCount != job.ResumeCount {
			return errTaskEnded
		}
		tk.RunnerID = m.runner.ID()
		if !job.Resume {
			tk.Status, tk.StartedAt = sa.TaskRunning, time.Now()
		}
		return nil
	})
	switch {
	case errors.Is(err, errTaskEnded), errors.Is(err, sa.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("claim task %s: %w", sa.ShortID(job.TaskID), err)
	}
	// The slot: the queue hands out no more jobs than the node's limit,
	// but a run started here otherwise may hold one.
	select {
	case m.slots <- struct{}{}:
	case <-ctx.Done():
		_, _ = m.finish(context.WithoutCancel(ctx), claimed.ID, sa.TaskError, "", errShutdown.Error(), nil)
		return nil
	}
	var input []sa.Message
	if job.Resume {
		input = []sa.Message{engine.UserMessage(job.Prompt)}
	}
	r, err := m.start(claimed, launched{}, input, job.Resume, true)
	if err != nil {
		_, _ = m.finish(context.WithoutCancel(ctx), claimed.ID, sa.TaskError, "", errShutdown.Error(), nil)
		return nil
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		r.cancel(errShutdown)
		<-r.done
	}
	return nil
}
