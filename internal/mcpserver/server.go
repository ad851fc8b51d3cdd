// Package mcpserver offers the background-task tools to any agent host
// over the Model Context Protocol: superagents_task, superagents_output,
// superagents_list, superagents_cancel and superagents_clear, over stdio
// (superagents mcp) or streamable HTTP (/mcp on superagents serve).
//
// The tools are the task manager's own: the same names, descriptions, input
// structs (the JSON schemas are inferred from them) and handlers, so agents
// inside superagents and agents in other hosts see one tool set.
//
// The tasks a client launches hang from a parent session in the store: the
// one of its host conversation when the host's transcript names it (a
// later process of that conversation finds them again, see
// conversation.go), else one made for the MCP session at its first call
// that needs one. A client reads, cancels and resumes only those tasks
// (and the tasks they launched): any other is not found. Every answer
// starts with the notices of the client's tasks that ended since its last
// call, in its text and in its structured content; when one of its tasks
// ends, the client also gets a logging notification (logger
// "superagents") with the notification's visible text, the hint written
// for its model, and the task's id and status.
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
	"sync/atomic"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/tasktools"
	"github.com/superagents/superagents/mcptasks"
	"github.com/superagents/superagents/transcripts"
)

const (
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
- When tasks have ended, the next answer of any superagents tool starts with their notices (each is given once); superagents_output with block: true waits for a task and returns its result.
- superagents_list shows the tasks launched from this conversation (from this connection when your host's transcript cannot be read); superagents_cancel stops one; superagents_clear cancels and clears them all.
- superagents_send tells a running task something without stopping it (it reads it before its next step); a task that asks you a question (the notice says so) is answered with it.
- resume: <task id> continues a completed task with a follow-up, in its own session.
- Tasks keep running when this connection closes; a later session of the same conversation sees them.`
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
	tools  *tasktools.Tools
	// store is read only: what the server writes goes through the runtime.
	store interface {
		sa.SessionReader
		sa.TaskReader
	}
	log *slog.Logger
	mcp *mcp.Server
	// notifier sends notifications/tasks on the connections Serve runs.
	notifier *mcptasks.Notifier
	// stdioLauncher is the principal of the clients over stdio: the
	// workspace's (see principal.go).
	stdioLauncher string

	mu        sync.Mutex
	clients   map[*mcp.ServerSession]*client
	bySession map[string][]*client // store session id → its connected clients
	closed    bool

	ctx  context.Context // ends when the server closes
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// client is one MCP session and the store session that is its parent:
// its host conversation's when the host's transcript names it (see
// conversation.go), else one of its own.
type client struct {
	ss   *mcp.ServerSession
	info *mcp.Implementation // what it says it is, if anything

	mu        sync.Mutex // serializes the session's creation and launches
	sessionID string
	looked    bool          // the host conversation was looked for
	conv      *conversation // nil: not known
	// identified is sessionID once a call looked for the conversation
	// (nil before), for the Tasks extension's requests, which must not
	// wait for mu while a launch holds it (see principal.go).
	identified atomic.Pointer[string]

	// noticeMu serialises the delivery of notices on tool results;
	// checked is the newest message of the session they were looked for
	// in; link is the conversation's host link (nil without one), whose
	// NoticesDelivered records what its connections were given.
	noticeMu sync.Mutex
	checked  int64
	link     *sa.HostLink
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
	tools, err := tasktools.New(opts.Runtime)
	if err != nil {
		return nil, fmt.Errorf("mcp server: %w", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &Server{
		rt:        opts.Runtime,
		host:      opts.Host,
		getenv:    opts.Getenv,
		tools:     tools,
		store:     opts.Runtime.Store(),
		log:       logger,
		clients:   make(map[*mcp.ServerSession]*client),
		bySession: make(map[string][]*client),
		ctx:       ctx,
		stop:      stop,
		// The workspace's path, not the server's key: a host that comes
		// back after the configuration changed gets another server.
		stdioLauncher: workspaceLauncher + digest(opts.Runtime.WorkspaceDir()),
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
		})
	s.mcp.AddReceivingMiddleware(logByDefault, s.describeForkPerClient)
	if err := s.addTools(); err != nil {
		stop()
		return nil, fmt.Errorf("mcp server: %w", err)
	}
	if err := s.installTasks(); err != nil {
		stop()
		return nil, fmt.Errorf("mcp server: %w", err)
	}
	cursor := s.rt.Events().Now() // before New returns, so no ending is missed
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
	// A listen on the connection is its client's, as its tasks/* are.
	on := newServed()
	ss, err := s.mcp.Connect(ctx, s.notifier.WrapFor(t, on.caller(s)), nil)
	on.set(ss)
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

// HTTPHandler returns the streamable HTTP transport of the server: one
// MCP session per client session (Mcp-Session-Id) for the revisions that
// have them, and each request on its own for 2026-07-28 and later. It
// serves any path: mount it where clients expect it, behind the
// authentication it needs.
func (s *Server) HTTPHandler(opts HTTPOptions) http.Handler {
	stateful := s.sessionsHandler(opts)
	// The 2026-07-28 revision has no sessions: each request stands alone
	// (and any node of a cluster may answer it). Its clients name the
	// revision in a header on every request.
	stateless := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Logger: s.log, Stateless: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Protocol-Version") >= statelessVersion {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
}

// sessionsHandler serves the revisions with sessions (Mcp-Session-Id).
func (s *Server) sessionsHandler(opts HTTPOptions) http.Handler {
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

// parent returns the client of the calling MCP session with its store
// session: at its first call, its host conversation is looked for (fork
// is what a fork already found, when the call is one), and the session
// of that conversation is its parent; else, or when the conversation is
// not known, the client gets a session of its own. Without create, a
// client whose parent does not exist yet is returned without one ("").
func (s *Server) parent(ctx context.Context, req *mcp.CallToolRequest, fork *hostFork, create bool) (*client, error) {
	ss := req.Session
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	c, ok := s.clients[ss]
	if !ok {
		c = &client{ss: ss, info: clientInfo(req)}
		s.clients[ss] = c
		s.wg.Add(1)
		go s.forgetWhenGone(c)
	}
	s.mu.Unlock()

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sessionID != "" {
		return c, nil
	}
	defer func() {
		if c.looked {
			id := c.sessionID
			c.identified.Store(&id)
		}
	}()
	if !c.looked {
		c.looked = true
		c.conv = s.findConversation(ctx, req, fork)
		if c.conv == nil && stateless(req) {
			// Its MCP session lasts this request: the token it presents
			// owns its tasks.
			c.conv = &conversation{host: tokenHost, id: tokenOf(req)}
		}
	}
	if c.conv != nil {
		if err := s.conversationSession(ctx, c, create); err != nil {
			return nil, err
		}
	} else if create {
		sess, err := s.rt.Sessions().CreateForClient(ctx, title(c.info))
		if err != nil {
			return nil, fmt.Errorf("create the session of this MCP client: %w", err)
		}
		c.sessionID = sess.ID
	}
	// A client of a request that stands alone has nobody to tell of
	// endings: it is not registered for them.
	if c.sessionID != "" && !stateless(req) {
		s.mu.Lock()
		s.bySession[c.sessionID] = append(s.bySession[c.sessionID], c)
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
	for id, list := range s.bySession {
		if list = slices.DeleteFunc(list, func(other *client) bool { return other == c }); len(list) == 0 {
			delete(s.bySession, id)
		} else {
			s.bySession[id] = list
		}
	}
}

// clientsOf returns the connected clients whose store session is id:
// the connections of one conversation share its session.
func (s *Server) clientsOf(id string) []*client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.bySession[id])
}

// title names a client's session after what it says it is.
func title(info *mcp.Implementation) string {
	if info == nil {
		return "MCP client"
	}
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
