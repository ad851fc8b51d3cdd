package storekit

import (
	"context"
	"fmt"
	"time"

	sa "github.com/superagents/superagents"
)

// Clock is a write transaction's time, one for all it writes.
type Clock interface{ Now() time.Time }

// Write runs fn in one write transaction of a store.
type Write[T any] func(ctx context.Context, fn func(tx T) error) error

// WriteTx is a store's write transaction: every part the shared rules
// use, each in the store's SQL and locking.
type WriteTx interface {
	Clock
	LeaseTx
	DeleteTx
	ForkTx
	FinishTx
	HostTx
	InputTx
	InboxTx
	RunnerTx
}

// RunnerTx writes runners: SharedTx's statements, which every write
// transaction embeds.
type RunnerTx interface {
	InsertRunner(ctx context.Context, r sa.Runner, now int64) error
	MarkRunnerSeen(ctx context.Context, id string, now int64) error
	DeleteRunner(ctx context.Context, id string) error
}

// Ops are the store operations whose every step is a shared rule: each
// checks its input, runs its rule in one write transaction of the store
// (write: the store's own, with its SQL, locking and batching) and words
// its error. A store embeds them, so that each is written once.
type Ops[T WriteTx] struct {
	write Write[T]
	newID func() string
}

// NewOps are the operations of a store that writes with write and names
// new sessions with newID.
func NewOps[T WriteTx](write Write[T], newID func() string) Ops[T] {
	return Ops[T]{write: write, newID: newID}
}

// AcquireTurn takes a session's turn lease (see acquireTurn).
func (o Ops[T]) AcquireTurn(ctx context.Context, l sa.TurnLease) (sa.TurnLease, error) {
	if err := CheckTurnLease(l); err != nil {
		return sa.TurnLease{}, err
	}
	var taken sa.TurnLease
	err := o.write(ctx, func(tx T) (err error) {
		taken, err = acquireTurn(ctx, tx, l, tx.Now())
		return err
	})
	return taken, TurnError(l.SessionID, err)
}

// DeleteSession deletes a live session (see deleteSession).
func (o Ops[T]) DeleteSession(ctx context.Context, id string) error {
	err := o.write(ctx, func(tx T) error {
		return deleteSession(ctx, tx, id, tx.Now())
	})
	if err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	return nil
}

// CreateSession creates a root session with its first messages.
func (o Ops[T]) CreateSession(ctx context.Context, ns sa.NewSession) (sa.Session, error) {
	if err := ValidateMessages(ns.Messages); err != nil {
		return sa.Session{}, err
	}
	var sess sa.Session
	err := o.write(ctx, func(tx T) (err error) {
		sess, err = createSession(ctx, tx, NewSession(o.newID(), ns, tx.Now()), ns.Messages)
		return err
	})
	if err != nil {
		return sa.Session{}, fmt.Errorf("create session: %w", err)
	}
	return sess, nil
}

// Fork creates a child of a live session (see fork).
func (o Ops[T]) Fork(ctx context.Context, parentID string, opts sa.ForkOptions) (sa.Session, error) {
	if err := ValidateMessages(opts.Messages); err != nil {
		return sa.Session{}, err
	}
	var child sa.Session
	err := o.write(ctx, func(tx T) (err error) {
		child, err = fork(ctx, tx, o.newID(), parentID, opts, tx.Now())
		return err
	})
	if err != nil {
		return sa.Session{}, fmt.Errorf("fork session %s: %w", parentID, err)
	}
	return child, nil
}

// FinishTask ends a task and stores its notification (see finishTask).
func (o Ops[T]) FinishTask(ctx context.Context, id string, change func(*sa.Task) error, note func(sa.Task, sa.BatchState) sa.Message) (sa.Task, sa.Message, error) {
	var (
		ended  sa.Task
		stored sa.Message
	)
	err := o.write(ctx, func(tx T) (err error) {
		ended, stored, err = finishTask(ctx, tx, id, change, note)
		return err
	})
	if err != nil {
		return sa.Task{}, sa.Message{}, fmt.Errorf("finish task %s: %w", id, err)
	}
	return ended, stored, nil
}

