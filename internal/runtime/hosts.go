package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/transcripts"
)

// HostImport is what one import of a host conversation did.
type HostImport struct {
	sa.Session
	// Import is the link of the host conversation to the session, with
	// how far the import got.
	Import    sa.HostLink           `json:"import"`
	Path      string                `json:"path"`
	Created   bool                  `json:"created"`
	Imported  int                   `json:"imported"`
	Pending   int                   `json:"pending"`
	Malformed transcripts.Malformed `json:"malformed"`
}

// ErrNothingToImport: the host conversation holds no complete message yet.
var ErrNothingToImport = errors.New("nothing to import")

// Imports are the writes of sessions imported from outside (a host's
// conversation, or messages read from a file), on a store alone: a
// command that only imports opens no engine, bus or task manager. A
// Runtime imports host conversations the same way (ImportHost).
type Imports struct {
	store sa.Store
}

// NewImports are the imports into a store.
func NewImports(st sa.Store) *Imports { return &Imports{store: st} }

// ImportSession creates a root session from messages read from outside
// (ns.Messages, at least one), its origin an import unless ns says
// otherwise. The agent is recorded as it is named: the session may be
// imported where its profile is not.
func (im *Imports) ImportSession(ctx context.Context, ns sa.NewSession) (sa.Session, error) {
	if len(ns.Messages) == 0 {
		return sa.Session{}, fmt.Errorf("%w: nothing to import", sa.ErrInvalid)
	}
	if ns.Origin == "" {
		ns.Origin = sa.OriginImport
	}
	return im.store.CreateSession(ctx, ns)
}

// ImportHost imports a host's conversation (see Imports.ImportHost).
func (ss Sessions) ImportHost(ctx context.Context, t transcripts.Transcript, ns sa.NewSession) (HostImport, error) {
	return NewImports(ss.rt.store).ImportHost(ctx, t, ns)
}

// ImportHostRead imports a host's conversation read already (see
// Imports.ImportHostRead).
func (ss Sessions) ImportHostRead(ctx context.Context, t transcripts.Transcript, read *transcripts.Result, ns sa.NewSession) (HostImport, error) {
	return NewImports(ss.rt.store).ImportHostRead(ctx, t, read, ns)
}

// ImportHost imports a host's conversation into the session linked to it:
// a new session (made from ns) the first time, afterwards only what the
// host wrote since, appended to the same session, so that forks made
// earlier stay one row each and repeated imports cost what is new. The
// host's newest messages that it may still extend (a reply whose tools are
// running) are left for the next import. The host's files are only read.
func (im *Imports) ImportHost(ctx context.Context, t transcripts.Transcript, ns sa.NewSession) (HostImport, error) {
	return im.ImportHostRead(ctx, t, nil, ns)
}

// ImportHostRead is ImportHost for a caller that has read the transcript
// already (FindPendingCall returns what it read): when read started from
// where the import stands (the start, for a first import), it is imported
// as it is instead of being read again. Otherwise, or when read is nil, the
// transcript is read.
func (im *Imports) ImportHostRead(ctx context.Context, t transcripts.Transcript, read *transcripts.Result, ns sa.NewSession) (HostImport, error) {
	// Imports of one conversation at once (a host forking twice in one
	// reply, or two processes) race for its link: the store lets one
	// through and refuses the others (ErrConflict), which then import
	// afresh from where the first got.
	for attempt := 1; ; attempt++ {
		out, err := im.importHost(ctx, t, read, ns)
		if !errors.Is(err, sa.ErrConflict) || attempt == maxImportAttempts {
			return out, err
		}
		read = nil // another import moved the link: read from where it is now
	}
}

// maxImportAttempts bounds how often an import that lost a race is tried
// again.
const maxImportAttempts = 3

func (im *Imports) importHost(ctx context.Context, t transcripts.Transcript, read *transcripts.Result, ns sa.NewSession) (HostImport, error) {
	out := HostImport{Path: t.Path}
	link, err := im.store.HostLink(ctx, string(t.Host), t.SessionID)
	switch {
	case errors.Is(err, sa.ErrNotFound):
		res, err := readFrom(ctx, t, transcripts.Position{}, read)
		if err != nil {
			return out, err
		}
		if len(res.Messages) == 0 {
			if len(res.Pending) > 0 {
				return out, fmt.Errorf("%w: the %s conversation has only messages still being written; import it once the host is idle", ErrNothingToImport, t.Host.Label())
			}
			return out, fmt.Errorf("%w: %s holds no messages of the %s conversation", ErrNothingToImport, t.Path, t.Host.Label())
		}
		pos, err := json.Marshal(res.Next)
		if err != nil {
			return out, err
		}
		if ns.Title == "" {
			ns.Title = res.Title
		}
		if ns.Origin == "" {
			ns.Origin = sa.OriginImport
		}
		// The host's model name is not one of ours (provider/model): the
		// session runs on the configured model; each message keeps the
		// host's name for the record.
		ns.Messages = res.Messages
		sess, created, err := im.store.CreateHostSession(ctx, ns,
			sa.HostLink{Host: string(t.Host), HostSessionID: t.SessionID, Position: string(pos)})
		if err != nil {
			return out, err
		}
		out.Session, out.Import, out.Created = sess, created, true
		out.Imported, out.Pending, out.Malformed = len(res.Messages), len(res.Pending), res.Malformed
		return out, nil
	case err != nil:
		return out, err
	}
	var from transcripts.Position
	if err := json.Unmarshal([]byte(link.Position), &from); err != nil {
		return out, fmt.Errorf("session %s: its import position %q is unreadable: %w", sa.ShortID(link.SessionID), link.Position, err)
	}
	res, err := readFrom(ctx, t, from, read)
	if errors.Is(err, transcripts.ErrDiverged) {
		return out, fmt.Errorf("%w; it was imported as session %s, whose messages cannot be replaced: delete that session ('superagents delete %s') to import the conversation afresh",
			err, sa.ShortID(link.SessionID), sa.ShortID(link.SessionID))
	}
	if err != nil {
		return out, err
	}
	if len(res.Messages) > 0 {
		pos, err := json.Marshal(res.Next)
		if err != nil {
			return out, err
		}
		next := link
		next.Position = string(pos)
		if _, link, err = im.store.AppendHost(ctx, next, link.Position, res.Messages...); err != nil {
			return out, err
		}
	}
	sess, err := im.store.Session(ctx, link.SessionID)
	if err != nil {
		return out, err
	}
	out.Session, out.Import = sess, link
	out.Imported, out.Pending, out.Malformed = len(res.Messages), len(res.Pending), res.Malformed
	return out, nil
}

// readFrom reads the transcript from a position, or returns read when it
// is a read from that position.
func readFrom(ctx context.Context, t transcripts.Transcript, from transcripts.Position, read *transcripts.Result) (transcripts.Result, error) {
	if read != nil && read.From == from {
		return *read, nil
	}
	return transcripts.Read(ctx, t, from)
}
