package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	sa "github.com/superagents/superagents"
)

// The Tasks extension's requests (tasks/get, tasks/update, tasks/cancel,
// and subscriptions/listen with task ids) name a task by its id alone, and
// carry no tool call by which a host conversation could be told. The ids
// are in the store, which more than the host may read, so knowing one is
// not enough: each task records the principal an MCP client launched it
// as (sa.Task.Launcher), stored with the task so that any node checks it,
// and a request reaches the task only as that principal, told as well as
// its transport allows:
//
//   - over HTTP, the holder of the API token the request presents (the one
//     person who reads every task through the HTTP API anyway): any client
//     with that token, on any node;
//   - over stdio (the background server's socket, private to the user),
//     the workspace of the server, whose tasks no other workspace's server
//     reaches though they share the store; and, once a call of the
//     connection told whose it is, its host conversation (or the
//     connection itself when the conversation is not known): the
//     connection then reaches that session's tasks alone. A connection
//     that has made no call yet is taken for a later process of one of the
//     workspace's host conversations (Claude Code polls, after --resume, a
//     task an earlier process launched, before any call): it reaches the
//     tasks of the workspace's conversations, never the tasks another
//     connection keeps as its own.
//
// Any other task is not found, as an unknown one is.

// The kinds of launcher, each followed by a digest: of the API token, or
// of the workspace's path.
const (
	tokenLauncher     = "token:"
	workspaceLauncher = "workspace:"
)

// digest names a value without keeping it.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// overHTTP reports whether a request came over streamable HTTP.
func overHTTP(req mcp.Request) bool {
	extra := req.GetExtra()
	return extra != nil && extra.Header != nil
}

// launcherOf is the principal the tasks a request launches record.
func (s *Server) launcherOf(req mcp.Request) string {
	if overHTTP(req) {
		return tokenLauncher + tokenOf(req)
	}
	return s.stdioLauncher
}

// principal is who sends a request of the Tasks extension.
type principal struct {
	// launcher is what the tasks it launched record.
	launcher string
	// Over stdio, once a call of the connection told it: known, and the
	// store session the connection's tasks hang from ("" while there is
	// none).
	known   bool
	session string
}

// sessionMark separates, in a caller's name, its launcher from its
// connection's session; launchers hold no space.
const sessionMark = " session:"

// String is the principal as mcptasks passes it to the backend (the
// caller); parsePrincipal reads it back.
func (p principal) String() string {
	if !p.known {
		return p.launcher
	}
	return p.launcher + sessionMark + p.session
}

func parsePrincipal(caller string) principal {
	launcher, session, known := strings.Cut(caller, sessionMark)
	return principal{launcher: launcher, known: known, session: session}
}

// caller names who sends a tasks/* request (mcptasks.Options.Caller).
func (s *Server) caller(_ context.Context, req mcp.Request) (string, error) {
	if overHTTP(req) {
		return principal{launcher: s.launcherOf(req)}.String(), nil
	}
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok || ss == nil {
		return "", errors.New("the request came on no connection")
	}
	return s.connectionPrincipal(ss).String(), nil
}

// connectionPrincipal is who is at the other end of a connection over
// stdio: the workspace's client, and what its calls told.
func (s *Server) connectionPrincipal(ss *mcp.ServerSession) principal {
	p := principal{launcher: s.stdioLauncher}
	s.mu.Lock()
	c := s.clients[ss]
	s.mu.Unlock()
	if c != nil {
		if id := c.identified.Load(); id != nil {
			p.known, p.session = true, *id
		}
	}
	return p
}

// served is the MCP session of one connection over stdio, once Connect
// made it: the notifier may read the connection's first listen before.
type served struct {
	ready chan struct{}
	ss    *mcp.ServerSession // nil: the connection was not served
}

func newServed() *served { return &served{ready: make(chan struct{})} }

// set records the session (nil when Connect failed); call it once.
func (v *served) set(ss *mcp.ServerSession) {
	v.ss = ss
	close(v.ready)
}

// caller names who sends the connection's listens (see
// mcptasks.Notifier.WrapFor).
func (v *served) caller(s *Server) func(ctx context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		select {
		case <-v.ready:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if v.ss == nil {
			return "", errors.New("the connection was not served")
		}
		return s.connectionPrincipal(v.ss).String(), nil
	}
}

// reaches reports whether p may have task t: the task of its line an MCP
// client launched (t itself, or the ancestor that launched it) was
// launched as p's launcher; over stdio it also hangs from p's session
// when p's connection told it, else from a host conversation's session.
func (s *Server) reaches(ctx context.Context, p principal, t sa.Task) (bool, error) {
	launched, err := s.launchedOverMCP(ctx, t)
	if err != nil || launched.Launcher == "" || launched.Launcher != p.launcher {
		return false, err
	}
	switch {
	case strings.HasPrefix(p.launcher, tokenLauncher):
		return true, nil
	case p.known:
		return p.session != "" && launched.ParentSessionID == p.session, nil
	}
	links, err := s.rt.Store().SessionHostLinks(ctx, []string{launched.ParentSessionID})
	if err != nil {
		return false, fmt.Errorf("task %s: the host link of its session: %w", sa.ShortID(t.ID), err)
	}
	_, conversation := links[launched.ParentSessionID]
	return conversation, nil
}

// launchedOverMCP is the task of t's line that an MCP client launched: t,
// or the nearest of its ancestors with a launcher; the zero task when no
// MCP client launched the line.
func (s *Server) launchedOverMCP(ctx context.Context, t sa.Task) (sa.Task, error) {
	id := t.ID
	for range maxLineage {
		if t.Launcher != "" {
			return t, nil
		}
		parent, err := s.store.Task(ctx, t.ParentSessionID)
		if errors.Is(err, sa.ErrNotFound) {
			return sa.Task{}, nil // a root session, and no launcher on the way
		}
		if err != nil {
			return sa.Task{}, fmt.Errorf("task %s: %w", sa.ShortID(id), err)
		}
		t = parent
	}
	return sa.Task{}, fmt.Errorf("%w: task %s has more than %d ancestors", sa.ErrCorrupt, sa.ShortID(id), maxLineage)
}
