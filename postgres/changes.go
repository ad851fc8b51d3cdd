package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/storekit"
)

// keepChanges is how many entries the change log keeps; older ones are
// pruned as new ones are written (every thousandth id).
const keepChanges = 50_000

// notifyChannel is the LISTEN/NOTIFY channel every write that records
// changes notifies at commit; the payload is the store's schema, so
// stores in other schemas of the database ignore it.
const notifyChannel = "superagents_changes"

// listenerName is the application_name of the listening connection, so
// it can be told apart in pg_stat_activity.
const listenerName = "superagents-listener"

// pruneChanges, the tail of a statement that inserted change c, prunes at
// every thousandth id the entries older than keepChanges ($1).
const pruneChanges = `p AS (DELETE FROM changes WHERE (SELECT id FROM c) % 1000 = 0 AND id <= (SELECT id FROM c) - $1)`

// insertChange adds an entry to the change log, pruning old ones.
const insertChange = `WITH c AS (INSERT INTO changes (kind, session_id, task_id, data, created_at)
		VALUES ($2, $3, $4, $5, $6) RETURNING id), ` + pruneChanges + ` SELECT id FROM c`

// record adds an entry to the change log: what changed, for which session
// and task, and the changed value itself.
func (tx *writeTx) record(ctx context.Context, kind sa.ChangeKind, sessionID, taskID string, data any) error {
	return tx.recordAfter(ctx, &pgx.Batch{}, kind, sessionID, taskID, data)
}

// recordAfter records a change after the statements queued in b, in the
// same round trip.
func (tx *writeTx) recordAfter(ctx context.Context, b *pgx.Batch, kind sa.ChangeKind, sessionID, taskID string, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode change: %w", err)
	}
	b.Queue(insertChange, keepChanges, string(kind), sessionID, taskID, string(raw), nanos(tx.now))
	res, err := tx.send(ctx, b)
	if err == nil {
		err = res.Close()
	}
	if err != nil {
		return fmt.Errorf("record change: %w", err)
	}
	return nil
}

// Changed returns a channel that receives a value after a write that
// recorded changes, by this process or (through LISTEN/NOTIFY) any other
// on the same database and schema. Signals merge: one value may stand for
// many writes. While the listening connection is down, followers rely on
// their slow polling; it is reopened, and a signal sent, when it is back.
func (s *Store) Changed() <-chan struct{} { return s.changed }

func (s *Store) signal() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// listen keeps a connection that LISTENs for other processes' changes
// until ctx ends, reconnecting after failures.
func (s *Store) listen(ctx context.Context) {
	defer s.listened.Done()
	backoff := 100 * time.Millisecond
	for {
		err := s.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		_ = err // the connection failed: try again, more slowly each time
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

// listenOnce opens a connection, LISTENs and forwards notifications for
// this store's schema until the connection fails or ctx ends.
func (s *Store) listenOnce(ctx context.Context) error {
	cfg := s.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = listenerName
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(closeCtx) //nolint:errcheck // nothing to do about it
	}()
	if _, err := conn.Exec(ctx, `LISTEN `+notifyChannel); err != nil {
		return err
	}
	s.listenerPID.Store(conn.PgConn().PID())
	// Changes may have been written while nobody listened.
	s.signal()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if n.Payload == s.schema {
			s.signal()
		}
	}
}

// Changes returns the change log after an ID, oldest first.
func (s *Store) Changes(ctx context.Context, after int64, limit int) ([]sa.Change, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, kind, session_id, task_id, data, created_at
		FROM changes WHERE id > $1 ORDER BY id LIMIT $2`, after, storekit.ChangesLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("read changes: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (sa.Change, error) {
		var c sa.Change
		var data string
		var created int64
		err := r.Scan(&c.ID, &c.Kind, &c.SessionID, &c.TaskID, &data, &created)
		c.Data, c.CreatedAt = json.RawMessage(data), fromNanos(created)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("read changes: %w", err)
	}
	return out, nil
}

// LastChangeID returns the newest change's ID, 0 when there is none.
func (s *Store) LastChangeID(ctx context.Context) (int64, error) {
	var id int64
	if err := s.pool.QueryRow(ctx, `SELECT COALESCE(MAX(id), 0) FROM changes`).Scan(&id); err != nil {
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
	_, err := s.pool.Exec(ctx, `INSERT INTO runners (id, host, pid, started_at, seen_at) VALUES ($1, $2, $3, $4, $5)`,
		r.ID, bin(r.Host), r.PID, nanos(now), nanos(now))
	if err != nil {
		return fmt.Errorf("register runner: %w", err)
	}
	return nil
}

// TouchRunner marks a runner alive now.
func (s *Store) TouchRunner(ctx context.Context, id string) error {
	if !storekit.Storable(id) {
		return fmt.Errorf("runner %s: %w", id, sa.ErrNotFound)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE runners SET seen_at = $1 WHERE id = $2`, nanos(s.now()), id)
	if err != nil {
		return fmt.Errorf("touch runner: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("runner %s: %w", id, sa.ErrNotFound)
	}
	return nil
}

// RemoveRunner deletes a runner and the turn leases it holds, in one
// transaction.
func (s *Store) RemoveRunner(ctx context.Context, id string) error {
	if !storekit.Storable(id) {
		return nil
	}
	err := s.inWrite(ctx, func(tx *writeTx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM turn_leases WHERE runner_id = $1`, id); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM runners WHERE id = $1`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("remove runner: %w", err)
	}
	return nil
}

// Runners lists the registered runners.
func (s *Store) Runners(ctx context.Context) ([]sa.Runner, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, host, pid, started_at, seen_at FROM runners ORDER BY started_at`)
	if err != nil {
		return nil, fmt.Errorf("list runners: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (sa.Runner, error) {
		var run sa.Runner
		var started, seen int64
		err := r.Scan(&run.ID, binTo{&run.Host}, &run.PID, &started, &seen)
		run.StartedAt, run.SeenAt = fromNanos(started), fromNanos(seen)
		return run, err
	})
	if err != nil {
		return nil, fmt.Errorf("list runners: %w", err)
	}
	return out, nil
}
