// Package httpapi is superagents over HTTP: a JSON API under /v1, a live
// event stream (Server-Sent Events) and a web dashboard. It is a thin
// adapter: sessions, turns and tasks go through the same store, engine
// and task manager as the terminal, and the event stream follows the
// store's change log, so everything from before a restart is there.
//
// Every API request needs the server's bearer token; the Host header must
// name the server itself (no DNS rebinding); no CORS headers are sent
// unless one exact origin is allowed.
package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/runtime"
)

// Defaults of Options.
const (
	DefaultMaxBodyBytes = 1 << 20
	DefaultHeartbeat    = 30 * time.Second
)

// Options configure a Server.
type Options struct {
	// Runtime runs the turns and tasks; its Store is the API's store and
	// its Bus feeds the event stream.
	Runtime *runtime.Runtime
	// Token is the bearer token every API request must carry.
	Token string
	// Version is reported by /v1/health.
	Version string
	// AllowOrigin, when set, is the one origin whose pages may call the
	// API (CORS). Without it no CORS header is ever sent.
	AllowOrigin string
	// AllowHosts are Host names accepted besides the listen address,
	// localhost, 127.0.0.1 and [::1] (for a server reached by name).
	AllowHosts []string
	// MCP, when set, is served at /mcp behind the same checks and token.
	MCP http.Handler
	// Logger receives one line per request and the server's errors; the
	// token is never logged. Nil discards.
	Logger *slog.Logger
	// RateLimit caps authenticated requests per second, with bursts of
	// RateBurst; 0 means no cap. The API and MCP each have a budget of
	// their own, so that a busy MCP client cannot starve the dashboard;
	// the event stream (one long request) is not counted.
	RateLimit float64
	RateBurst int
	// MaxBodyBytes caps request bodies (default 1 MiB).
	MaxBodyBytes int64
	// Heartbeat is how long an event stream may stay silent before a
	// heartbeat event (default 30 s).
	Heartbeat time.Duration
	// ShutdownTimeout is how long Serve lets in-flight requests finish
	// once its context is done (default 10 s).
	ShutdownTimeout time.Duration
}

// Server is the HTTP API. Serve runs it on a listener.
type Server struct {
	opts Options
	rt   *runtime.Runtime
	// store is read only: what the API writes goes through the runtime.
	store interface {
		sa.SessionReader
		sa.TaskReader
		sa.ChangeLog
		InputRequests(ctx context.Context, taskID string) ([]sa.InputRequest, error)
	}
	log     *slog.Logger
	maxBody int64
	started time.Time
	turns   *runtime.Turns
	frames  frameCache
	counts  countCache

	// apiLimit and mcpLimit cap the requests to the API and to MCP; nil
	// when there is no cap.
	apiLimit, mcpLimit *rate.Limiter

	// streams ends the event streams when the server shuts down: they
	// would otherwise hold Shutdown until its timeout.
	streams    context.Context
	endStreams context.CancelFunc

	mu    sync.Mutex
	hosts map[string]bool // Host header values allowed, set by Serve
}

// New checks the options and makes a server.
func New(opts Options) (*Server, error) {
	switch {
	case opts.Runtime == nil:
		return nil, errors.New("httpapi: a runtime is required")
	case len(opts.Token) < 16:
		return nil, errors.New("httpapi: a token of at least 16 characters is required")
	case opts.RateLimit < 0:
		return nil, errors.New("httpapi: the rate limit cannot be negative")
	}
	if opts.AllowOrigin != "" {
		if err := checkOrigin(opts.AllowOrigin); err != nil {
			return nil, err
		}
	}
	s := &Server{
		opts:    opts,
		rt:      opts.Runtime,
		store:   opts.Runtime.Store(),
		log:     opts.Logger,
		maxBody: opts.MaxBodyBytes,
		started: time.Now(),
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.opts.Heartbeat <= 0 {
		s.opts.Heartbeat = DefaultHeartbeat
	}
	if s.opts.ShutdownTimeout <= 0 {
		s.opts.ShutdownTimeout = config.DefaultShutdownTimeout
	}
	if opts.RateLimit > 0 {
		s.apiLimit = rate.NewLimiter(rate.Limit(opts.RateLimit), max(opts.RateBurst, 1))
		s.mcpLimit = rate.NewLimiter(rate.Limit(opts.RateLimit), max(opts.RateBurst, 1))
	}
	s.streams, s.endStreams = context.WithCancel(context.Background())
	s.turns = newTurns(opts.Runtime, s.log)
	return s, nil
}

// Serve answers requests on ln until ctx is done, then shuts down
// gracefully: event streams end, in-flight requests get ShutdownTimeout
// to finish, and running turns are stopped. The task manager is the
// caller's to close afterwards (its running tasks then end as
// interrupted).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.mu.Lock()
	s.hosts = allowedHosts(ln.Addr(), s.opts.AllowHosts)
	s.mu.Unlock()
	hs := &http.Server{
		Handler:           s.handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	hs.RegisterOnShutdown(s.endStreams)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		s.endStreams()
		s.turns.Stop()
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ShutdownTimeout)
	defer cancel()
	err := hs.Shutdown(shutdownCtx)
	if err != nil {
		err = fmt.Errorf("shutdown: requests still running after %s were cut: %w", s.opts.ShutdownTimeout, err)
		hs.Close()
	}
	<-served // http.ErrServerClosed
	s.turns.Stop()
	return err
}

// handler returns the checks every request goes through, then the routes.
func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	s.routes(mux)
	return s.logRequests(s.guard(jsonErrors(mux)))
}