// CreateHostSession creates a session from a host's session, with its
// first messages and link (see createHostSession).
func (o Ops[T]) CreateHostSession(ctx context.Context, ns sa.NewSession, link sa.HostLink) (sa.Session, sa.HostLink, error) {
	if err := CheckHostLink(link); err != nil {
		return sa.Session{}, sa.HostLink{}, err
	}
	if err := ValidateMessages(ns.Messages); err != nil {
		return sa.Session{}, sa.HostLink{}, err
	}
	var sess sa.Session
	err := o.write(ctx, func(tx T) (err error) {
		sess, link, err = createHostSession(ctx, tx, o.newID(), ns, link, tx.Now())
		return err
	})
	if err != nil {
		return sa.Session{}, sa.HostLink{}, fmt.Errorf("create session from %s: %w", link.Host, err)
	}
	return sess, link, nil
}

// AppendHost appends messages to a linked session and moves its position
// (see appendHost).
func (o Ops[T]) AppendHost(ctx context.Context, link sa.HostLink, from string, msgs ...sa.Message) ([]sa.Message, sa.HostLink, error) {
	if err := CheckHostLink(link); err != nil {
		return nil, sa.HostLink{}, err
	}
	if err := ValidateMessages(msgs); err != nil {
		return nil, sa.HostLink{}, err
	}
	var stored []sa.Message
	err := o.write(ctx, func(tx T) (err error) {
		stored, link, err = appendHost(ctx, tx, link, from, msgs, tx.Now())
		return err
	})
	if err != nil {
		return nil, sa.HostLink{}, fmt.Errorf("append to session from %s: %w", link.Host, err)
	}
	return stored, link, nil
}

// MoveNotices moves the notices delivered of a host session's link (see
// moveNotices).
func (o Ops[T]) MoveNotices(ctx context.Context, host, hostSessionID string, upTo int64) (sa.HostLink, error) {
	var link sa.HostLink
	err := o.write(ctx, func(tx T) (err error) {
		link, err = moveNotices(ctx, tx, host, hostSessionID, upTo, tx.Now())
		return err
	})
	if err != nil {
		return sa.HostLink{}, fmt.Errorf("move the notices of %s session %s: %w", host, hostSessionID, err)
	}
	return link, nil
}

// Append stores messages at the end of a live session, which it holds
// (LockLive) while they are written.
func (o Ops[T]) Append(ctx context.Context, sessionID string, msgs ...sa.Message) ([]sa.Message, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	if err := ValidateMessages(msgs); err != nil {
		return nil, err
	}
	var stored []sa.Message
	err := o.write(ctx, func(tx T) (err error) {
		if err := tx.LockLive(ctx, sessionID); err != nil {
			return err
		}
		stored, err = tx.InsertMessages(ctx, sessionID, "", msgs)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("append to session %s: %w", sessionID, err)
	}
	return stored, nil
}

// RegisterRunner records a runner.
func (o Ops[T]) RegisterRunner(ctx context.Context, r sa.Runner) error {
	if err := CheckRunner(r); err != nil {
		return err
	}
	err := o.write(ctx, func(tx T) error {
		return tx.InsertRunner(ctx, r, tx.Now().UnixNano())
	})
	if err != nil {
		return fmt.Errorf("register runner: %w", err)
	}
	return nil
}

// TouchRunner marks a runner alive now.
func (o Ops[T]) TouchRunner(ctx context.Context, id string) error {
	return o.write(ctx, func(tx T) error {
		return tx.MarkRunnerSeen(ctx, id, tx.Now().UnixNano())
	})
}

// RemoveRunner deletes a runner and the turn leases it holds, in one
// transaction.
func (o Ops[T]) RemoveRunner(ctx context.Context, id string) error {
	if !Storable(id) {
		return nil // no such runner can be stored
	}
	err := o.write(ctx, func(tx T) error {
		return tx.DeleteRunner(ctx, id)
	})
	if err != nil {
		return fmt.Errorf("remove runner: %w", err)
	}
	return nil
}
