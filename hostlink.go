package superagents

import (
	"context"
	"time"
)

// HostLink ties a session to the conversation of another coding agent (a
// "host": Claude Code, Codex, OpenCode) it was imported from, and records
// how far the import got, so that importing it again appends only what is
// new to the same session.
type HostLink struct {
	Host          string `json:"host"`
	HostSessionID string `json:"host_session_id"`
	SessionID     string `json:"session_id"`
	// Position is the transcript reader's own record of how far the
	// import got; the store keeps it as it is.
	Position string `json:"position,omitempty"`
	// NoticesDelivered, on the link of a host conversation's MCP session
	// (whose tasks hang from it), is the newest message of that session
	// whose task notices the host conversation was given: a later
	// connection of the conversation is not given them again. It only
	// grows (MoveNotices).
	NoticesDelivered int64     `json:"notices_delivered,omitempty"`
	UpdatedAt        time.Time `json:"updated_at,omitzero"`
}

// HostLinker is implemented by stores that keep host links. Every write
// stores the link with the messages it accounts for, in one transaction:
// a crash leaves both or neither, so no host message is imported twice or
// skipped.
type HostLinker interface {
	HostLinkReader
	// CreateHostSession creates a root session with its first messages and
	// its link. It refuses (ErrConflict) a host session linked to a live
	// session already; a link to a deleted session is replaced.
	CreateHostSession(ctx context.Context, ns NewSession, link HostLink) (Session, HostLink, error)
	// AppendHost appends messages to the linked session and moves the
	// link's position from from to link.Position. It refuses (ErrConflict)
	// when the stored position is no longer from: another import got there
	// first, and appending would repeat its messages.
	AppendHost(ctx context.Context, link HostLink, from string, msgs ...Message) ([]Message, HostLink, error)
	// MoveNotices moves the NoticesDelivered of the link of a host session
	// to a live session up to upTo, never back (a smaller upTo leaves it
	// as it is), and returns the link as stored (ErrNotFound when there is
	// none).
	MoveNotices(ctx context.Context, host, hostSessionID string, upTo int64) (HostLink, error)
}

// HostLinkReader is the reads of HostLinker.
type HostLinkReader interface {
	// HostLink returns the link of a host session to a live session
	// (ErrNotFound when there is none).
	HostLink(ctx context.Context, host, hostSessionID string) (HostLink, error)
	// SessionHostLinks returns the links of the given sessions, by session
	// id; sessions without one are absent.
	SessionHostLinks(ctx context.Context, sessionIDs []string) (map[string]HostLink, error)
}
