package storekit

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"

	sa "github.com/superagents/superagents"
)

// Reader runs, on a store's connection or one of its snapshots, the
// queries both stores share. Their text numbers its parameters ($1,
// $2...), which SQLite and PostgreSQL both read, each first used in
// order (SQLite numbers named parameters as they first appear). Ids are
// text every store holds alike (see Storable); a column PostgreSQL keeps
// as raw bytes (bytea: names and text from outside, which may be any
// bytes) goes in through Raw and comes out through RawDest.
type Reader interface {
	// ScanShared scans the first row of a query into dest: sql.ErrNoRows
	// when there is none.
	ScanShared(ctx context.Context, query string, args []any, dest ...any) error
	// EachShared scans each row of a query into dest and calls fn after
	// each.
	EachShared(ctx context.Context, query string, args []any, dest []any, fn func() error) error
	// Raw is the argument for a raw-bytes column.
	Raw(s string) any
	// RawDest is the scan destination of a raw-bytes column into p.
	RawDest(p *string) any
}

// Conn runs, in a store's write transaction, the statements both stores
// share (see Reader).
type Conn interface {
	Reader
	// ExecShared runs a statement and returns how many rows it changed.
	ExecShared(ctx context.Context, query string, args ...any) (int64, error)
}

// SharedTx is the part of a store's write transaction whose SQL is the
// same on both stores, over the transaction's Conn: a store's write
// transaction embeds it.
type SharedTx struct{ c Conn }

// NewSharedTx is the shared part of write transaction c.
func NewSharedTx(c Conn) SharedTx { return SharedTx{c: c} }

// exists reports whether a query finds a row.
func (tx SharedTx) exists(ctx context.Context, query string, args ...any) (bool, error) {
	var one int
	return Found(tx.c.ScanShared(ctx, query, args, &one), sql.ErrNoRows)
}

// IsTask reports whether id is a task's.
func (tx SharedTx) IsTask(ctx context.Context, id string) (bool, error) {
	return tx.exists(ctx, `SELECT 1 FROM tasks WHERE id = $1`, id)
}

// RunnerRegistered reports whether a runner is registered.
func (tx SharedTx) RunnerRegistered(ctx context.Context, id string) (bool, error) {
	return tx.exists(ctx, `SELECT 1 FROM runners WHERE id = $1`, id)
}

// ReleaseTaskLease gives back the lease a task's run holds on its
// session.
func (tx SharedTx) ReleaseTaskLease(ctx context.Context, taskID string) error {
	_, err := tx.c.ExecShared(ctx, `DELETE FROM turn_leases WHERE session_id = $1 AND task_id = $1`, taskID)
	return err
}

// LastMessageID returns a session's last own message id, 0 when it has
// none.
func (tx SharedTx) LastMessageID(ctx context.Context, sessionID string) (int64, error) {
	var last int64
	err := tx.c.ScanShared(ctx, `SELECT COALESCE(MAX(id), 0) FROM messages WHERE session_id = $1`, []any{sessionID}, &last)
	if err != nil {
		return 0, fmt.Errorf("last message of %s: %w", sessionID, err)
	}
	return last, nil
}

// SessionRow reads a session's parent and whether it is deleted.
func (tx SharedTx) SessionRow(ctx context.Context, id string) (string, bool, error) {
	var parent *string
	var deleted *int64
	err := tx.c.ScanShared(ctx, `SELECT parent_id, deleted_at FROM sessions WHERE id = $1`, []any{id}, &parent, &deleted)
	if err != nil || parent == nil {
		return "", deleted != nil, err
	}
	return *parent, deleted != nil, nil
}

// Children counts a session's children and gives their latest fork point.
func (tx SharedTx) Children(ctx context.Context, id string) (int, int64, error) {
	var n int
	var last *int64
	err := tx.c.ScanShared(ctx, `SELECT COUNT(*), MAX(fork_message_id) FROM sessions WHERE parent_id = $1`, []any{id}, &n, &last)
	if err != nil || last == nil {
		return n, 0, err
	}
	return n, *last, nil
}

