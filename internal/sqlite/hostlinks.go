package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/storekit"
)

var _ sa.HostLinker = (*Store)(nil)

// hostLinkColumns are the columns scanHostLink reads, of links l.
const hostLinkColumns = storekit.HostLinkColumns

func scanHostLink(r rowScanner) (sa.HostLink, error) {
	return storekit.ScanHostLink(r.Scan, rawDest)
}

// HostLink returns the link of a host session to a live session.
func (s *Store) HostLink(ctx context.Context, host, hostSessionID string) (sa.HostLink, error) {
	return liveHostLink(ctx, s.reader, host, hostSessionID)
}

func liveHostLink(ctx context.Context, q querier, host, hostSessionID string) (sa.HostLink, error) {
	l, err := scanHostLink(q.QueryRowContext(ctx, `SELECT `+hostLinkColumns+` FROM host_links l
		JOIN sessions s ON s.id = l.session_id AND s.deleted_at IS NULL
		WHERE l.host = ? AND l.host_session_id = ?`, host, hostSessionID))
	return l, storekit.HostLinkError(err, sql.ErrNoRows, host, hostSessionID)
}

// SessionHostLinks returns the links of the given sessions.
func (s *Store) SessionHostLinks(ctx context.Context, sessionIDs []string) (map[string]sa.HostLink, error) {
	out := map[string]sa.HostLink{}
	// SQLite takes at most 32766 parameters; listings are far smaller, but
	// go in chunks anyway.
	for len(sessionIDs) > 0 {
		n := min(len(sessionIDs), 500)
		chunk := sessionIDs[:n]
		sessionIDs = sessionIDs[n:]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		rows, err := s.reader.QueryContext(ctx, `SELECT `+hostLinkColumns+` FROM host_links l
			WHERE l.session_id IN (`+placeholders(len(chunk))+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("read host links: %w", err)
		}
		for rows.Next() {
			l, err := scanHostLink(rows)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("read host links: %w", err)
			}
			out[l.SessionID] = l
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("read host links: %w", err)
		}
	}
	return out, nil
}

// LockImport does nothing: writes are serial.
func (tx *writeTx) LockImport(context.Context, string, string) error { return nil }

// LiveHostLink reads the link of a host session to a live session
// (writes are serial: nothing to lock).
func (tx *writeTx) LiveHostLink(ctx context.Context, host, hostSessionID string, _ bool) (sa.HostLink, error) {
	return liveHostLink(ctx, tx, host, hostSessionID)
}

// PutHostLink writes a link, replacing one to a deleted session.
func (tx *writeTx) PutHostLink(ctx context.Context, link sa.HostLink) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO host_links (host, host_session_id, session_id, position, notices_delivered, updated_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (host, host_session_id) DO UPDATE SET
			session_id = excluded.session_id, position = excluded.position,
			notices_delivered = excluded.notices_delivered, updated_at = excluded.updated_at`,
		link.Host, link.HostSessionID, link.SessionID, link.Position, link.NoticesDelivered, nanos(link.UpdatedAt))
	return err
}

// MoveHostLink writes a link's new position.
func (tx *writeTx) MoveHostLink(ctx context.Context, link sa.HostLink) error {
	_, err := tx.ExecContext(ctx, `UPDATE host_links SET position = ?, updated_at = ? WHERE host = ? AND host_session_id = ?`,
		link.Position, nanos(link.UpdatedAt), link.Host, link.HostSessionID)
	return err
}

// SetNotices writes a link's notices delivered.
func (tx *writeTx) SetNotices(ctx context.Context, link sa.HostLink) error {
	_, err := tx.ExecContext(ctx, `UPDATE host_links SET notices_delivered = ?, updated_at = ? WHERE host = ? AND host_session_id = ?`,
		link.NoticesDelivered, nanos(link.UpdatedAt), link.Host, link.HostSessionID)
	return err
}
