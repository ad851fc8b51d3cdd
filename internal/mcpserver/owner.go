package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	sa "github.com/superagents/superagents"
)

// maxLineage bounds the walk up a task's ancestors: a chain this long is
// deeper than any spawn depth, so it can only be a corrupt store.
const maxLineage = 64

// owned finds a task by id or prefix among those of one client: the tasks
// its store session (root: its host conversation's, or its own) launched
// and, down the line, the tasks they launched. Any other task is not
// found, so that a client can neither read, cancel nor resume another's
// tasks; the answer says where such a task can be read (see foreign).
func (s *Server) owned(ctx context.Context, root, ref string) (sa.Task, error) {
	prefix, err := sa.CheckIDPrefix(ref)
	if err != nil {
		return sa.Task{}, err
	}
	t, err := s.store.ResolveTask(ctx, ref)
	var amb *sa.AmbiguousIDError
	switch {
	case errors.As(err, &amb):
		// Ambiguous among every client's tasks: perhaps not among this
		// one's.
		return s.ownedByPrefix(ctx, root, ref, prefix)
	case err != nil:
		return sa.Task{}, err
	}
	if root != "" {
		mine, err := s.descends(ctx, t, root)
		if err != nil {
			return sa.Task{}, err
		}
		if mine {
			return t, nil
		}
	}
	return sa.Task{}, foreign(ref)
}

// foreign is the answer for a task that exists but is not the client's:
// not found here, and what to do about it.
func foreign(ref string) error {
	return sa.NotFoundf("no task with id %s in this conversation: it was launched from another conversation, or from an earlier connection "+
		"whose host conversation superagents could not tell. A task is read, resumed and cancelled from the host conversation that launched it "+
		"(or, when the host's transcript cannot be read, from the same connection). Launch a new superagents_task here, "+
		"or read it from a terminal with: superagents task output %s", ref, ref)
}

// notFound is the store's answer for an id that no task has.
func notFound(ref string) error { return sa.NotFoundf("no task with id %s", ref) }

// descends reports whether t was launched by root, or by a task root's
// line launched.
func (s *Server) descends(ctx context.Context, t sa.Task, root string) (bool, error) {
	id := t.ParentSessionID
	for range maxLineage {
		if id == root {
			return true, nil
		}
		parent, err := s.store.Task(ctx, id)
		if errors.Is(err, sa.ErrNotFound) {
			return false, nil // a session no task runs in, and not root
		}
		if err != nil {
			return false, fmt.Errorf("task %s: %w", sa.ShortID(t.ID), err)
		}
		id = parent.ParentSessionID
	}
	return false, fmt.Errorf("%w: task %s has more than %d ancestors", sa.ErrCorrupt, sa.ShortID(t.ID), maxLineage)
}

// ownedByPrefix resolves a prefix among the client's tasks alone, as the
// store resolves it among all: one match is the task, several are
// ambiguous (listing only the client's), none is not found.
func (s *Server) ownedByPrefix(ctx context.Context, root, ref, prefix string) (sa.Task, error) {
	if root == "" {
		return sa.Task{}, notFound(ref)
	}
	var matches []sa.Task
	parents := []string{root}
	for depth := 0; len(parents) > 0; depth++ {
		if depth >= maxLineage {
			return sa.Task{}, fmt.Errorf("%w: tasks nested more than %d deep", sa.ErrCorrupt, maxLineage)
		}
		var next []string
		for _, p := range parents {
			list, err := s.store.ListTasks(ctx, sa.TaskFilter{ParentSessionID: p, IncludeCleared: true})
			if err != nil {
				return sa.Task{}, err
			}
			for _, t := range list {
				if t.ID == prefix {
					return t, nil // a full id is never ambiguous
				}
				if strings.HasPrefix(t.ID, prefix) {
					matches = append(matches, t)
				}
				next = append(next, t.ID)
			}
		}
		parents = next
	}
	switch len(matches) {
	case 0:
		return sa.Task{}, notFound(ref)
	case 1:
		return matches[0], nil
	}
	slices.SortFunc(matches, func(a, b sa.Task) int { return strings.Compare(a.ID, b.ID) })
	amb := &sa.AmbiguousIDError{Prefix: prefix}
	for i, t := range matches {
		if i == maxCandidates {
			amb.More = true
			break
		}
		amb.Candidates = append(amb.Candidates, t.ID)
	}
	return sa.Task{}, amb
}

// maxCandidates is how many matches an ambiguity error lists, as the
// store's do.
const maxCandidates = 5
