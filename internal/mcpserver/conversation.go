package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/transcripts"
)

// A host process (claude -p, codex exec, opencode run) is one connection,
// and ends with its work; the conversation it belongs to goes on in the
// host's next process (claude --resume, codex exec resume, opencode run
// --session). So the tasks a client launches belong to its host
// conversation when the host's transcript names it: they are listed,
// read, resumed and cancelled from any later connection of that
// conversation, and the notices of the tasks that ended meanwhile are
// delivered there. Each conversation's tasks hang from one store session,
// found again through a host link; a client whose conversation is not
// known keeps a session of its own, for the connection.

// conversation is the host conversation of a client (or, for a client
// over HTTP whose conversation is not known, the API token it presents:
// host tokenHost).
type conversation struct {
	host transcripts.Host
	id   string // the host's own session id
}

// label names the conversation in its session's title.
func (c conversation) label() string {
	if c.host == tokenHost {
		return "HTTP token " + c.id[:8]
	}
	return c.host.Label() + " conversation " + sa.ShortID(c.id)
}

// findConversation looks, in the host's transcripts for the workspace, for
// the conversation waiting for the call req is (the first a client
// makes), as a fork does; nil when the host is not known or no transcript
// holds the call in time. fork is what a fork already found for this
// call, if it is one: its transcript, or none.
func (s *Server) findConversation(ctx context.Context, req *mcp.CallToolRequest, fork *hostFork) *conversation {
	host := s.hostOf(req)
	if host == "" {
		return nil
	}
	if fork != nil {
		if fork.transcript == nil || fork.transcript.SessionID == "" {
			return nil
		}
		return &conversation{host: host, id: fork.transcript.SessionID}
	}
	// Over HTTP in the 2026-07-28 revision every request is looked up
	// afresh: one look, without waiting for the host to write the call,
	// so that a host whose transcripts are elsewhere does not wait at
	// every call (its tasks then belong to its token).
	wait := ownerCallWait
	if stateless(req) {
		wait = 0
	}
	t, _, err := s.pendingCall(ctx, req, host, wait)
	if err != nil {
		s.log.Debug("host conversation not found: this connection keeps its own tasks", "host", host, "error", err)
		return nil
	}
	return &conversation{host: host, id: t.SessionID}
}

// pendingCall finds the host's transcript whose newest assistant message
// is the call req, and what it read of it, waiting up to wait for the
// host to write it (busyHostWait times that while the host writes this
// workspace's transcripts): hosts write a call to their transcript about
// when they send it.
func (s *Server) pendingCall(ctx context.Context, req *mcp.CallToolRequest, host transcripts.Host, wait time.Duration) (transcripts.Transcript, transcripts.Result, error) {
	dir := s.rt.WorkspaceDir()
	env := transcripts.Env{Getenv: s.getenv}
	var (
		name string
		args = []byte("{}")
	)
	if req.Params != nil {
		name = req.Params.Name
		if len(req.Params.Arguments) > 0 {
			args = req.Params.Arguments
		}
	}
	began := time.Now()
	deadline, extended := began.Add(wait), false
	for {
		t, read, err := transcripts.FindPendingCall(ctx, host, dir, env, name, args)
		if err == nil || !errors.Is(err, sa.ErrNotFound) {
			return t, read, err
		}
		if time.Now().After(deadline) {
			// A host that wrote this workspace's transcript around the time
			// of the call is at work on it, only late (a machine stalled
			// for seconds): it gets longer. One that wrote none gets no
			// more, so as to say so without a long wait.
			if extended || !hostWroteSince(ctx, host, dir, env, began.Add(-wait)) {
				return t, read, err
			}
			deadline, extended = began.Add(busyHostWait*wait), true
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return transcripts.Transcript{}, transcripts.Result{}, ctx.Err()
		}
	}
}

// busyHostWait: a host writing its transcript meanwhile gets this many
// times a pending call's wait.
const busyHostWait = 4

// hostWroteSince reports whether the host wrote one of its transcripts for
// dir after since.
func hostWroteSince(ctx context.Context, host transcripts.Host, dir string, env transcripts.Env, since time.Time) bool {
	ts, err := transcripts.Find(ctx, host, dir, env)
	return err == nil && slices.ContainsFunc(ts, func(t transcripts.Transcript) bool { return t.Updated.After(since) })
}

// conversationSession finds the store session of the client's
// conversation, or, with create, makes it. It sets the client's session,
// link and notice position; c.mu is held.
func (s *Server) conversationSession(ctx context.Context, c *client, create bool) error {
	host, id := string(c.conv.host), c.conv.id
	var (
		link sa.HostLink
		err  error
	)
	if create {
		link, err = s.rt.Sessions().OpenConversation(ctx, host, id, title(c.info)+" · "+c.conv.label())
	} else if link, err = s.rt.Sessions().Conversation(ctx, host, id); errors.Is(err, sa.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("the session of %s conversation %s: %w", c.conv.host.Label(), id, err)
	}
	c.sessionID, c.link = link.SessionID, &link
	c.checked = link.NoticesDelivered
	return nil
}

// catchUp moves the client's notice position to its conversation's, which
// another connection of the conversation may have moved meanwhile, so
// that a notice is given once per conversation. c.noticeMu is held.
func (s *Server) catchUp(ctx context.Context, c *client) {
	if c.link == nil {
		return
	}
	cur, err := s.rt.Store().HostLink(ctx, c.link.Host, c.link.HostSessionID)
	if err != nil {
		s.log.Debug("notice position not read", "session", c.link.SessionID, "error", err)
		return
	}
	if cur.SessionID == c.link.SessionID {
		c.link = &cur
		c.checked = max(c.checked, cur.NoticesDelivered)
	}
}

// delivered records that the client's conversation got the notices up to
// message upTo, so that its later connections do not get them again. A
// failure costs a notice repeated, not lost: it is only logged.
// c.noticeMu is held.
func (s *Server) delivered(ctx context.Context, c *client, upTo int64) {
	if c.link == nil || c.link.NoticesDelivered >= upTo {
		return
	}
	moved, err := s.rt.Sessions().DeliverNotices(ctx, *c.link, upTo)
	if err != nil {
		s.log.Debug("notice position not stored", "session", c.link.SessionID, "error", err)
		return
	}
	c.link = &moved
}
