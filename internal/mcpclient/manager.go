package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/superagents/superagents/internal/tools"
)

// Server states, as Status reports them.
const (
	StateNotStarted = "not started"
	StateRunning    = "running"
	StateFailed     = "failed"    // the last start failed, or it died
	StateUntrusted  = "untrusted" // a project server in a project not trusted
	StateDisabled   = "disabled"
	StateInvalid    = "invalid" // its configuration is wrong
	StateStopped    = "stopped" // the manager was closed
)

// Options configure a Manager.
type Options struct {
	// Root is the workspace: the working directory of stdio servers.
	Root string
	// Env is the environment stdio servers start from (the process's own
	// when nil); a server's own "env" is added to it.
	Env []string
	// ProjectTrusted lets the project's servers run.
	ProjectTrusted bool
	// ToolTimeout bounds each tool call; 0 means the default.
	ToolTimeout time.Duration
	// StartupTimeout bounds a start and its handshake; 0 means the default.
	StartupTimeout time.Duration
	// Version is the client version servers are told.
	Version string
}

// Default timeouts.
const (
	DefaultToolTimeout    = 2 * time.Minute
	DefaultStartupTimeout = 30 * time.Second
)

// Backoff after a failed start or a death: doubling from minBackoff up to
// maxBackoff. A server that ran for stableAfter starts afresh.
const (
	minBackoff  = time.Second
	maxBackoff  = time.Minute
	stableAfter = time.Minute
	// terminateWait is how long a stdio server may take to exit once its
	// input is closed, before it is signalled.
	terminateWait = 2 * time.Second
)

// ErrClosed: the manager was closed.
var ErrClosed = errors.New("MCP servers are stopped")

// Manager owns a process's MCP servers. It is safe for concurrent use.
type Manager struct {
	opts    Options
	servers []*server // sorted by name
}

// NewManager returns a manager of the servers; none starts before it is
// used.
func NewManager(servers Servers, opts Options) *Manager {
	if opts.ToolTimeout <= 0 {
		opts.ToolTimeout = DefaultToolTimeout
	}
	if opts.StartupTimeout <= 0 {
		opts.StartupTimeout = DefaultStartupTimeout
	}
	m := &Manager{opts: opts}
	for _, spec := range servers.List {
		m.servers = append(m.servers, &server{spec: spec, opts: &m.opts})
	}
	sort.Slice(m.servers, func(i, j int) bool { return m.servers[i].spec.Name < m.servers[j].spec.Name })
	return m
}

// Tools starts the servers that have not started yet (in parallel) and
// returns the tools of those that run, ordered by server and then as each
// server lists them. A server that cannot start contributes no tools but
// keeps those it had, which then report it unavailable; Tools itself
// fails only when ctx ends.
func (m *Manager) Tools(ctx context.Context) ([]tools.Tool, error) {
	var wg sync.WaitGroup
	for _, s := range m.servers {
		if s.runnable() {
			wg.Go(func() { _, _ = s.session(ctx) })
		}
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("MCP tools: %w", err)
	}
	var out []tools.Tool
	for _, s := range m.servers {
		if s.runnable() {
			out = append(out, s.toolList()...)
		}
	}
	return out, nil
}

// ToolsFor is Tools for an agent whose profile lists these tool patterns
// (nil: every tool): when none of them can match an MCP tool's name, no
// server is started.
func (m *Manager) ToolsFor(ctx context.Context, patterns []string) ([]tools.Tool, error) {
	if patterns != nil && !slices.ContainsFunc(patterns, mayMatchPrefix) {
		return nil, nil
	}
	return m.Tools(ctx)
}

