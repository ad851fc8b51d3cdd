package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/storekit"
)

var _ sa.HostLinker = (*Store)(nil)

// hostLinkColumns are the columns scanHostLink reads, of links l.
const hostLinkColumns = storekit.HostLinkColumns

func scanHostLink(r pgx.Row) (sa.HostLink, error) {
	return storekit.ScanHostLink(r.Scan, rawDest)
}

// HostLink returns the link of a host session to a live session.
func (s *Store) HostLink(ctx context.Context, host, hostSessionID string) (sa.HostLink, error) {
	return liveHostLink(ctx, s.pool, host, hostSessionID, "")
}

// liveHostLink reads the link of a host session to a live session,
// locking the link's row as lock says ("" for none).
func liveHostLink(ctx context.Context, q querier, host, hostSessionID, lock string) (sa.HostLink, error) {
	if lock != "" {
		lock += " OF l"
	}
	l, err := scanHostLink(q.QueryRow(ctx, `SELECT `+hostLinkColumns+` FROM host_links l
		JOIN sessions s ON s.id = l.session_id AND s.deleted_at IS NULL
		WHERE l.host = $1 AND l.host_session_id = $2`+lock, bin(host), bin(hostSessionID)))
	return l, storekit.HostLinkError(err, pgx.ErrNoRows, host, hostSessionID)
}

// SessionHostLinks returns the links of the given sessions.
func (s *Store) SessionHostLinks(ctx context.Context, sessionIDs []string) (map[string]sa.HostLink, error) {
	ids := make([]string, 0, len(sessionIDs))
	for _, id := range sessionIDs {
		if storekit.Storable(id) { // no other id can be stored
			ids = append(ids, id)
		}
	}
	out := map[string]sa.HostLink{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+hostLinkColumns+` FROM host_links l WHERE l.session_id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("read host links: %w", err)
	}
	links, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (sa.HostLink, error) { return scanHostLink(r) })
	if err != nil {
		return nil, fmt.Errorf("read host links: %w", err)
	}
	for _, l := range links {
		out[l.SessionID] = l
	}
	return out, nil
}

// LockImport takes the advisory lock of a host session's imports, before
// the id lock (inserting the session takes it), as every other lock is.
func (tx *writeTx) LockImport(ctx context.Context, host, hostSessionID string) error {
	key := lockKey("host-link", tx.s.schema+"\x00"+host+"\x00"+hostSessionID)
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, key)
	return err
}

// LiveHostLink reads the link of a host session to a live session,
// locking its row as an append does if lock is set.
func (tx *writeTx) LiveHostLink(ctx context.Context, host, hostSessionID string, lock bool) (sa.HostLink, error) {
	if lock {
		return liveHostLink(ctx, tx, host, hostSessionID, lockAppend)
	}
	return liveHostLink(ctx, tx, host, hostSessionID, "")
}

// PutHostLink writes a link, replacing one to a deleted session.
func (tx *writeTx) PutHostLink(ctx context.Context, link sa.HostLink) error {
	_, err := tx.Exec(ctx, `INSERT INTO host_links (host, host_session_id, session_id, position, notices_delivered, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (host, host_session_id) DO UPDATE SET
			session_id = excluded.session_id, position = excluded.position,
			notices_delivered = excluded.notices_delivered, updated_at = excluded.updated_at`,
		bin(link.Host), bin(link.HostSessionID), link.SessionID, bin(link.Position), link.NoticesDelivered, nanos(link.UpdatedAt))
	return err
}

// MoveHostLink writes a link's new position.
func (tx *writeTx) MoveHostLink(ctx context.Context, link sa.HostLink) error {
	_, err := tx.Exec(ctx, `UPDATE host_links SET position = $1, updated_at = $2 WHERE host = $3 AND host_session_id = $4`,
		bin(link.Position), nanos(link.UpdatedAt), bin(link.Host), bin(link.HostSessionID))
	return err
}

// SetNotices writes a link's notices delivered.
func (tx *writeTx) SetNotices(ctx context.Context, link sa.HostLink) error {
	_, err := tx.Exec(ctx, `UPDATE host_links SET notices_delivered = $1, updated_at = $2 WHERE host = $3 AND host_session_id = $4`,
		link.NoticesDelivered, nanos(link.UpdatedAt), bin(link.Host), bin(link.HostSessionID))
	return err
}
