// Package sqlite is the embedded Store: one SQLite file in WAL mode,
// through the pure-Go modernc driver, with its schema migrated by goose on
// open.
//
// Writes go through a single connection that begins every transaction
// IMMEDIATE, so writers queue instead of failing with SQLITE_BUSY; reads
// use a separate pool of read-only connections whose transactions see a
// consistent snapshot without blocking the writer.
package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/storekit"
)

//go:embed migrations/*.sql
var migrations embed.FS

// FileName is the database's file name inside a data directory.
const FileName = "superagents.db"

// limitParam is a LIMIT or OFFSET taken from a parameter. Written as a
// bare "?", SQLite plans with the bound value and marks the statement to
// be compiled again whenever that parameter is bound, so a cached
// statement was parsed and planned anew at every run (a tenth of the CPU
// of running tasks, in ListTasks and Changes). Cast, it is an expression
// evaluated at run time and the compiled statement is reused.
const limitParam = "CAST(? AS INTEGER)"

// limitOffset ends a query that pages: a limit and an offset parameter.
const limitOffset = " LIMIT " + limitParam + " OFFSET " + limitParam

// Store is the SQLite implementation of superagents.Store.
type Store struct {
	write   *sql.DB // one connection, BEGIN IMMEDIATE
	read    *sql.DB // read-only pool, deferred transactions
	now     func() time.Time
	newID   func() string
	changed storekit.Signal // see Changed
	writes  writeQueue      // see inWrite

	writeStmts, readStmts *stmtCache
	reader                cachedDB // queries outside transactions

	// The operations and history reads written once for both SQL
	// stores, over this store's write transactions and snapshots.
	storekit.Ops[*writeTx]
	storekit.Reads[lineage]
	storekit.SharedReads
}

// Option configures a Store.
type Option func(*Store)

// WithIDGenerator replaces the random session id generator (tests use it
// to make ids that share a prefix).
func WithIDGenerator(newID func() string) Option {
	return func(s *Store) { s.newID = newID }
}

var _ sa.Store = (*Store)(nil)

// Open opens (creating if needed) the database at path and migrates it to
// the current schema. The directory must exist.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	if dir := filepath.Dir(path); dir != "" {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("open store: data directory: %w", err)
		}
	}
	// A new database is readable by its owner only, whatever the
	// directory's mode; SQLite gives its -wal and -shm files the same
	// mode. An existing file keeps its own.
	if f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	write, err := sql.Open("sqlite", dsn(path, "immediate", false))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	if err := migrate(ctx, write); err != nil {
		write.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	read, err := sql.Open("sqlite", dsn(path, "deferred", true))
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	readers := max(4, runtime.GOMAXPROCS(0))
	read.SetMaxOpenConns(readers)
	read.SetMaxIdleConns(readers)
	s := &Store{write: write, read: read, now: time.Now, newID: sa.NewID, changed: storekit.NewSignal(),
		writeStmts: newStmtCache(write), readStmts: newStmtCache(read)}
	s.reader = cachedDB{s.readStmts}
	s.Ops = storekit.NewOps(s.inWrite, func() string { return s.newID() })
	s.Reads = storekit.NewReads(storekit.LiveReads(s.inRead, requireLive, newLineage))
	s.SharedReads = storekit.NewSharedReads(shared{s.reader}, func(ctx context.Context, fn func(storekit.Reader) error) error {
		return s.inRead(ctx, func(q querier) error { return fn(shared{q}) })
	}, storekit.TaskSQL{
		Contains:  func(param string) string { return containsFoldFunc + `(description, ` + param + `)` },
		ToolCalls: `COALESCE(json_extract(progress, '$.tool_calls'), 0)`,
		Limit:     func(limit int) any { return cmp.Or(limit, -1) }, // SQLite's "no limit"
	})
	for _, opt := range opts {
		opt(s)
	}
	return s, nil
}

// OpenDir opens the store file inside a data directory, creating the
// directory (private to the user) if needed.
func OpenDir(ctx context.Context, dir string, opts ...Option) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	return Open(ctx, filepath.Join(dir, FileName), opts...)
}

// dsn builds the modernc connection string. synchronous=NORMAL is the
// usual choice with WAL: a crash of the process or the machine leaves a
// consistent database; a power loss may drop the latest commits.
// Reads go through a memory map of the file (up to 256 MB of address
// space per connection): reading a long history through read calls, a
// page at a time, took 40% of `superagents history`. Writes and the WAL
// are unchanged. Temporary files stay in memory: each write of a shared
// transaction runs in a savepoint (see inWrite), whose copies of the
// pages it changes went to a temporary file, a write call per page.
func dsn(path, txlock string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "mmap_size(268435456)")
	q.Add("_pragma", "temp_store(MEMORY)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	}
	q.Set("_txlock", txlock)
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

func migrate(ctx context.Context, db *sql.DB) error {
	files, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, files, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate schema: %w", err)
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error {
	s.readStmts.close()
	s.writeStmts.close()
	return errors.Join(s.read.Close(), s.write.Close())
}

// inRead runs fn in one read transaction: everything it reads is one
// consistent snapshot.
func (s *Store) inRead(ctx context.Context, fn func(q querier) error) error {
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	err = fn(newCachedTx(tx, s.readStmts))
	_ = tx.Rollback() // read-only: nothing to keep
	s.readStmts.warm(ctx)
	return err
}

// DB returns the write connection pool, for tests that must reach below
// the Store interface (to corrupt data on purpose, for instance).
func (s *Store) DB() *sql.DB { return s.write }

func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

func nullNanos(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixNano(), Valid: true}
}

func fromNullNanos(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromNanos(n.Int64)
	return &t
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
