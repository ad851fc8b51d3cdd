package storekit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	sa "github.com/superagents/superagents"
)

// HostTx is what a store's write transaction offers the imports of host
// sessions, each in the store's SQL.
type HostTx interface {
	SessionTx
	// LockImport makes the imports of one host session, on every
	// process, run one after the other (its link may not exist yet).
	LockImport(ctx context.Context, host, hostSessionID string) error
	// LiveHostLink reads the link of a host session to a live session
	// (ErrNotFound when there is none), holding the link's row if lock
	// is set.
	LiveHostLink(ctx context.Context, host, hostSessionID string, lock bool) (sa.HostLink, error)
	// LockLive checks that a session is live, holding it for an append.
	LockLive(ctx context.Context, sessionID string) error
	// PutHostLink writes a link, replacing one to a deleted session.
	PutHostLink(ctx context.Context, link sa.HostLink) error
	// MoveHostLink writes a link's new position and update time.
	MoveHostLink(ctx context.Context, link sa.HostLink) error
	// SetNotices writes a link's NoticesDelivered and update time.
	SetNotices(ctx context.Context, link sa.HostLink) error
}

// CheckHostLink refuses a link without its host and the host's session
// id.
func CheckHostLink(l sa.HostLink) error {
	if strings.TrimSpace(l.Host) == "" || strings.TrimSpace(l.HostSessionID) == "" {
		return fmt.Errorf("%w: a host link needs the host and its session id", sa.ErrInvalid)
	}
	return nil
}

// createHostSession creates in tx session id from ns (its origin an
// import unless it says otherwise), with its first messages and link. A
// host session linked to a live session already is refused
// (ErrConflict); a link to a deleted one is replaced.
func createHostSession(ctx context.Context, tx HostTx, id string, ns sa.NewSession, link sa.HostLink, now time.Time) (sa.Session, sa.HostLink, error) {
	if err := tx.LockImport(ctx, link.Host, link.HostSessionID); err != nil {
		return sa.Session{}, sa.HostLink{}, fmt.Errorf("lock host link: %w", err)
	}
	if old, err := tx.LiveHostLink(ctx, link.Host, link.HostSessionID, false); err == nil {
		return sa.Session{}, sa.HostLink{}, fmt.Errorf("%w: %s session %s is imported already, as session %s", sa.ErrConflict, link.Host, link.HostSessionID, old.SessionID)
	} else if !errors.Is(err, sa.ErrNotFound) {
		return sa.Session{}, sa.HostLink{}, err
	}
	ns.Origin = cmp.Or(ns.Origin, sa.OriginImport)
	sess, err := createSession(ctx, tx, NewSession(id, ns, now), ns.Messages)
	if err != nil {
		return sa.Session{}, sa.HostLink{}, err
	}
	link.SessionID, link.UpdatedAt = sess.ID, now
	if err := tx.PutHostLink(ctx, link); err != nil {
		return sa.Session{}, sa.HostLink{}, fmt.Errorf("insert host link: %w", err)
	}
	return sess, link, nil
}

// appendHost appends msgs in tx to the session a host session is linked
// to, moving the link's position from from to link.Position. It refuses
// (ErrConflict) when the position read under the locks is no longer from,
// or the link was replaced: another import got there first.
func appendHost(ctx context.Context, tx HostTx, link sa.HostLink, from string, msgs []sa.Message, now time.Time) ([]sa.Message, sa.HostLink, error) {
	seen, err := tx.LiveHostLink(ctx, link.Host, link.HostSessionID, false)
	if err != nil {
		return nil, sa.HostLink{}, err
	}
	// The session is held before the link, the order deletion takes them
	// in (it deletes the link when it reclaims the session).
	if err := tx.LockLive(ctx, seen.SessionID); err != nil {
		return nil, sa.HostLink{}, err
	}
	cur, err := tx.LiveHostLink(ctx, link.Host, link.HostSessionID, true)
	if err != nil {
		return nil, sa.HostLink{}, err
	}
	if cur.SessionID != seen.SessionID || cur.Position != from {
		return nil, sa.HostLink{}, fmt.Errorf("%w: %s session %s was imported further meanwhile", sa.ErrConflict, link.Host, link.HostSessionID)
	}
	link.SessionID, link.UpdatedAt = cur.SessionID, now
	stored, err := tx.InsertMessages(ctx, cur.SessionID, "", msgs)
	if err != nil {
		return nil, sa.HostLink{}, err
	}
	if err := tx.MoveHostLink(ctx, link); err != nil {
		return nil, sa.HostLink{}, fmt.Errorf("update host link: %w", err)
	}
	return stored, link, nil
}

// moveNotices moves in tx the NoticesDelivered of the link of a host
// session to a live session up to upTo, never back, and returns the link
// as stored.
func moveNotices(ctx context.Context, tx HostTx, host, hostSessionID string, upTo int64, now time.Time) (sa.HostLink, error) {
	cur, err := tx.LiveHostLink(ctx, host, hostSessionID, true)
	if err != nil || cur.NoticesDelivered >= upTo {
		return cur, err
	}
	cur.NoticesDelivered, cur.UpdatedAt = upTo, now
	if err := tx.SetNotices(ctx, cur); err != nil {
		return sa.HostLink{}, fmt.Errorf("update host link: %w", err)
	}
	return cur, nil
}

// HostLinkError is the error of a read of the link of a host's session
// that failed with err (noRows: the store's error for no row), nil for
// none.
func HostLinkError(err, noRows error, host, hostSessionID string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, noRows):
		return sa.NotFoundf("no session imported from %s session %s", host, hostSessionID)
	}
	return fmt.Errorf("read host link: %w", err)
}

// HostLinkColumns are the columns of a host link l ScanHostLink reads.
const HostLinkColumns = `l.host, l.host_session_id, l.session_id, l.position, l.notices_delivered, l.updated_at`

// ScanHostLink reads a link from a row of HostLinkColumns through scan,
// its raw-bytes columns through rawDest (see Reader).
func ScanHostLink(scan func(dest ...any) error, rawDest func(p *string) any) (sa.HostLink, error) {
	var l sa.HostLink
	var updated int64
	if err := scan(rawDest(&l.Host), rawDest(&l.HostSessionID), &l.SessionID, rawDest(&l.Position), &l.NoticesDelivered, &updated); err != nil {
		return sa.HostLink{}, err
	}
	l.UpdatedAt = time.Unix(0, updated).UTC()
	return l, nil
}
