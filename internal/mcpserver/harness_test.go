//lint:file-ignore SA1019 the clients of these tests receive the task notifications, which are logging messages

package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/authtest"
	"github.com/superagents/superagents/internal/engine"
	"github.com/superagents/superagents/internal/events"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/mcpserver"
	"github.com/superagents/superagents/internal/sqlite"
	"github.com/superagents/superagents/internal/stacktest"
	"github.com/superagents/superagents/internal/tasks"
	"github.com/superagents/superagents/internal/tasktools"
	"github.com/superagents/superagents/mcptasks"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitLimit bounds every wait of these tests, so a broken server fails
// the test instead of hanging it. It is not a timing assertion.
const waitLimit = 60 * time.Second

// harness is the whole system for real: a SQLite store, the engine with
// the built-in tools, the event bus, the task manager and the MCP server,
// with the Anthropic SDK talking to a fake model server.
type harness struct {
	t     testing.TB
	stack *stacktest.Stack
	store sa.Store
	eng   *engine.Engine
	bus   *events.Bus
	mgr   *tasks.Manager
	tools *tasktools.Tools
	srv   *mcpserver.Server
	model *llmtest.Server
	ws    string
	// dir is the data directory of the store.
	dir string

	httpOnce sync.Once
	http     *httptest.Server
	// sessionTimeout is the HTTP handler's, set before the first client
	// connects over HTTP.
	sessionTimeout time.Duration
	// streams receives a value as each client opens its standalone SSE
	// stream, the one notifications travel on over HTTP.
	streams chan struct{}
	// clientTransport, if set, wraps the client side of the next
	// in-memory connection.
	clientTransport func(mcp.Transport) mcp.Transport
	// token, if set, is the API token the next HTTP connection presents.
	token string
}

// fakeModel answers by what the request holds (the sub-agent's whole
// conversation): "please stall" never answers (until the request is given
// up), "please fail" is refused with an API error, the sums get their
// words, anything else "Done.".
func fakeModel(req llmtest.Request) llmtest.Reply {
	body := string(req.Body)
	switch {
	case strings.Contains(body, "please stall"):
		return llmtest.Reply{Fault: llmtest.Stall}
	case strings.Contains(body, "please fail"):
		return llmtest.Reply{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: "this request cannot be served"}
	case strings.Contains(body, "What is 3+3?"): // a follow-up to 2+2
		return llmtest.Reply{Text: "3+3 equals 6."}
	case strings.Contains(body, "What is 2+2?"):
		return llmtest.Reply{Text: "2+2 equals 4."}
	}
	return llmtest.Reply{Text: "Done."}
}

func newHarness(t testing.TB, handle func(llmtest.Request) llmtest.Reply, storeOpts ...sqlite.Option) *harness {
	t.Helper()
	return newHarnessWith(t, handle, mcpserver.Options{}, storeOpts...)
}

// newHarnessWith is newHarness with server options (Host, Getenv); their
// Runtime and Version are the harness's.
func newHarnessWith(t testing.TB, handle func(llmtest.Request) llmtest.Reply, opts mcpserver.Options, storeOpts ...sqlite.Option) *harness {
	t.Helper()
	h := &harness{t: t, ws: t.TempDir(), dir: t.TempDir(), model: llmtest.NewAnthropic(t)}
	h.model.Handle(handle)
	h.stack = stacktest.Open(t, h.dir, h.ws, stacktest.Config(t, h.ws, h.model.BaseURL()), storeOpts...)
	h.store, h.eng, h.bus, h.mgr, h.tools = h.stack.Store, h.stack.Engine, h.stack.Bus, h.stack.Tasks, h.stack.Tools
	var err error
	opts.Runtime, opts.Version = h.stack.Runtime, "test"
	if h.srv, err = mcpserver.New(opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.close)
	return h
}

func (h *harness) close() {
	if h.http != nil {
		h.http.Close()
	}
	if err := h.srv.Close(); err != nil {
		h.t.Errorf("close server: %v", err)
	}
	if err := h.stack.Close(); err != nil {
		h.t.Errorf("close: %v", err)
	}
}

// Transports the tests run over.
const (
	inMemory       = "in-memory"
	streamableHTTP = "streamable-http"
)

var transports = []string{inMemory, streamableHTTP}

// conn is one MCP client connected to the harness's server.
type conn struct {
	t        testing.TB
	cs       *mcp.ClientSession
	logs     chan *mcp.LoggingMessageParams
	progress chan *mcp.ProgressNotificationParams
}

// connect connects a client named name over a transport. The client
// leaves when the test ends.
func (h *harness) connect(transport, name, version string) *conn {
	h.t.Helper()
	return h.connectAt(transport, name, version, sessionsRevision, nil)
}

// sessionsRevision is the newest protocol revision with sessions, which
// most tests speak (the notifications of task endings need a session);
// statelessRevision the first without.
const (
	sessionsRevision  = "2025-11-25"
	statelessRevision = "2026-07-28"
)

