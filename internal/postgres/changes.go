package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	sa "github.com/superagents/superagents"
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
	s.changed.Send()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if n.Payload == s.schema {
			s.changed.Send()
		}
	}
}
