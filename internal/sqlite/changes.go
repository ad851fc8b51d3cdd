package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
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

// Now is the transaction's time.
func (tx *writeTx) Now() time.Time { return tx.now }
