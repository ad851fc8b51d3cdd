package repl

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	sa "github.com/superagents/superagents"
)

// The tree of a chat is the fork lineage the current agent belongs to: its
// root (the oldest live ancestor, found by following parent links until a
// session has no parent, or its parent was deleted) and every live
// descendant of that root, found through the children's parent links.
// Sessions forked from a deleted session start a tree of their own, and so
// do the sessions of background tasks (a forked task's session is linked
// to its parent like a fork): tasks are listed by /tasks, not /agents.

// node is one session of a tree and its children, oldest first.
type node struct {
	session  sa.Session
	parent   *node
	children []*node
}

// treeOf loads the tree that holds the session id.
// treeStore is the part of the store a tree of agents is read from.
type treeStore interface {
	sa.SessionReader
	sa.TaskReader
}

func treeOf(ctx context.Context, st treeStore, id string) (*node, error) {
	root, err := rootOf(ctx, st, id)
	if err != nil {
		return nil, err
	}
	top := &node{session: root}
	seen := map[string]bool{root.ID: true}
	queue := []*node{top}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		kids, err := st.ListSessions(ctx, sa.SessionFilter{ParentID: n.session.ID})
		if err != nil {
			return nil, fmt.Errorf("list the agents forked from %s: %w", sa.ShortID(n.session.ID), err)
		}
		slices.SortFunc(kids, func(a, b sa.SessionSummary) int {
			return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
		})
		for _, k := range kids {
			task, err := isTask(ctx, st, k.ID)
			if err != nil {
				return nil, err
			}
			if task {
				continue
			}
			if seen[k.ID] {
				return nil, fmt.Errorf("%w: session %s is its own ancestor", sa.ErrCorrupt, k.ID)
			}
			seen[k.ID] = true
			child := &node{session: k.Session, parent: n}
			n.children = append(n.children, child)
			queue = append(queue, child)
		}
	}
	return top, nil
}

// rootOf follows parent links up from id to the oldest live ancestor, or
// to the session of a task.
func rootOf(ctx context.Context, st treeStore, id string) (sa.Session, error) {
	s, err := st.Session(ctx, id)
	if err != nil {
		return sa.Session{}, err
	}
	seen := map[string]bool{s.ID: true}
	for s.ParentID != "" {
		if task, err := isTask(ctx, st, s.ID); err != nil || task {
			return s, err
		}
		if seen[s.ParentID] {
			return sa.Session{}, fmt.Errorf("%w: session %s is its own ancestor", sa.ErrCorrupt, s.ParentID)
		}
		seen[s.ParentID] = true
		parent, err := st.Session(ctx, s.ParentID)
		if errors.Is(err, sa.ErrNotFound) {
			break // a deleted parent: s starts its own tree
		}
		if err != nil {
			return sa.Session{}, err
		}
		s = parent
	}
	return s, nil
}

// isTask reports whether a session is the session of a background task.
func isTask(ctx context.Context, st treeStore, id string) (bool, error) {
	_, err := st.Task(ctx, id)
	switch {
	case errors.Is(err, sa.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("look up task %s: %w", sa.ShortID(id), err)
	}
	return true, nil
}

// find returns the node of a session in the tree, or nil.
func (n *node) find(id string) *node {
	if n.session.ID == id {
		return n
	}
	for _, c := range n.children {
		if f := c.find(id); f != nil {
			return f
		}
	}
	return nil
}

// walk calls fn on n and its descendants, parents first.
func (n *node) walk(fn func(*node)) {
	fn(n)
	for _, c := range n.children {
		c.walk(fn)
	}
}

// LatestSession returns the session that was active last: the one with
// the newest message of its own (message ids order everything). A fork
// with no message of its own counts as active at its fork point, so that
// a fresh fork wins over its parent; among equals the newer session wins.
// The sessions of background tasks are not chats and are left out. It
// reports sa.ErrNotFound when there is no session at all.
func LatestSession(ctx context.Context, st treeStore) (sa.Session, error) {
	list, err := st.ListSessions(ctx, sa.SessionFilter{})
	if err != nil {
		return sa.Session{}, fmt.Errorf("list sessions: %w", err)
	}
	activity := func(s sa.SessionSummary) int64 {
		if s.LastMessageID > 0 {
			return s.LastMessageID
		}
		return s.ForkMessageID
	}
	// The list is newest first; a stable sort keeps the newest first among
	// equals.
	slices.SortStableFunc(list, func(a, b sa.SessionSummary) int { return cmp.Compare(activity(b), activity(a)) })
	for _, s := range list {
		task, err := isTask(ctx, st, s.ID)
		if err != nil {
			return sa.Session{}, err
		}
		if !task {
			return s.Session, nil
		}
	}
	return sa.Session{}, fmt.Errorf("%w: there is no session to continue", sa.ErrNotFound)
}
