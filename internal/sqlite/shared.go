package sqlite

import (
	"context"
	"errors"
)

// shared runs the queries and statements both stores word alike (see
// storekit.Conn) on a connection, snapshot or write transaction. SQLite
// keeps every text as text: raw-bytes columns need no conversion.
type shared struct{ q querier }

// ExecShared runs a statement.
func (c shared) ExecShared(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := c.q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// ScanShared scans the first row of a query.
func (c shared) ScanShared(ctx context.Context, query string, args []any, dest ...any) error {
	return c.q.QueryRowContext(ctx, query, args...).Scan(dest...)
}

// EachShared scans each row of a query and calls fn after each.
func (c shared) EachShared(ctx context.Context, query string, args []any, dest []any, fn func() error) error {
	rows, err := c.q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return err
		}
		if err := fn(); err != nil {
			rows.Close()
			return err
		}
	}
	return errors.Join(rows.Err(), rows.Close())
}

// Raw passes s as it is.
func (shared) Raw(s string) any { return s }

// RawDest scans into p as it is.
func (shared) RawDest(p *string) any { return rawDest(p) }

// rawDest scans a column into p as it is.
func rawDest(p *string) any { return p }
