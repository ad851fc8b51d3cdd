package storekit

import (
	"context"
	"database/sql"
	"fmt"
)

// Conn runs, in a store's write transaction, the statements both stores
// share. Their text numbers its parameters ($1, $2...), which SQLite and
// PostgreSQL both read, and their arguments and columns are ids (text
// every store holds alike, see Storable) and integers.
type Conn interface {
	// ExecShared runs a statement.
	ExecShared(ctx context.Context, query string, args ...any) error
	// ScanShared scans the first row of a query into dest: sql.ErrNoRows
	// when there is none.
	ScanShared(ctx context.Context, query string, args []any, dest ...any) error
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
	return tx.c.ExecShared(ctx, `DELETE FROM turn_leases WHERE session_id = $1 AND task_id = $1`, taskID)
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
	return tx.c.ExecShared(ctx, `DELETE FROM messages WHERE session_id = $1 AND id > $2`, id, after)
}

// DeleteSessionRow deletes a session's row.
func (tx SharedTx) DeleteSessionRow(ctx context.Context, id string) error {
	return tx.c.ExecShared(ctx, `DELETE FROM sessions WHERE id = $1`, id)
}