// DeleteMessages deletes a session's own messages after a message id.
func (tx SharedTx) DeleteMessages(ctx context.Context, id string, after int64) error {
	_, err := tx.c.ExecShared(ctx, `DELETE FROM messages WHERE session_id = $1 AND id > $2`, id, after)
	return err
}

// DeleteSessionRow deletes a session's row.
func (tx SharedTx) DeleteSessionRow(ctx context.Context, id string) error {
	_, err := tx.c.ExecShared(ctx, `DELETE FROM sessions WHERE id = $1`, id)
	return err
}

// PutLease writes a lease: replacing the one on its session, or (for a
// task's run on its new session, which none holds) as the first.
func (tx SharedTx) PutLease(ctx context.Context, l sa.TurnLease, replace bool) error {
	query := `INSERT INTO turn_leases (session_id, runner_id, holder, task_id, acquired_at) VALUES ($1, $2, $3, $4, $5)`
	if replace {
		query += ` ON CONFLICT (session_id) DO UPDATE SET runner_id = excluded.runner_id,
		holder = excluded.holder, task_id = excluded.task_id, acquired_at = excluded.acquired_at`
	}
	_, err := tx.c.ExecShared(ctx, query, l.SessionID, l.RunnerID, tx.c.Raw(l.Holder), l.TaskID, l.AcquiredAt.UnixNano())
	return err
}

// InsertInput stores a request of the task's run number run, unless its
// task asked its key already.
func (tx SharedTx) InsertInput(ctx context.Context, r sa.InputRequest, run int) (bool, error) {
	n, err := tx.c.ExecShared(ctx, `INSERT INTO task_inputs (task_id, key, message, request, created_at, task_run)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (task_id, key) DO NOTHING`,
		r.TaskID, tx.c.Raw(r.Key), tx.c.Raw(r.Message), tx.c.Raw(string(r.Request)), r.CreatedAt.UnixNano(), run)
	return n > 0, err
}

// StoreAnswer writes the answer to one request, answered at now.
func (tx SharedTx) StoreAnswer(ctx context.Context, taskID, key string, answer json.RawMessage, now int64) error {
	_, err := tx.c.ExecShared(ctx, `UPDATE task_inputs SET response = $1, answered_at = $2 WHERE task_id = $3 AND key = $4`,
		tx.c.Raw(string(answer)), now, taskID, tx.c.Raw(key))
	return err
}

// InsertRunner records a runner (checked by CheckRunner) started now,
// on this machine unless it names its host.
func (tx SharedTx) InsertRunner(ctx context.Context, r sa.Runner, now int64) error {
	if r.Host == "" {
		r.Host, _ = os.Hostname()
	}
	_, err := tx.c.ExecShared(ctx, `INSERT INTO runners (id, host, pid, started_at, seen_at) VALUES ($1, $2, $3, $4, $4)`,
		r.ID, tx.c.Raw(r.Host), r.PID, now)
	return err
}

// MarkRunnerSeen marks a runner seen now: ErrNotFound when it is not
// registered.
func (tx SharedTx) MarkRunnerSeen(ctx context.Context, id string, now int64) error {
	if !Storable(id) {
		return fmt.Errorf("runner %s: %w", id, sa.ErrNotFound)
	}
	n, err := tx.c.ExecShared(ctx, `UPDATE runners SET seen_at = $1 WHERE id = $2`, now, id)
	if err != nil {
		return fmt.Errorf("touch runner: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("runner %s: %w", id, sa.ErrNotFound)
	}
	return nil
}

// DeleteRunner deletes a runner and the turn leases it holds.
func (tx SharedTx) DeleteRunner(ctx context.Context, id string) error {
	if _, err := tx.c.ExecShared(ctx, `DELETE FROM turn_leases WHERE runner_id = $1`, id); err != nil {
		return err
	}
	_, err := tx.c.ExecShared(ctx, `DELETE FROM runners WHERE id = $1`, id)
	return err
}