func (s *Server) routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/health", s.health)
	mux.HandleFunc("GET /v1/stats", s.stats)
	mux.HandleFunc("GET /v1/agents", s.listAgents)
	mux.HandleFunc("GET /v1/tasks", s.listTasks)
	mux.HandleFunc("POST /v1/tasks", s.launchTask)
	mux.HandleFunc("GET /v1/tasks/{id}", s.getTask)
	mux.HandleFunc("GET /v1/tasks/{id}/messages", s.taskMessages)
	mux.HandleFunc("POST /v1/tasks/{id}/messages", s.sendToTask)
	mux.HandleFunc("GET /v1/tasks/{id}/inbox", s.taskInbox)
	mux.HandleFunc("POST /v1/tasks/{id}/cancel", s.cancelTask)
	mux.HandleFunc("POST /v1/tasks/{id}/resume", s.resumeTask)
	mux.HandleFunc("GET /v1/batches/{batch}", s.batch)
	// The batch's first name, kept for the clients that use it.
	mux.HandleFunc("GET /v1/task-groups/{batch}", s.batch)
	mux.HandleFunc("GET /v1/sessions", s.listSessions)
	mux.HandleFunc("POST /v1/sessions", s.createSession)
	mux.HandleFunc("GET /v1/sessions/{id}", s.getSession)
	mux.HandleFunc("GET /v1/sessions/{id}/history", s.sessionHistory)
	mux.HandleFunc("POST /v1/sessions/{id}/messages", s.postMessage)
	mux.HandleFunc("POST /v1/sessions/{id}/fork", s.forkSession)
	mux.HandleFunc("POST /v1/sessions/{id}/clear", s.clearSession)
	mux.HandleFunc("DELETE /v1/sessions/{id}", s.deleteSession)
	mux.HandleFunc("POST /v1/sessions/{id}/tasks/clear", s.clearTasks)
	mux.HandleFunc("POST /v1/sessions/{id}/compact", s.compactSession)
	mux.HandleFunc("GET /v1/sessions/{id}/cost", s.sessionCost)
	mux.HandleFunc("GET /v1/events", s.events)
	if s.opts.MCP != nil {
		mcp := s.endStreamsOnShutdown(s.opts.MCP)
		mux.Handle("/mcp", mcp)
		mux.Handle("/mcp/", mcp)
	}
	s.dashboardRoutes(mux)
}

// endStreamsOnShutdown ends a handler's GET requests (the MCP transport's
// event streams) when the server shuts down, as the API's own stream
// ends; other requests may finish.
func (s *Server) endStreamsOnShutdown(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			h.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		defer context.AfterFunc(s.streams, cancel)()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// needsToken reports whether a path is behind the token: the API and MCP.
// The dashboard's page and assets are not: they hold no data, and a
// browser cannot send a header when it opens a page.
func needsToken(path string) bool {
	return isAPI(path) || isMCP(path)
}

func isAPI(path string) bool { return path == "/v1" || strings.HasPrefix(path, "/v1/") }
func isMCP(path string) bool { return path == "/mcp" || strings.HasPrefix(path, "/mcp/") }

// limiterFor returns the rate limit a request counts against, nil for
// none: the event stream is one long request (its reconnections are
// paced by the retry it announces), and the dashboard's files are not
// behind the token.
func (s *Server) limiterFor(r *http.Request) *rate.Limiter {
	switch {
	case isMCP(r.URL.Path):
		return s.mcpLimit
	case r.URL.Path == "/v1/events" && r.Method == http.MethodGet:
		return nil
	case isAPI(r.URL.Path):
		return s.apiLimit
	}
	return nil
}

// jsonErrors answers, as JSON errors, the requests the mux itself would
// refuse in plain text: unknown paths (404) and wrong methods (405, with
// the Allow header).
func jsonErrors(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if clean := cleanPath(r.URL.Path); clean != r.URL.Path && r.Method != http.MethodConnect {
			// The mux would redirect with an HTML body and a 301, which
			// turns a POST into a GET.
			loc := (&url.URL{Path: clean, RawQuery: r.URL.RawQuery}).String()
			w.Header().Set("Location", loc)
			writeError(w, http.StatusPermanentRedirect, "%s is not a clean path: use %s", r.URL.Path, clean)
			return
		}
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		probe := &headerProbe{header: http.Header{}}
		h.ServeHTTP(probe, r)
		switch probe.status {
		case http.StatusMethodNotAllowed:
			w.Header().Set("Allow", probe.header.Get("Allow"))
			writeError(w, http.StatusMethodNotAllowed, "method %s is not allowed on %s: use %s", r.Method, r.URL.Path, probe.header.Get("Allow"))
		case http.StatusNotFound, 0:
			writeError(w, http.StatusNotFound, "no such endpoint: %s %s", r.Method, r.URL.Path)
		default: // a redirect
			for k, v := range probe.header {
				w.Header()[k] = v
			}
			w.WriteHeader(probe.status)
		}
	})
}

// cleanPath is the path the mux would redirect p to, as net/http cleans
// it: no empty, . or .. elements, a trailing slash kept.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// headerProbe records what the mux's own error handlers would answer.
type headerProbe struct {
	header http.Header
	status int
}

func (p *headerProbe) Header() http.Header { return p.header }
func (p *headerProbe) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	return len(b), nil
}
func (p *headerProbe) WriteHeader(status int) {
	if p.status == 0 {
		p.status = status
	}
}

// logRequests logs one line per request: method, path, status, time.
// Neither headers nor query strings are logged.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		s.log.InfoContext(r.Context(), "request", slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", rec.statusCode()), slog.Duration("took", time.Since(start)))
	})
}

// statusRecorder remembers the status a handler wrote; Unwrap lets
// http.ResponseController reach the connection (to flush streams).
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *statusRecorder) statusCode() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}
