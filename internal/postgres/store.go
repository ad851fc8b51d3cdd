// Package postgres is the Store for several processes or machines on one
// PostgreSQL database, through a pgx connection pool. Its schema is
// migrated by goose on open, under an advisory lock, so nodes that start
// together do not race.
//
// Ordering under concurrency: message and change ids are taken from
// sequences while the transaction holds a transaction-level advisory lock
// (one per schema), so they are handed out in commit order and a follower
// of the change log never skips an id that commits late. Append, fork and
// anything else that reads or extends a session's messages lock the
// session's row first, so a fork point is exactly the parent's messages
// visible at that moment. Row locks are always taken before the advisory
// lock (session, then task, then ids), so writers cannot deadlock. A turn
// lease is taken under the session's row lock, so one acquire of a
// session wins on all nodes; an import of a host session is serialized by
// an advisory lock on its key, taken before anything else.
//
// Followers of the change log on every node are woken by LISTEN/NOTIFY
// (see Changed).
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/storekit"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrationTable is goose's version table, named for this program so that
// a schema shared with another goose user does not mix their histories.
const migrationTable = "superagents_migrations"

// Store is the PostgreSQL implementation of superagents.Store.
type Store struct {
	pool  *pgxpool.Pool
	now   func() time.Time
	newID func() string

	schema  string // the schema the tables live in (current_schema())
	idLock  int64  // advisory lock key taken while handing out ids
	noLock  bool   // tests and benchmarks only: skip the id lock
	changed storekit.Signal

	stop        context.CancelFunc // stops the listener
	listened    sync.WaitGroup
	listenerPID atomic.Uint32 // the listening connection's backend, for tests

	// The operations and history reads written once for both SQL
	// stores, over this store's write transactions and snapshots.
	storekit.Ops[*writeTx]
	storekit.Reads[lineage]
	storekit.SharedReads
	readLive storekit.ReadLive[lineage]
}

// Option configures a Store.
type Option func(*Store)

// WithIDGenerator replaces the random session id generator (tests use it
// to make ids that share a prefix).
func WithIDGenerator(newID func() string) Option {
	return func(s *Store) { s.newID = newID }
}

var (
	_ sa.Store          = (*Store)(nil)
	_ sa.ChangeNotifier = (*Store)(nil)
)

// Open connects to the database at url (a postgres:// URL or a key=value
// connection string), migrates it to the current schema and starts
// listening for other nodes' changes. The tables live in the connection's
// current schema (set search_path in the URL to choose one).
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's parse errors can quote the connection string: say what
		// is wrong without it.
		return nil, fmt.Errorf("open store %s: %w", Redact(url), errors.New(redactedParseError(err, url)))
	}
	where := describe(cfg.ConnConfig)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", where, err)
	}
	s := &Store{pool: pool, now: time.Now, newID: sa.NewID, changed: storekit.NewSignal()}
	s.Ops = storekit.NewOps(s.inWrite, func() string { return s.newID() })
	s.readLive = storekit.LiveReads(s.inRead, requireLive, newLineage)
	s.Reads = storekit.NewReads(s.readLive)
	s.SharedReads = storekit.NewSharedReads(shared{pool}, func(ctx context.Context, fn func(storekit.Reader) error) error {
		return s.inRead(ctx, func(q querier) error { return fn(shared{q}) })
	}, storekit.TaskSQL{
		// Bytes of valid UTF-8 (folding makes it valid) contain another's
		// bytes only where its characters are: no wildcards, NUL included.
		Contains:  func(param string) string { return `position(` + param + `::bytea IN description_folded) > 0` },
		ToolCalls: `tool_calls`,
		Limit:     limitArg,
	})
	for _, opt := range opts {
		opt(s)
	}
	var schema *string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open store %s: %w", where, err)
	}
	if schema == nil {
		pool.Close()
		return nil, fmt.Errorf("open store %s: no schema: the search_path names none that exists", where)
	}
	s.schema = *schema
	s.idLock = lockKey("ids", s.schema)
	if err := migrate(ctx, pool, s.schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open store %s: %w", where, err)
	}
	listenCtx, stop := context.WithCancel(context.Background())
	s.stop = stop
	s.listened.Add(1)
	go s.listen(listenCtx)
	return s, nil
}

// Migrate applies the pending migrations to the database at url and
// returns the schema version it is at.
func Migrate(ctx context.Context, url string) (int64, error) {
	s, err := Open(ctx, url)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	var version int64
	err = s.pool.QueryRow(ctx, `SELECT COALESCE(MAX(version_id), 0) FROM `+migrationTable+` WHERE is_applied`).Scan(&version)
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return version, nil
}

// lockKey derives an advisory lock key from a purpose and a schema, so
// that stores in different schemas of one database do not contend.
func lockKey(purpose, schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("superagents/" + purpose + "/" + schema))
	return int64(h.Sum64())
}

