package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache prepares each query once per pool. SQLite spends about as long
// parsing a statement as running a small one, and database/sql does not
// keep prepared statements by itself.
//
// Inside a transaction a query not prepared yet runs unprepared and is
// queued: preparing on the pool then would wait for a connection the
// transaction may hold (the write pool has only one). warm prepares the
// queue once the transaction is over.
type stmtCache struct {
	db      *sql.DB
	mu      sync.Mutex
	m       map[string]*sql.Stmt
	pending map[string]bool
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: make(map[string]*sql.Stmt), pending: make(map[string]bool)}
}

// lookup returns the prepared statement of a query, or queues the query.
func (c *stmtCache) lookup(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[query]; ok {
		return st
	}
	if c.m != nil {
		c.pending[query] = true
	}
	return nil
}

// warm prepares the queued queries; call it outside transactions.
func (c *stmtCache) warm(ctx context.Context) {
	c.mu.Lock()
	var queries []string
	for q := range c.pending {
		queries = append(queries, q)
	}
	clear(c.pending)
	c.mu.Unlock()
	for _, q := range queries {
		_, _ = c.get(ctx, q) // a failure shows when the query runs
	}
}

// get returns the prepared statement of a query, preparing it on the pool
// if needed: only outside transactions.
func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := c.lookup(query); st != nil {
		return st, nil
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, query)
	if c.m == nil { // closed meanwhile
		st.Close()
		return nil, sql.ErrConnDone
	}
	if prev, ok := c.m[query]; ok { // prepared twice at once: keep one
		st.Close()
		return prev, nil
	}
	c.m[query] = st
	return st, nil
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		st.Close()
	}
	c.m = nil
}

// cachedDB runs queries on a pool through its statement cache.
type cachedDB struct{ c *stmtCache }

func (q cachedDB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := q.c.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (q cachedDB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := q.c.get(ctx, query)
	if err != nil {
		// sql.Row cannot be built with an error; let the pool report it.
		return q.c.db.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

func (q cachedDB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := q.c.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// cachedTx runs queries in a transaction with the pool's prepared
// statements (database/sql reuses the one prepared on the connection).
type cachedTx struct {
	tx *sql.Tx
	c  *stmtCache
	// local holds the transaction's views of prepared statements, made
	// once each, and nil for a query run once unprepared.
	local map[string]*sql.Stmt
}

func newCachedTx(tx *sql.Tx, c *stmtCache) cachedTx {
	return cachedTx{tx: tx, c: c, local: make(map[string]*sql.Stmt)}
}

// stmt returns the transaction's view of the query's prepared statement,
// or nil when it is not prepared yet. A query the pool has not prepared
// runs unprepared the first time; run again in the same transaction (a
// message insert, once per message of a batch) it is prepared on the
// transaction's connection, for the rest of the transaction, rather than
// parsed again each time.
func (q cachedTx) stmt(ctx context.Context, query string) *sql.Stmt {
	st, seen := q.local[query]
	switch {
	case st != nil:
		return st
	case seen:
		if st, err := q.tx.PrepareContext(ctx, query); err == nil {
			q.local[query] = st
			return st
		}
		return nil // it fails again unprepared, and says why
	}
	if st := q.c.lookup(query); st != nil {
		local := q.tx.StmtContext(ctx, st)
		q.local[query] = local
		return local
	}
	q.local[query] = nil
	return nil
}

func (q cachedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := q.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return q.tx.QueryContext(ctx, query, args...)
}

func (q cachedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := q.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return q.tx.QueryRowContext(ctx, query, args...)
}

func (q cachedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := q.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return q.tx.ExecContext(ctx, query, args...)
}
