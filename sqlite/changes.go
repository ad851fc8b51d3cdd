package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/storekit"
)

// keepChanges is how many entries the change log keeps; older ones are
// pruned as new ones are written.
const keepChanges = 50_000

// writeTx is one write transaction. It records changes in the log and
// remembers to tell followers once it commits.
type writeTx struct {
	cachedTx
	storekit.SharedTx // over the transaction itself
	// ctx is the transaction's: the statements of a write use it, not the
	// one their caller passes (see inWrite).
	ctx     context.Context
	now     time.Time
	changed bool
}

func (tx *writeTx) QueryContext(_ context.Context, query string, args ...any) (*sql.Rows, error) {
	return tx.cachedTx.QueryContext(tx.ctx, query, args...)
}

func (tx *writeTx) QueryRowContext(_ context.Context, query string, args ...any) *sql.Row {
	return tx.cachedTx.QueryRowContext(tx.ctx, query, args...)
}

func (tx *writeTx) ExecContext(_ context.Context, query string, args ...any) (sql.Result, error) {
	return tx.cachedTx.ExecContext(tx.ctx, query, args...)
}

// insert runs an INSERT of one row and returns the row's id. Not
// RETURNING, which makes the insert a query whose result rows are
// scanned and closed, for one integer. The id is the statement's own
// even when a trigger inserted rows too: SQLite gives back the last
// insert's id once a trigger ends.
func (tx *writeTx) insert(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// record adds an entry to the change log: what changed, for which session
// and task, and the changed value itself.
func (tx *writeTx) record(ctx context.Context, kind sa.ChangeKind, sessionID, taskID string, data any) error {
	var (
		raw []byte
		err error
	)
	if m, ok := data.(storekit.EncodedMessage); ok {
		// Its own encoding is compact already: json.Marshal would only
		// scan it again, parts and all.
		raw, err = m.MarshalJSON()
	} else {
		raw, err = json.Marshal(data)
	}
	if err != nil {
		return fmt.Errorf("encode change: %w", err)
	}
	id, err := tx.insert(ctx, `INSERT INTO changes (kind, session_id, task_id, data, created_at)
		VALUES (?, ?, ?, ?, ?)`, kind, sessionID, taskID, raw, nanos(tx.now))
	if err != nil {
		return fmt.Errorf("record change: %w", err)
	}
	if id%1000 == 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM changes WHERE id <= ?`, id-keepChanges); err != nil {
			return fmt.Errorf("prune changes: %w", err)
		}
	}
	tx.changed = true
	return nil
}

// Changed returns a channel that receives a value after a write that
// recorded changes (signals merge: one value may stand for many writes).
func (s *Store) Changed() <-chan struct{} { return s.changed }

func (s *Store) signal() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// Changes returns the change log after an ID, oldest first.
func (s *Store) Changes(ctx context.Context, after int64, limit int) ([]sa.Change, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT id, kind, session_id, task_id, data, created_at
		FROM changes WHERE id > ? ORDER BY id LIMIT `+limitParam, after, storekit.ChangesLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("read changes: %w", err)
	}
	defer rows.Close()
	var out []sa.Change
	for rows.Next() {
		var c sa.Change
		var data []byte
		var created int64
		if err := rows.Scan(&c.ID, &c.Kind, &c.SessionID, &c.TaskID, &data, &created); err != nil {
			return nil, fmt.Errorf("read changes: %w", err)
		}
		c.Data, c.CreatedAt = data, fromNanos(created)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read changes: %w", err)
	}
	return out, nil
}

// LastChangeID returns the newest change's ID, 0 when there is none.
func (s *Store) LastChangeID(ctx context.Context) (int64, error) {
	var id int64
	if err := s.reader.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM changes`).Scan(&id); err != nil {
		return 0, fmt.Errorf("last change: %w", err)
	}
	return id, nil
}

// RegisterRunner records a runner.
func (s *Store) RegisterRunner(ctx context.Context, r sa.Runner) error {
	if err := storekit.CheckRunner(r); err != nil {
		return err
	}
	now := s.now()
	if r.Host == "" {
		r.Host, _ = os.Hostname()
	}
	err := s.inWrite(ctx, func(tx *writeTx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO runners (id, host, pid, started_at, seen_at) VALUES (?, ?, ?, ?, ?)`,
			r.ID, r.Host, r.PID, nanos(now), nanos(now))
		return err
	})
	if err != nil {
		return fmt.Errorf("register runner: %w", err)
	}
	return nil
}

// TouchRunner marks a runner alive now.
func (s *Store) TouchRunner(ctx context.Context, id string) error {
	return s.inWrite(ctx, func(tx *writeTx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runners SET seen_at = ? WHERE id = ?`, nanos(tx.now), id)
		if err != nil {
			return fmt.Errorf("touch runner: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("runner %s: %w", id, sa.ErrNotFound)
		}
		return nil
	})
}

// RemoveRunner deletes a runner and the turn leases it holds.
func (s *Store) RemoveRunner(ctx context.Context, id string) error {
	err := s.inWrite(ctx, func(tx *writeTx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM turn_leases WHERE runner_id = ?`, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM runners WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("remove runner: %w", err)
	}
	return nil
}

// Runners lists the registered runners.
func (s *Store) Runners(ctx context.Context) ([]sa.Runner, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT id, host, pid, started_at, seen_at FROM runners ORDER BY started_at`)
	if err != nil {
		return nil, fmt.Errorf("list runners: %w", err)
	}
	defer rows.Close()
	var out []sa.Runner
	for rows.Next() {
		var r sa.Runner
		var started, seen int64
		if err := rows.Scan(&r.ID, &r.Host, &r.PID, &started, &seen); err != nil {
			return nil, fmt.Errorf("list runners: %w", err)
		}
		r.StartedAt, r.SeenAt = fromNanos(started), fromNanos(seen)
		out = append(out, r)
	}
	return out, rows.Err()
}

// Now is the transaction's time.
func (tx *writeTx) Now() time.Time { return tx.now }

// ExecShared runs a statement shared with the other store.
func (tx *writeTx) ExecShared(ctx context.Context, query string, args ...any) error {
	_, err := tx.ExecContext(ctx, query, args...)
	return err
}

// ScanShared scans the row of a query shared with the other store.
func (tx *writeTx) ScanShared(ctx context.Context, query string, args []any, dest ...any) error {
	return tx.QueryRowContext(ctx, query, args...).Scan(dest...)
}