// mayMatchPrefix reports whether a tool pattern (a path.Match glob) can
// match a name that starts with Prefix: its literal start, up to its first
// special character, and Prefix must agree.
func mayMatchPrefix(pattern string) bool {
	lit := pattern
	if i := strings.IndexAny(pattern, `*?[\`); i >= 0 {
		lit = pattern[:i]
	}
	return strings.HasPrefix(lit, Prefix) || strings.HasPrefix(Prefix, lit)
}

// Close stops every server (their process groups included) and waits for
// them.
func (m *Manager) Close() error {
	var wg sync.WaitGroup
	errs := make([]error, len(m.servers))
	for i, s := range m.servers {
		wg.Go(func() { errs[i] = s.close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// server is one configured server and, while it runs, its session.
type server struct {
	spec Spec
	opts *Options

	// stale is set by the server's tools/list_changed notification. It is
	// atomic because the SDK calls the handler from its reading goroutine,
	// which must never wait for mu.
	stale atomic.Bool

	mu        sync.Mutex
	sess      *mcp.ClientSession
	pgid      int // the stdio server's process group; 0 if none
	tools     []*mcp.Tool
	lastErr   error
	failures  int
	retryAt   time.Time
	startedAt time.Time
	closed    bool
	watchers  sync.WaitGroup
	// stderr keeps the end of the stdio server's stderr (of its last
	// start), for the user to see why it failed.
	stderr *tailWriter
}

// runnable reports whether the server may be started at all.
func (s *server) runnable() bool {
	return s.state() == StateNotStarted || s.state() == StateRunning || s.state() == StateFailed
}

func (s *server) state() string {
	switch {
	case s.spec.Err != nil:
		return StateInvalid
	case s.spec.Disabled:
		return StateDisabled
	case s.spec.Project && !s.opts.ProjectTrusted:
		return StateUntrusted
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return StateStopped
	case s.sess != nil:
		return StateRunning
	case s.lastErr != nil:
		return StateFailed
	}
	return StateNotStarted
}

// session returns the running session, starting the server when it is not
// running and its backoff has passed, and re-reading its tools when the
// server said they changed.
func (s *server) session(ctx context.Context) (*mcp.ClientSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if s.sess == nil {
		if wait := time.Until(s.retryAt); wait > 0 && s.lastErr != nil {
			return nil, fmt.Errorf("%w (next attempt in %s)", s.lastErr, wait.Round(time.Second))
		}
		if err := s.start(ctx); err != nil {
			if ctx.Err() == nil {
				s.fail(err)
			}
			return nil, err
		}
		return s.sess, nil
	}
	if s.stale.Swap(false) {
		if list, err := listTools(ctx, s.sess, s.opts.StartupTimeout); err == nil {
			s.tools = list
		}
	}
	return s.sess, nil
}

// fail records a failed start or a death and schedules the next attempt.
// Called with mu held.
func (s *server) fail(err error) {
	s.lastErr = err
	s.failures++
	backoff := min(maxBackoff, minBackoff<<min(s.failures-1, 10))
	s.retryAt = time.Now().Add(backoff)
}

// start connects to the server and lists its tools. Called with mu held.
func (s *server) start(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.StartupTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "superagents", Version: s.opts.Version}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { s.stale.Store(true) },
		// No roots (a deprecated feature): servers keep the directories
		// their configuration gives them.
		Capabilities: &mcp.ClientCapabilities{},
	})
	transport, cmd, err := s.transport()
	if err != nil {
		return err
	}
	sess, err := client.Connect(ctx, transport, nil)
	pgid := 0
	if cmd != nil && cmd.Process != nil {
		pgid = cmd.Process.Pid // Setpgid: the group is named after its leader
	}
	if err != nil {
		killGroup(pgid)
		return s.startError(ctx, err)
	}
	list, err := listTools(ctx, sess, s.opts.StartupTimeout)
	if err != nil {
		_ = sess.Close()
		killGroup(pgid)
		return s.startError(ctx, fmt.Errorf("list its tools: %w", err))
	}
	s.sess, s.pgid, s.tools = sess, pgid, list
	s.lastErr, s.startedAt = nil, time.Now()
	s.stale.Store(false)
	s.watchers.Add(1)
	go s.watch(sess, pgid)
	return nil
}

// startError words a failed start for the model and the user, without
// the server's secrets.
func (s *server) startError(ctx context.Context, err error) error {
	return errors.New(s.spec.redact(s.startErrorText(ctx, err).Error()))
}

func (s *server) startErrorText(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("MCP server %q did not start within %s", s.spec.Name, s.opts.StartupTimeout)
	}
	var execErr *exec.Error
	if errors.As(err, &execErr) {
		return fmt.Errorf("MCP server %q cannot start: command %q: %v", s.spec.Name, execErr.Name, execErr.Err)
	}
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) && pathErr.Op == "fork/exec" {
		return fmt.Errorf("MCP server %q cannot start: command %q: %v", s.spec.Name, pathErr.Path, pathErr.Err)
	}
	return fmt.Errorf("MCP server %q failed to start: %w", s.spec.Name, err)
}

// watch waits for the session to end. If the server died (rather than
// being closed or dropped, which stop it themselves), what is left of its
// process group is killed and the next use restarts it after a backoff.
func (s *server) watch(sess *mcp.ClientSession, pgid int) {
	defer s.watchers.Done()
	err := sess.Wait()
	s.mu.Lock()
	died := s.sess == sess
	if died {
		s.sess, s.pgid = nil, 0
		if time.Since(s.startedAt) >= stableAfter {
			s.failures = 0
		}
		msg := fmt.Sprintf("MCP server %q stopped", s.spec.Name)
		if err != nil {
			msg += ": " + err.Error()
		}
		s.fail(errors.New(s.spec.redact(msg)))
	}
	s.mu.Unlock()
	if died {
		killGroup(pgid)
		_ = sess.Close() // releases what the session keeps running
	}
}

// drop ends a session whose connection failed, so that the next use starts
// the server again.
func (s *server) drop(sess *mcp.ClientSession, cause error) {
	s.mu.Lock()
	if s.sess != sess {
		s.mu.Unlock()
		return
	}
	pgid := s.pgid
	s.sess, s.pgid = nil, 0
	s.fail(errors.New(s.spec.redact(fmt.Sprintf("MCP server %q stopped answering: %v", s.spec.Name, cause))))
	s.mu.Unlock()
	_ = sess.Close()
	killGroup(pgid)
}

// close stops the server for good.
func (s *server) close() error {
	s.mu.Lock()
	sess, pgid := s.sess, s.pgid
	s.sess, s.pgid, s.closed = nil, 0, true
	s.mu.Unlock()
	var err error
	if sess != nil {
		err = sess.Close()
		killGroup(pgid)
	}
	s.watchers.Wait()
	if err != nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		var exit *exec.ExitError
		if errors.As(err, &exit) || errors.Is(err, exec.ErrWaitDelay) {
			return nil // killed on the way out, or its children were: what was asked
		}
		return fmt.Errorf("stop MCP server %q: %w", s.spec.Name, err)
	}
	return nil
}

// transport returns the transport of the server's type, and for stdio the
// command it will start.
func (s *server) transport() (mcp.Transport, *exec.Cmd, error) {
	switch s.spec.Type {
	case Stdio:
		cmd := exec.Command(s.spec.Command, s.spec.Args...)
		cmd.Dir = s.opts.Root
		base := s.opts.Env
		if base == nil {
			base = os.Environ()
		}
		cmd.Env = append(append([]string(nil), base...), envList(s.spec.Env)...)
		// Its own process group, so that stopping it stops what it started
		// (npx runs node, for one); and, where the system can, killed with
		// this process.
		cmd.SysProcAttr = serverProcAttr()
		s.stderr = &tailWriter{}
		cmd.Stderr = s.stderr
		// What it started may hold stderr open after it exits: do not wait
		// for them (their process group is killed next).
		cmd.WaitDelay = terminateWait
		return &mcp.CommandTransport{Command: cmd, TerminateDuration: terminateWait}, cmd, nil
	case HTTP:
		return &mcp.StreamableClientTransport{Endpoint: s.spec.URL, HTTPClient: s.httpClient(), MaxRetries: 2}, nil, nil
	case SSE:
		return detached{&mcp.SSEClientTransport{Endpoint: s.spec.URL, HTTPClient: s.httpClient()}}, nil, nil
	}
	return nil, nil, fmt.Errorf("MCP server %q: unknown type %q", s.spec.Name, s.spec.Type)
}

// detached connects without the start's deadline: the SSE transport ties
// its event stream to the context Connect gets, and that stream must
// outlive the start (the handshake itself still has the deadline).
type detached struct{ mcp.Transport }

func (d detached) Connect(ctx context.Context) (mcp.Connection, error) {
	return d.Transport.Connect(context.WithoutCancel(ctx))
}

func (s *server) httpClient() *http.Client {
	if len(s.spec.Headers) == 0 {
		return nil
	}
	return &http.Client{Transport: headerTransport{headers: s.spec.Headers, base: http.DefaultTransport}}
}

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

func envList(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// killGroup kills what is left of a stdio server's process group.
func killGroup(pgid int) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

func listTools(ctx context.Context, sess *mcp.ClientSession, timeout time.Duration) ([]*mcp.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var list []*mcp.Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		list = append(list, t)
	}
	return list, nil
}

// isProtocolError reports whether err is the server's own JSON-RPC error
// answer (the session is fine) rather than a broken connection.
func isProtocolError(err error) bool {
	var w *jsonrpc.Error
	return errors.As(err, &w)
}
