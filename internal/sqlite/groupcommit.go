package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"github.com/superagents/superagents/internal/storekit"
)

// Group commit: writes that arrive together share one transaction.
//
// Each commit in WAL mode appends the pages it changed to the log and
// takes the shared-memory locks, and each reader whose snapshot it made
// old drops its page cache at its next transaction. Tasks running at once
// each write a few small transactions (their start, their answer, their
// end), mostly to the same pages: the tails of the change log, of the
// messages and of the tasks. So a write that arrives while another
// commits waits, and then runs with every other write that waited in the
// next transaction, each inside its own savepoint: a write that fails is
// rolled back alone, the others commit. No caller hears back before its
// transaction has committed, and the writes keep the order they queued
// in.
//
// The batches are committed by a goroutine that runs while writes wait,
// started by the first write that finds none running, and gone once none
// is left (so there is nothing to stop). Handing each batch to one of the
// waiting callers instead left the writer idle until the scheduler ran
// that caller: with many tasks running, for as long as a batch took.

// maxBatch bounds a batch, and so how long its first write waits.
const maxBatch = 128

// writeRequest is a write waiting for its transaction.
type writeRequest struct {
	ctx context.Context
	fn  func(tx *writeTx) error
	err error
	// panicked holds what fn panicked with, to panic again in its caller.
	panicked any
	done     chan struct{} // closed once err is final
}

// writeQueue holds the writes waiting for a transaction.
type writeQueue struct {
	mu      sync.Mutex
	pending []*writeRequest
	busy    bool // the committer runs
}

// inWrite runs fn in a write transaction, committed when fn returns nil;
// then followers of the change log are told if fn recorded changes. fn
// may share its transaction with other writes, within a savepoint of its
// own, so that its error undoes its writes only. fn's statements run to
// their end once it started, even if ctx is cancelled meanwhile:
// interrupting one would roll back the other writes of its transaction.
func (s *Store) inWrite(ctx context.Context, fn func(tx *writeTx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	req := &writeRequest{ctx: ctx, fn: fn, done: make(chan struct{})}
	q := &s.writes
	q.mu.Lock()
	q.pending = append(q.pending, req)
	if !q.busy {
		q.busy = true
		go s.commitWaiting()
	}
	q.mu.Unlock()
	<-req.done
	if req.panicked != nil {
		panic(req.panicked)
	}
	return req.err
}

// commitWaiting commits the waiting writes, the oldest first, a batch at
// a time, until none is left.
func (s *Store) commitWaiting() {
	q := &s.writes
	for {
		q.mu.Lock()
		if len(q.pending) == 0 {
			q.busy = false
			q.mu.Unlock()
			return
		}
		n := min(len(q.pending), maxBatch)
		batch := make([]*writeRequest, n)
		copy(batch, q.pending)
		q.pending = append(q.pending[:0], q.pending[n:]...)
		q.mu.Unlock()
		s.commitBatch(batch)
	}
}

// commitBatch runs a batch's writes in one transaction and tells each
// caller how its write ended.
func (s *Store) commitBatch(batch []*writeRequest) {
	defer func() {
		for _, r := range batch {
			close(r.done)
		}
	}()
	// The transaction is no one caller's: a caller that gives up does not
	// end it for the others.
	ctx := context.Background()
	failAll := func(err error) {
		for _, r := range batch {
			if r.err == nil && r.panicked == nil {
				r.err = err
			}
		}
	}
	sqlTx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		failAll(fmt.Errorf("begin: %w", err))
		return
	}
	kept, changed, err := s.runBatch(ctx, sqlTx, batch)
	if err != nil {
		_ = sqlTx.Rollback()
		failAll(err)
		return
	}
	if len(kept) == 0 {
		_ = sqlTx.Rollback()
		return
	}
	if err := sqlTx.Commit(); err != nil {
		for _, r := range kept {
			r.err = fmt.Errorf("commit: %w", err)
		}
		return
	}
	s.writeStmts.warm(ctx)
	if changed {
		s.changed.Send()
	}
}

// runBatch runs a batch's writes in sqlTx, each in a savepoint of its own
// when there are several, and returns those that succeeded and whether
// they recorded changes. An error means the transaction is lost, and
// with it every write.
func (s *Store) runBatch(ctx context.Context, sqlTx *sql.Tx, batch []*writeRequest) (kept []*writeRequest, changed bool, err error) {
	// One write alone needs no savepoint: its error rolls back the whole
	// transaction.
	savepoints := len(batch) > 1
	stmts := newCachedTx(sqlTx, s.writeStmts) // shared: each statement is bound to the transaction once
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.err = err // given up before it started
			continue
		}
		tx := &writeTx{cachedTx: stmts, ctx: ctx, now: s.now().UTC()}
		tx.SharedTx = storekit.NewSharedTx(shared{tx})
		if savepoints {
			if _, err := tx.ExecContext(ctx, `SAVEPOINT one_write`); err != nil {
				return nil, false, fmt.Errorf("begin a write: %w", err)
			}
		}
		if runWrite(r, tx) {
			if savepoints {
				if _, err := tx.ExecContext(ctx, `RELEASE one_write`); err != nil {
					return nil, false, fmt.Errorf("end a write: %w", err)
				}
			}
			kept = append(kept, r)
			changed = changed || tx.changed
			continue
		}
		if savepoints {
			// Undo this write alone. If even that fails, the transaction
			// is lost (an I/O error, say), and with it the others' writes.
			_, err := tx.ExecContext(ctx, `ROLLBACK TO one_write`)
			if err == nil {
				_, err = tx.ExecContext(ctx, `RELEASE one_write`)
			}
			if err != nil {
				return nil, false, fmt.Errorf("write abandoned with another that failed: %w", err)
			}
		}
	}
	return kept, changed, nil
}

// runWrite runs one write's fn, and reports whether it succeeded. A panic
// is kept for its caller, and undoes the write as an error would.
func runWrite(r *writeRequest, tx *writeTx) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			r.panicked = p
			ok = false
		}
	}()
	r.err = r.fn(tx)
	return r.err == nil
}
