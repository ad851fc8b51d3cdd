// Package mcpserver offers the background-task tools to any agent host
// over the Model Context Protocol: superagents_task, superagents_output,
// superagents_list, superagents_cancel and superagents_clear, over stdio
// (superagents mcp) or streamable HTTP (/mcp on superagents serve).
//
// The tools are the task manager's own: the same names, descriptions, input
// structs (the JSON schemas are inferred from them) and handlers, so agents
// inside superagents and agents in other hosts see one tool set.
//
// Each MCP session is a parent session in the store, created at its first
// call of a tool that needs one and titled after the client, so that
// superagents_list shows that client's tasks only. A client reads,
// cancels and resumes only its own tasks (and the tasks they launched):
// any other is not found. When one of its tasks
// ends, the client gets a logging notification (logger "superagents")
// with the notification's visible text, the hint written for its model,
// and the task's id and status.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/events"
	"github.com/superagents/superagents/runtime"
	"github.com/superagents/superagents/tasks"
	"github.com/superagents/superagents/transcripts"
)

const (
	// AgentName is the agent recorded on the sessions of MCP clients.
	AgentName = sa.MCPClientAgent
	// LoggerName names the logging notifications that report task endings.
	LoggerName = "superagents"
	// statelessVersion is the first protocol revision without sessions.
	statelessVersion = "2026-07-28"
	// sendTimeout bounds one notification to a client that does not read.
	sendTimeout = 10 * time.Second
	// maxTitle caps, in characters, the client name kept in a session title.
	maxTitle = 80
)

// ErrClosed is returned by Serve once the server is closed.
var ErrClosed = errors.New("mcp server closed")

// instructions tell the client's model how to use the tools (the
// initialize result's instructions), followed by what fork hands over:
// forkInstruction, or noHostForkInstruction with host transcripts off.
const (
	instructions = `superagents runs sub-agents in the background, each in its own session.
- superagents_task launches one and returns its task id at once: keep working while it runs, and launch independent tasks together. Without fork the sub-agent does not see your conversation, so put everything it needs in prompt.
- When a task ends you receive a log notification (logger "superagents") naming it; superagents_output with block: true waits for a task and returns its result.
- superagents_list shows the tasks launched over this connection; superagents_cancel stops one; superagents_clear cancels and clears them all.
- resume: <task id> continues a completed task with a follow-up, in its own session.`
	forkInstruction       = ` fork: true starts the sub-agent with a digest of your own conversation, read from the transcript your host writes (Claude Code, Codex, OpenCode); the reply says if it could not be read.`
	noHostForkInstruction = ` fork: true hands over this connection's record (the notices of earlier tasks), not your own conversation.`
)

// Options configure a Server.
type Options struct {
	// Runtime runs the tasks; its store and bus are the server's.
	Runtime *runtime.Runtime
	// Version is the server version reported to clients.
	Version string
	// Logger receives diagnostics (never protocol traffic); nil discards
	// them.
	Logger *slog.Logger
	// Host names the agent host whose transcripts a fork reads
	// (claude-code, codex, opencode), or HostNone; empty: the one the
	// client's name in initialize says.
	Host string
	// Getenv finds the host's files (HOME, CLAUDE_CONFIG_DIR, CODEX_HOME,
	// XDG_DATA_HOME); os.Getenv when nil.
	Getenv func(string) string
}

// Server serves the task tools to MCP clients, over any number of
// connections at once. It is safe for concurrent use.
type Server struct {
	rt     *runtime.Runtime
	host   string
	getenv func(string) string
	mgr    *tasks.Manager
	// store is read only: what the server writes goes through the runtime.
	store interface {
		sa.Sessions
		sa.Tasks
	}
	bus *events.Bus
	log *slog.Logger
	mcp *mcp.Server

	mu        sync.Mutex
	clients   map[*mcp.ServerSession]*client
	bySession map[string]*client // store session id → its client
	closed    bool

	ctx  context.Context // ends when the server closes
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// client is one MCP session and the store session that is its parent.
type client struct {
	ss *mcp.ServerSession

	mu        sync.Mutex // serializes the session's creation and launches
	sessionID string

	// noticeMu serialises the delivery of notices on tool results;
	// checked is the newest message of the session they were looked for
	// in.
	noticeMu sync.Mutex
	checked  int64
}

// New builds the server and starts forwarding task notifications.
func New(opts Options) (*Server, error) {
	if opts.Runtime == nil {
		return nil, errors.New("mcp server: a runtime is required")
	}
	if opts.Host != "" && opts.Host != HostNone {
		if _, err := transcripts.ParseHost(opts.Host); err != nil {
			return nil, fmt.Errorf("mcp server: host %q: use claude-code, codex, opencode or none", opts.Host)
		}
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &Server{
		rt:        opts.Runtime,
		host:      opts.Host,
		getenv:    opts.Getenv,
		mgr:       opts.Runtime.Tasks,
		store:     opts.Runtime.Store,
		bus:       opts.Runtime.Bus,
		log:       logger,
		clients:   make(map[*mcp.ServerSession]*client),
		bySession: make(map[string]*client),
		ctx:       ctx,
		stop:      stop,
	}
	fork := forkInstruction
	if opts.Host == HostNone {
		fork = noHostForkInstruction
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "superagents", Title: "superagents background agents", Version: cmpVersion(opts.Version)},
		&mcp.ServerOptions{
			Instructions: instructions + fork,
			Logger:       logger,
			Capabilities: capabilities(),
			// A client here is its session: the revisions without sessions
			// would leave it nobody to report to.
			SupportedProtocolVersions: slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool { return v >= statelessVersion }),
		})
	s.mcp.AddReceivingMiddleware(logByDefault, s.describeForkPerClient)
	if err := s.addTools(); err != nil {
		stop()
		return nil, fmt.Errorf("mcp server: %w", err)
	}
	cursor := s.bus.Now() // before New returns, so no ending is missed
	s.wg.Add(1)
	go s.forward(ctx, cursor)
	return s, nil
}

