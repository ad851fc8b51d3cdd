package storekit

import (
	"context"

	sa "github.com/superagents/superagents"
)

// ReadLive runs read over one snapshot of a store in which a session is
// live; its error says what was read (what) of which session.
type ReadLive[L sa.LatestReader] func(ctx context.Context, sessionID, what string, read func(L) error) error

// Reads are the reads of a session's history, written once over a
// store's snapshots: a store embeds them.
type Reads[L sa.LatestReader] struct{ readLive ReadLive[L] }

// NewReads are the reads of a store whose snapshots readLive gives.
func NewReads[L sa.LatestReader](readLive ReadLive[L]) Reads[L] {
	return Reads[L]{readLive: readLive}
}

// History returns the effective history of a live session, built by the
// one replay algorithm from a consistent snapshot.
func (r Reads[L]) History(ctx context.Context, sessionID string) ([]sa.Message, error) {
	var history []sa.Message
	err := r.readLive(ctx, sessionID, "history", func(l L) (err error) {
		history, err = sa.BuildHistory(ctx, l, sessionID)
		return err
	})
	return history, err
}

// HistoryChunks hands a live session's history to fn in chunks as it is
// read, from one snapshot.
func (r Reads[L]) HistoryChunks(ctx context.Context, sessionID string, size int, fn func([]sa.Message) error) error {
	return r.readLive(ctx, sessionID, "history", func(l L) error {
		return sa.StreamHistory(ctx, l, sessionID, size, fn)
	})
}

// LatestMessage returns the newest message of a live session's history
// that matches.
func (r Reads[L]) LatestMessage(ctx context.Context, sessionID string, match sa.MessageMatch) (sa.Message, bool, error) {
	var (
		m  sa.Message
		ok bool
	)
	err := r.readLive(ctx, sessionID, "latest message", func(l L) (err error) {
		m, ok, err = sa.LatestInHistory(ctx, l, sessionID, match)
		return err
	})
	return m, ok, err
}