// connectAt is connect speaking a protocol revision, with the client's
// capabilities (nil: none).
func (h *harness) connectAt(transport, name, version, revision string, caps *mcp.ClientCapabilities) *conn {
	t := h.t
	t.Helper()
	c := &conn{t: t, logs: make(chan *mcp.LoggingMessageParams, 64), progress: make(chan *mcp.ProgressNotificationParams, 64)}
	session := &mcp.ClientSessionOptions{ProtocolVersion: revision}
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: version}, &mcp.ClientOptions{
		Capabilities: caps,
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			c.logs <- req.Params
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			c.progress <- req.Params
		},
	})
	// The Tasks extension's methods, for the clients that declare it.
	for _, err := range []error{
		mcp.AddSendingCustomMethod[*mcptasks.TaskParams, *mcptasks.Task](client, mcptasks.MethodGet),
		mcp.AddSendingCustomMethod[*mcptasks.TaskParams, *mcptasks.Ack](client, mcptasks.MethodCancel),
		mcp.AddSendingCustomMethod[*mcptasks.UpdateParams, *mcptasks.Ack](client, mcptasks.MethodUpdate),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	var err error
	switch transport {
	case inMemory:
		serverSide, clientSide := mcp.NewInMemoryTransports()
		served := make(chan error, 1)
		go func() { served <- h.srv.Serve(ctx, serverSide) }()
		var ct mcp.Transport = clientSide
		if h.clientTransport != nil {
			ct, h.clientTransport = h.clientTransport(clientSide), nil
		}
		c.cs, err = client.Connect(ctx, ct, session)
		if err == nil {
			t.Cleanup(func() {
				c.cs.Close()
				if err := <-served; err != nil {
					t.Errorf("serve: %v", err)
				}
			})
		}
	case streamableHTTP:
		h.httpOnce.Do(func() {
			h.streams = make(chan struct{}, 16)
			handler := h.srv.HTTPHandler(mcpserver.HTTPOptions{SessionTimeout: h.sessionTimeout})
			h.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					select {
					case h.streams <- struct{}{}:
					default:
					}
				}
				handler.ServeHTTP(w, r)
			}))
		})
		ct := &mcp.StreamableClientTransport{Endpoint: h.http.URL, MaxRetries: -1}
		if h.token != "" {
			ct.HTTPClient = &http.Client{Transport: authtest.Bearer(h.token, nil)}
			h.token = ""
		}
		c.cs, err = client.Connect(ctx, ct, session)
		if err == nil && revision >= statelessRevision {
			t.Cleanup(func() { c.cs.Close() }) // no session, no event stream
		} else if err == nil {
			t.Cleanup(func() { c.cs.Close() })
			// Notifications sent before the stream is open would be lost.
			select {
			case <-h.streams:
			case <-time.After(waitLimit):
				t.Fatal("the client opened no event stream")
			}
		}
	default:
		t.Fatalf("unknown transport %q", transport)
	}
	if err != nil {
		t.Fatalf("connect over %s: %v", transport, err)
	}
	return c
}

// gone is closed once the client's connection has ended: over HTTP,
// when the server closed its session.
func (c *conn) gone() <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.cs.Wait()
	}()
	return done
}

// call calls a tool; a protocol error fails the test (tool errors are
// results).
func (c *conn) call(name string, args map[string]any) *mcp.CallToolResult {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("%s %v: protocol error: %v", name, args, err)
	}
	return res
}

// ok calls a tool that must succeed and returns its text and structured
// content.
func (c *conn) ok(name string, args map[string]any) (string, map[string]any) {
	c.t.Helper()
	res := c.call(name, args)
	text := resultText(res)
	if res.IsError {
		c.t.Fatalf("%s %v: tool error: %s", name, args, text)
	}
	var data map[string]any
	raw, err := json.Marshal(res.StructuredContent)
	if err == nil {
		err = json.Unmarshal(raw, &data)
	}
	if err != nil || data == nil {
		c.t.Fatalf("%s: structured content %v: %v", name, res.StructuredContent, err)
	}
	return text, data
}

// fails calls a tool that must fail with a tool error and returns its
// message.
func (c *conn) fails(name string, args map[string]any) string {
	c.t.Helper()
	res := c.call(name, args)
	if !res.IsError {
		c.t.Fatalf("%s %v succeeded: %s", name, args, resultText(res))
	}
	return resultText(res)
}

func resultText(res *mcp.CallToolResult) string {
	var texts []string
	for _, content := range res.Content {
		if tc, ok := content.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// launch launches a task and returns its id.
func (c *conn) launch(args map[string]any) string {
	c.t.Helper()
	if args["agent"] == nil {
		args["agent"] = "general"
	}
	_, data := c.ok("superagents_task", args)
	id, _ := data["id"].(string)
	if id == "" {
		c.t.Fatalf("launch %v: no id in %v", args, data)
	}
	return id
}

// notification waits for the next task notification.
func (c *conn) notification() map[string]any {
	c.t.Helper()
	select {
	case p := <-c.logs:
		if p.Logger != mcpserver.LoggerName {
			c.t.Fatalf("log from logger %q: %v", p.Logger, p.Data)
		}
		data, ok := p.Data.(map[string]any)
		if !ok {
			c.t.Fatalf("log data is %T, not an object: %v", p.Data, p.Data)
		}
		data["level"] = string(p.Level)
		return data
	case <-time.After(waitLimit):
		c.t.Fatal("no task notification arrived")
		return nil
	}
}