// migrate applies the embedded migrations, then River's, while holding a session-level
// advisory lock: a node that starts meanwhile waits, then finds nothing
// left to do. A schema that is up to date already costs one query.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	files, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	latest, err := latestVersion(files)
	if err != nil {
		return err
	}
	var current int64
	// Fails when the table is missing: then there is work to do.
	err = pool.QueryRow(ctx, `SELECT COALESCE(MAX(version_id), 0) FROM `+migrationTable+` WHERE is_applied`).Scan(&current)
	if err == nil && current >= latest {
		if pending, err := riverPending(ctx, pool, schema); err != nil || !pending {
			return err
		}
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate schema: %w", err)
	}
	defer conn.Release()
	key := lockKey("migrate", schema)
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		return fmt.Errorf("migrate schema: lock: %w", err)
	}
	defer func() {
		// A fresh context: the lock must go even when ctx has ended. If
		// this fails the connection is broken, which frees it too.
		unlockCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := conn.Exec(unlockCtx, `SELECT pg_advisory_unlock($1)`, key); err != nil {
			conn.Conn().Close(unlockCtx) //nolint:errcheck // dropping it frees the lock
		}
	}()
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, files,
		goose.WithDisableGlobalRegistry(true), goose.WithTableName(migrationTable))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate schema: %w", err)
	}
	return migrateRiver(ctx, pool, schema)
}

// latestVersion is the highest version among the migration files
// (goose's NNNNN_name.sql).
func latestVersion(files fs.FS) (int64, error) {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return 0, fmt.Errorf("migrations: %w", err)
	}
	var latest int64
	for _, e := range entries {
		prefix, _, _ := strings.Cut(e.Name(), "_")
		v, err := strconv.ParseInt(prefix, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("migration %s: no version number", e.Name())
		}
		latest = max(latest, v)
	}
	return latest, nil
}

// Close stops listening and closes the pool.
func (s *Store) Close() error {
	s.stop()
	s.listened.Wait()
	s.pool.Close()
	return nil
}

// Pool returns the connection pool, for tests that must reach below the
// Store interface.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Schema returns the schema the store's tables live in.
func (s *Store) Schema() string { return s.schema }

// querier is what a pool and a transaction both offer.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// writeTx is one write transaction. It takes the id lock before the first
// id is handed out, and remembers to tell followers once it commits.
type writeTx struct {
	pgx.Tx
	storekit.SharedTx // over the transaction itself
	s                 *Store
	now               time.Time
	locked            bool
	changed           bool
}

// send sends a batch of statements that take message or change ids,
// preceded, in the same round trip, by the transaction-level advisory lock
// under which ids are handed out (once per transaction) and by the
// notification that wakes other nodes' followers at commit. Held to the
// end of the transaction, the lock makes ids follow commit order: a reader
// that sees an id committed sees every smaller one committed too
// (PostgreSQL makes a transaction visible before it releases its locks).
// Closing the results runs the batch's callbacks.
func (tx *writeTx) send(ctx context.Context, b *pgx.Batch) (pgx.BatchResults, error) {
	first := !tx.locked
	if first {
		locked := &pgx.Batch{}
		if tx.s.noLock {
			locked.Queue(`SELECT pg_notify($1, $2)`, notifyChannel, tx.s.schema)
		} else {
			locked.Queue(`SELECT pg_advisory_xact_lock($1), pg_notify($2, $3)`, tx.s.idLock, notifyChannel, tx.s.schema)
		}
		locked.QueuedQueries = append(locked.QueuedQueries, b.QueuedQueries...)
		b = locked
	}
	res := tx.SendBatch(ctx, b)
	if first {
		if _, err := res.Exec(); err != nil {
			res.Close()
			return nil, fmt.Errorf("lock ids: %w", err)
		}
		tx.locked = true
	}
	tx.changed = true
	return res, nil
}

// inWrite runs fn in one write transaction (read committed), committing
// when it returns nil, and then tells this process's followers of the
// change log if fn recorded changes.
func (s *Store) inWrite(ctx context.Context, fn func(tx *writeTx) error) error {
	pgTx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	tx := &writeTx{Tx: pgTx, s: s, now: s.now().UTC()}
	tx.SharedTx = storekit.NewSharedTx(shared{tx})
	if err := fn(tx); err != nil {
		_ = pgTx.Rollback(ctx)
		return err
	}
	if err := pgTx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if tx.changed {
		s.changed.Send()
	}
	return nil
}

// inRead runs fn in one read-only transaction at repeatable read:
// everything it reads is one consistent snapshot.
func (s *Store) inRead(ctx context.Context, fn func(q querier) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	err = fn(tx)
	_ = tx.Rollback(ctx) // read-only: nothing to keep
	return err
}

func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

func nullNanos(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	n := t.UnixNano()
	return &n
}

func fromNullNanos(n *int64) *time.Time {
	if n == nil {
		return nil
	}
	t := fromNanos(*n)
	return &t
}

// Now is the transaction's time.
func (tx *writeTx) Now() time.Time { return tx.now }