func cmpVersion(v string) string {
	if v == "" {
		return "dev"
	}
	return v
}

// Serve runs one MCP session over t until the client leaves (nil) or ctx
// ends (ctx's error).
func (s *Server) Serve(ctx context.Context, t mcp.Transport) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return ErrClosed
	}
	ss, err := s.mcp.Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("mcp: connect: %w", err)
	}
	s.mu.Lock()
	closed = s.closed // Close may have run meanwhile
	s.mu.Unlock()
	if closed {
		ss.Close()
		return ErrClosed
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case err := <-ended:
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
			return nil // the client hung up: the normal end
		}
		return err
	case <-ctx.Done():
		ss.Close()
		<-ended
		return ctx.Err()
	}
}

// ServeIO runs one MCP session over newline-delimited JSON-RPC on in and
// out (the stdio transport), until in ends or ctx does. Nothing but
// protocol messages is written to out.
func (s *Server) ServeIO(ctx context.Context, in io.Reader, out io.Writer) error {
	return s.Serve(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// HTTPOptions configure the streamable HTTP handler.
type HTTPOptions struct {
	// SessionTimeout closes an MCP session whose client has been idle this
	// long: no request in flight, none for SessionTimeout, and no task it
	// launched still queued or running (0: never). Its tasks stay in the
	// store.
	SessionTimeout time.Duration
}

// HTTPHandler returns the streamable HTTP transport of the server, one MCP
// session per client session (Mcp-Session-Id). It serves any path: mount
// it where clients expect it, behind the authentication it needs.
func (s *Server) HTTPHandler(opts HTTPOptions) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{
			Logger: s.log,
			// No SessionTimeout: idle sessions are closed by watchIdle,
			// which knows of the sessions' tasks.
			//
			// Kept messages let a client whose event stream broke get what
			// it missed (a task's ending) when it reconnects.
			EventStore: mcp.NewMemoryEventStore(nil),
		})
	if opts.SessionTimeout <= 0 {
		return h
	}
	return s.watchIdle(h, opts.SessionTimeout)
}

// Close ends every MCP session and stops forwarding notifications. The
// clients' tasks are the manager's: they go on until it closes.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.stop()
	for ss := range s.mcp.Sessions() {
		ss.Close()
	}
	s.wg.Wait()
	return nil
}

// parent returns the client of an MCP session, with its store session
// made on first use.
func (s *Server) parent(ctx context.Context, ss *mcp.ServerSession) (*client, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	c, ok := s.clients[ss]
	if !ok {
		c = &client{ss: ss}
		s.clients[ss] = c
		s.wg.Add(1)
		go s.forgetWhenGone(c)
	}
	s.mu.Unlock()

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sessionID == "" {
		sess, err := s.store.CreateSession(ctx, sa.NewSession{Agent: AgentName, Origin: sa.OriginMCP, Title: title(ss.InitializeParams())})
		if err != nil {
			return nil, fmt.Errorf("create the session of this MCP client: %w", err)
		}
		c.sessionID = sess.ID
		s.mu.Lock()
		s.bySession[sess.ID] = c
		s.mu.Unlock()
	}
	return c, nil
}

// session returns the client's store session id.
func (c *client) session() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

// forgetWhenGone drops a client once its MCP session ends. Its store
// session stays, with its tasks.
func (s *Server) forgetWhenGone(c *client) {
	defer s.wg.Done()
	_ = c.ss.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.clients, c.ss)
	for id, other := range s.bySession {
		if other == c {
			delete(s.bySession, id)
		}
	}
}

// clientOf returns the connected client whose store session is id.
func (s *Server) clientOf(id string) *client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bySession[id]
}

// title names a client's session after what it says it is.
func title(p *mcp.InitializeParams) string {
	if p == nil || p.ClientInfo == nil {
		return "MCP client"
	}
	info := p.ClientInfo
	name := info.Title
	if strings.TrimSpace(name) == "" {
		name = info.Name
	}
	name = strings.ToValidUTF8(name+" "+info.Version, "")
	// What a client sends is shown in listings: one line, printable, short.
	name = strings.Join(strings.FieldsFunc(name, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }), " ")
	if runes := []rune(name); len(runes) > maxTitle {
		name = string(runes[:maxTitle-1]) + "…"
	}
	if name == "" {
		return "MCP client"
	}
	return "MCP: " + name
}
