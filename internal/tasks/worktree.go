package tasks

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/tools"
	"github.com/superagents/superagents/internal/worktree"
)

// BranchPrefix starts the name of every task's branch.
const BranchPrefix = "superagents/"

// wipMessage is the message of the commit that keeps what a task left
// uncommitted in its worktree when the worktree is removed.
const wipMessage = "superagents: work in progress of task %s (%s)"

// tree is a task's recorded worktree as the worktree package handles it.
func tree(w *sa.TaskWorktree) worktree.Tree {
	return worktree.Tree{Repo: w.Repo, Path: w.Path, Branch: w.Branch, Base: w.Base}
}

// createWorktree makes the worktree of a task about to be launched with
// id: from the HEAD of the workspace it is launched from (its parent's
// worktree, for a task launched by a task that has one).
func (m *Manager) createWorktree(ctx context.Context, id string, ancestors []sa.Task) (*sa.TaskWorktree, error) {
	from := m.engine.Workspace.Dir()
	parent := nearestWorktree(ancestors)
	var top string
	var err error
	if parent != nil {
		// Its files are the launching task's to write: its repository is
		// the one its record names.
		top = parent.Repo
	} else if top, err = worktree.Toplevel(ctx, from); err != nil {
		return nil, fmt.Errorf("%w: isolation worktree: %w", sa.ErrInvalid, err)
	}
	dir := m.worktrees
	if dir == "" {
		if dir, err = worktree.DefaultDir(ctx, top); err != nil {
			return nil, fmt.Errorf("%w: isolation worktree: %w", sa.ErrInvalid, err)
		}
	}
	short := id[:min(len(id), sa.ShortIDLength)]
	m.gitMu.Lock()
	defer m.gitMu.Unlock()
	path, branch := filepath.Join(dir, filepath.Base(top)+"-"+short), BranchPrefix+short
	var t worktree.Tree
	if parent != nil {
		t, err = worktree.CreateFrom(ctx, tree(parent), path, branch)
	} else {
		t, err = worktree.Create(ctx, from, path, branch)
	}
	if errors.Is(err, worktree.ErrNotRepository) {
		return nil, fmt.Errorf("%w: isolation worktree: %w", sa.ErrInvalid, err)
	}
	if err != nil {
		return nil, fmt.Errorf("isolation worktree: %w", err)
	}
	return &sa.TaskWorktree{Path: t.Path, Branch: t.Branch, Base: t.Base, Repo: t.Repo}, nil
}

// nearestWorktree is the worktree of the nearest of tasks (a task and
// those above it, nearest first) that has one: a task launched without
// isolation by a task in a worktree works in that worktree too.
func nearestWorktree(chain []sa.Task) *sa.TaskWorktree {
	for _, t := range chain {
		if t.Worktree != nil {
			return t.Worktree
		}
	}
	return nil
}

// runWorkspace opens the workspace a run's tools work in when it is not
// the engine's: the task's own worktree (made again from its branch if
// it was removed), or the one it works in with the task that launched
// it, with the parts of the repository's git directory that git writes
// as it commits there. It returns a nil workspace for the engine's.
func (m *Manager) runWorkspace(ctx context.Context, r *run) (*tools.Workspace, []string, error) {
	w := r.task.Worktree
	if w == nil {
		chain, err := m.ancestry(ctx, r.task.ID)
		if err != nil {
			return nil, nil, err
		}
		if w = nearestWorktree(chain); w == nil {
			return nil, nil, nil
		}
	}
	tr := tree(w)
	m.gitMu.Lock()
	err := tr.Ensure(ctx)
	m.gitMu.Unlock()
	if err != nil {
		return nil, nil, fmt.Errorf("worktree of task %s: %w", sa.ShortID(r.task.ID), err)
	}
	gitDirs, err := tr.GitDirs(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("worktree of task %s: %w", sa.ShortID(r.task.ID), err)
	}
	ws, err := tools.OpenWorkspace(w.Path)
	if err != nil {
		return nil, nil, fmt.Errorf("worktree of task %s: %w", sa.ShortID(r.task.ID), err)
	}
	return ws, gitDirs, nil
}

// settleWorktree looks, as a run of a task with a worktree ends, at what
// the worktree holds: a task that changed nothing has its worktree and
// branch removed. It returns the record to store with the ending, or nil
// when the task has no worktree (or it could not be read: the record is
// left as it is).
func (m *Manager) settleWorktree(ctx context.Context, t sa.Task) *sa.TaskWorktree {
	if t.Worktree == nil {
		return nil
	}
	w := *t.Worktree
	tr := tree(&w)
	m.gitMu.Lock()
	defer m.gitMu.Unlock()
	if !tr.Exists() {
		return nil
	}
	c, err := tr.Changes(ctx)
	if err != nil {
		return nil
	}
	w.Changes, w.Commits, w.Removed = c.Stat, c.Commits, false
	if c.None() && tr.Discard(ctx) == nil {
		w.Removed = true
	}
	return &w
}

// releaseWorktree removes a task's worktree once the task is let go
// (superagents_clear, its parent's deletion): what it holds stays on its
// branch, uncommitted changes as a work-in-progress commit; a branch
// with nothing on it goes too. It reports whether the branch was kept.
func (m *Manager) releaseWorktree(ctx context.Context, t sa.Task) (kept bool, err error) {
	if t.Worktree == nil {
		return false, nil
	}
	m.gitMu.Lock()
	defer m.gitMu.Unlock()
	kept, err = tree(t.Worktree).Release(ctx, fmt.Sprintf(wipMessage, sa.ShortID(t.ID), t.Description))
	if err != nil {
		return false, fmt.Errorf("release the worktree of task %s: %w", sa.ShortID(t.ID), err)
	}
	return kept, nil
}

// ReleaseWorktrees releases, once a session was deleted, the worktrees of
// the tasks it launched, and its own if it was a task's (see
// releaseWorktree), after their runs here have stopped (the deletion
// cancelled the active ones). A worktree that is gone already is left
// alone; every one is tried, and the errors are returned together.
func (m *Manager) ReleaseWorktrees(ctx context.Context, sessionID string) error {
	list, err := m.store.ListTasks(ctx, sa.TaskFilter{ParentSessionID: sessionID, IncludeCleared: true})
	if err != nil {
		return err
	}
	if own, err := m.store.Task(ctx, sessionID); err == nil {
		list = append(list, own)
	}
	var errs []error
	for _, t := range list {
		if t.Worktree == nil {
			continue
		}
		m.mu.Lock()
		r := m.runs[t.ID]
		m.mu.Unlock()
		if r != nil {
			select {
			case <-r.done:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if _, err := m.releaseWorktree(ctx, t); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
