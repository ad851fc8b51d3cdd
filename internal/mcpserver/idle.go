package mcpserver

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	sa "github.com/superagents/superagents"
)

// sessionIDHeader names an HTTP request's MCP session (streamable HTTP).
const sessionIDHeader = "Mcp-Session-Id"

// idleSessions closes the streamable HTTP sessions whose clients went
// quiet. The SDK's own session timeout counts POSTs only, so a host that
// launched a long task and listens on its event stream for the ending
// would lose its session, and with it its list of tasks and the
// notification, while the task still runs. Here a session is idle when
// no request of its client is in flight, none came for the timeout, and
// no task it launched is still active: a quiet client is let go at most
// the timeout after its last task ended.
type idleSessions struct {
	s       *Server
	timeout time.Duration

	mu       sync.Mutex
	sessions map[string]*activity // by MCP session id
}

// activity is what a session's client did lately.
type activity struct {
	inFlight int       // POSTs being served
	last     time.Time // when the last one ended, or a task was last seen active
}

// watchIdle starts closing idle sessions until the server closes, and
// returns the handler that tells it of each client's requests.
func (s *Server) watchIdle(next http.Handler, timeout time.Duration) http.Handler {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return next
	}
	w := &idleSessions{s: s, timeout: timeout, sessions: map[string]*activity{}}
	s.wg.Add(1)
	go w.run(s.ctx)
	return w.track(next)
}

// track counts a client's POSTs, which carry its messages, as activity,
// as the SDK does; an open event stream is not activity, or a client
// that died with one open would never be let go.
func (w *idleSessions) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(rw, r)
			return
		}
		id := r.Header.Get(sessionIDHeader)
		if id != "" {
			w.begin(id)
		}
		defer func() {
			if id == "" {
				// An initialize: its answer names the new session.
				w.touch(rw.Header().Get(sessionIDHeader))
				return
			}
			w.end(id)
		}()
		next.ServeHTTP(rw, r)
	})
}

// get returns a session's activity, made on first use; w.mu is held.
func (w *idleSessions) get(id string) *activity {
	a := w.sessions[id]
	if a == nil {
		a = &activity{}
		w.sessions[id] = a
	}
	return a
}

func (w *idleSessions) begin(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.get(id).inFlight++
}

func (w *idleSessions) end(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	a := w.get(id)
	a.inFlight = max(a.inFlight-1, 0)
	a.last = time.Now()
}

// touch marks a session active now.
func (w *idleSessions) touch(id string) {
	if id == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.get(id).last = time.Now()
}

// run looks for idle sessions four times per timeout, and at least once a
// minute: one is closed at most that late.
func (w *idleSessions) run(ctx context.Context) {
	defer w.s.wg.Done()
	tick := time.NewTicker(min(max(w.timeout/4, time.Millisecond), time.Minute))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			w.sweep(ctx)
		}
	}
}

// sweep closes the sessions that are idle, and forgets those that ended.
func (w *idleSessions) sweep(ctx context.Context) {
	var quiet []*mcp.ServerSession
	w.mu.Lock()
	// Read under the lock: an entry is made only for a session that is
	// live already, so one missing here has ended.
	live := map[string]*mcp.ServerSession{}
	for ss := range w.s.mcp.Sessions() {
		live[ss.ID()] = ss
	}
	for id, a := range w.sessions {
		switch {
		case live[id] == nil:
			delete(w.sessions, id)
		case w.quiet(a):
			quiet = append(quiet, live[id])
		}
	}
	w.mu.Unlock()
	for _, ss := range quiet {
		busy, err := w.s.hasActiveTasks(ctx, ss)
		if err != nil {
			// Kept: whether its tasks run cannot be told now.
			w.s.log.Warn("MCP session kept: its tasks could not be read", "session", ss.ID(), "error", err)
			continue
		}
		if busy {
			w.touch(ss.ID())
			continue
		}
		w.mu.Lock()
		a := w.sessions[ss.ID()]
		idle := a != nil && w.quiet(a) // no request came meanwhile
		if idle {
			delete(w.sessions, ss.ID())
		}
		w.mu.Unlock()
		if idle {
			w.s.log.Info("MCP session closed after its client was idle", "session", ss.ID(), "timeout", w.timeout)
			ss.Close()
		}
	}
}

// quiet reports whether a session's client has no request in flight and
// sent none for the timeout; w.mu is held.
func (w *idleSessions) quiet(a *activity) bool {
	return a.inFlight == 0 && time.Since(a.last) >= w.timeout
}

// hasActiveTasks reports whether a task launched over an MCP session is
// queued or running.
func (s *Server) hasActiveTasks(ctx context.Context, ss *mcp.ServerSession) (bool, error) {
	s.mu.Lock()
	c := s.clients[ss]
	s.mu.Unlock()
	if c == nil {
		return false, nil // it never launched one
	}
	id := c.session()
	if id == "" {
		return false, nil
	}
	n, err := s.store.CountTasks(ctx, sa.TaskFilter{ParentSessionID: id, Active: true})
	if err != nil {
		return false, fmt.Errorf("count the active tasks of session %s: %w", id, err)
	}
	return n > 0, nil
}
