package postgres

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jackc/pgx/v5"
)

// shared runs the queries and statements both stores word alike (see
// storekit.Conn) on the pool, a snapshot or a write transaction.
type shared struct{ q querier }

// ExecShared runs a statement.
func (c shared) ExecShared(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := c.q.Exec(ctx, query, args...)
	return tag.RowsAffected(), err
}

// ScanShared scans the first row of a query; no row is sql.ErrNoRows, as
// storekit expects.
func (c shared) ScanShared(ctx context.Context, query string, args []any, dest ...any) error {
	err := c.q.QueryRow(ctx, query, args...).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return sql.ErrNoRows
	}
	return err
}

// EachShared scans each row of a query and calls fn after each.
func (c shared) EachShared(ctx context.Context, query string, args []any, dest []any, fn func() error) error {
	rows, err := c.q.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	_, err = pgx.ForEachRow(rows, dest, fn)
	return err
}

// Raw passes s to a BYTEA column byte for byte.
func (shared) Raw(s string) any { return bin(s) }

// RawDest scans a BYTEA column into p.
func (shared) RawDest(p *string) any { return rawDest(p) }

// rawDest scans a BYTEA column into p.
func rawDest(p *string) any { return binTo{p} }
