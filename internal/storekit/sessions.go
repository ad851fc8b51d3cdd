package storekit

import (
	"cmp"
	"context"
	"fmt"
	"time"

	sa "github.com/superagents/superagents"
)

// SessionTx is what a store's write transaction offers the writes of
// sessions, each in the store's SQL.
type SessionTx interface {
	// InsertSession writes a session's row and records its creation.
	InsertSession(ctx context.Context, sess sa.Session) error
	// InsertMessages appends messages (checked by ValidateMessages) to a
	// session, recording each with the id of the task they are about (""
	// for none), and returns them as stored.
	InsertMessages(ctx context.Context, sessionID, taskID string, msgs []sa.Message) ([]sa.Message, error)
}

// createSession creates in tx root session sess with its first messages.
func createSession(ctx context.Context, tx SessionTx, sess sa.Session, msgs []sa.Message) (sa.Session, error) {
	if !Storable(sess.ID) {
		return sa.Session{}, fmt.Errorf("%w: session id %q", sa.ErrInvalid, sess.ID)
	}
	if err := tx.InsertSession(ctx, sess); err != nil {
		return sa.Session{}, err
	}
	if _, err := tx.InsertMessages(ctx, sess.ID, "", msgs); err != nil {
		return sa.Session{}, err
	}
	return sess, nil
}

// ForkChild is the row of session childID forked from parent at
// forkPoint (the parent's last own message): agent and model are the
// parent's unless opts names others.
func ForkChild(childID string, parent sa.Session, forkPoint int64, opts sa.ForkOptions, now time.Time) sa.Session {
	return sa.Session{
		ID:            childID,
		ParentID:      parent.ID,
		ForkMessageID: forkPoint,
		Agent:         cmp.Or(opts.Agent, parent.Agent),
		Model:         cmp.Or(opts.Model, parent.Model),
		Title:         opts.Title,
		Origin:        cmp.Or(opts.Origin, sa.OriginFork),
		CreatedAt:     now,
	}
}

// ForkTx is what a store's write transaction offers Fork.
type ForkTx interface {
	SessionTx
	// LockParent reads a live session, holding it (where the store locks
	// rows) so that its last message stays the last until the
	// transaction ends.
	LockParent(ctx context.Context, id string) (sa.Session, error)
	// LastMessageID is a session's last own message id, 0 for none.
	LastMessageID(ctx context.Context, sessionID string) (int64, error)
}

// fork creates in tx session childID, a child of live session parentID at
// its last message, with its first messages (opts.Messages).
func fork(ctx context.Context, tx ForkTx, childID, parentID string, opts sa.ForkOptions, now time.Time) (sa.Session, error) {
	parent, err := tx.LockParent(ctx, parentID)
	if err != nil {
		return sa.Session{}, err
	}
	forkPoint, err := tx.LastMessageID(ctx, parent.ID)
	if err != nil {
		return sa.Session{}, err
	}
	child := ForkChild(childID, parent, forkPoint, opts, now)
	if err := tx.InsertSession(ctx, child); err != nil {
		return sa.Session{}, err
	}
	if _, err := tx.InsertMessages(ctx, child.ID, "", opts.Messages); err != nil {
		return sa.Session{}, err
	}
	return child, nil
}
