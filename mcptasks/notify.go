package mcptasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The methods of SEP-2575 subscriptions the notifier takes part in.
const (
	methodListen       = "subscriptions/listen"
	notificationAck    = "notifications/subscriptions/acknowledged"
	notificationCancel = "notifications/cancelled"
)

// maxListenTasks bounds the task ids of one subscriptions/listen: each
// is looked up when the subscription begins.
const maxListenTasks = 1000

// NotifierOptions configure [NewNotifier].
type NotifierOptions struct {
	// Backend decides which tasks a subscription may have (those Get
	// finds for the caller) and gives their state when it begins.
	// Required.
	Backend Backend
	// Caller names who sends a subscriptions/listen, as [Options.Caller]
	// does for tasks/*; the request it receives has no session. Nil means
	// every caller is "".
	Caller func(ctx context.Context, req mcp.Request) (string, error)
	// PollInterval is the pollIntervalMs of tasks that set none; zero
	// means [DefaultPollInterval].
	PollInterval time.Duration
	// Logger receives what could not be delivered. Nil discards it.
	Logger *slog.Logger
}

// Notifier sends notifications/tasks to the clients that subscribed to a
// task with subscriptions/listen (its notifications.taskIds), on the
// connections of the transports it wrapped ([Notifier.Wrap]).
//
// The SDK answers subscriptions/listen itself but knows nothing of task
// ids, and has no way to send a notification it does not define; so the
// wrapped connection reads the client's subscriptions, adds the task ids
// it honours to the SDK's acknowledgement, keeps the subscription open
// when the SDK would end it for want of anything else to send, and writes
// the notifications next to the SDK's own messages.
//
// A subscription begins with the current state of each of its tasks, then
// gets one notification each time [Notifier.Notify] reports a task in
// another status or with other outstanding input requests (not for a
// progress message alone). It ends when the client cancels it
// (notifications/cancelled) or the connection closes.
type Notifier struct {
	opts NotifierOptions

	mu    sync.Mutex
	conns map[*notifyConn]struct{}
}

// NewNotifier returns a Notifier serving the tasks of opts.Backend.
func NewNotifier(opts NotifierOptions) (*Notifier, error) {
	if opts.Backend == nil {
		return nil, errors.New("mcptasks: NotifierOptions.Backend is required")
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Notifier{opts: opts, conns: make(map[*notifyConn]struct{})}, nil
}

// Wrap returns t with task notifications: serve the session on what it
// returns. It suits the transports of one connection each (stdio, in
// memory); the streamable HTTP handler builds its connections itself.
func (n *Notifier) Wrap(t mcp.Transport) mcp.Transport {
	return &notifyTransport{inner: t, n: n}
}

// WrapFor is Wrap for a connection whose caller the server tells by the
// connection itself (over stdio, the client at its other end, which the
// request of a listen does not name): caller names who sends each of its
// listens, instead of NotifierOptions.Caller.
func (n *Notifier) WrapFor(t mcp.Transport, caller func(ctx context.Context) (string, error)) mcp.Transport {
	return &notifyTransport{inner: t, n: n, caller: caller}
}

// Subscribed reports whether a connection listens for the task, or is
// about to, so that a server need not look up tasks nobody follows.
func (n *Notifier) Subscribed(taskID string) bool {
	for _, c := range n.connections() {
		if c.listens(taskID) {
			return true
		}
	}
	return false
}

// Notify sends st to every subscription of its task whose last
// notification had another status or other outstanding requests. Delivery
// is best effort: a failed write is logged, and the client may poll.
func (n *Notifier) Notify(ctx context.Context, st State) {
	if st.ID == "" || (st.Status != "" && !st.Status.valid()) {
		n.opts.Logger.Error("mcptasks: Notify: malformed task", "task", st.ID, "status", st.Status)
		return
	}
	for _, c := range n.connections() {
		for _, sub := range c.subscribedTo(st.ID) {
			if err := c.send(ctx, sub, st); err != nil {
				n.opts.Logger.Debug("mcptasks: task notification not delivered", "task", st.ID, "err", err)
			}
		}
	}
}

func (n *Notifier) connections() []*notifyConn {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Collect(maps.Keys(n.conns))
}

type notifyTransport struct {
	inner  mcp.Transport
	n      *Notifier
	caller func(ctx context.Context) (string, error) // nil: NotifierOptions.Caller
}

func (t *notifyTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	c := &notifyConn{Connection: conn, n: t.n, caller: t.caller, subs: make(map[string]*subscription)}
	t.n.mu.Lock()
	t.n.conns[c] = struct{}{}
	t.n.mu.Unlock()
	return c, nil
}

// SupportsProtocolVersion passes on what the wrapped transport says: the
// SDK asks the transport it serves on.
func (t *notifyTransport) SupportsProtocolVersion(version string) bool {
	if p, ok := t.inner.(mcp.ProtocolVersionSupporter); ok {
		return p.SupportsProtocolVersion(version)
	}
	return true
}

// notifyConn is a connection that carries task subscriptions.
type notifyConn struct {
	mcp.Connection
	n      *Notifier
	caller func(ctx context.Context) (string, error) // nil: NotifierOptions.Caller

	// writeMu orders this connection's writes, the SDK's and the
	// notifier's, and guards the subscriptions' sent fingerprints; it is
	// taken before mu, never after.
	writeMu sync.Mutex

	mu   sync.Mutex
	subs map[string]*subscription // by the listen request's id, as JSON
}

// subscription is one subscriptions/listen that asked for tasks.
type subscription struct {
	id      jsonrpc.ID
	caller  string
	taskIDs []string          // those agreed to
	active  bool              // acknowledged: notifications may follow
	sent    map[string]string // task id → what its last notification said
}

func idKey(raw any) string {
	b, err := json.Marshal(raw)
	if err != nil {
		return ""
	}
	return string(b)
}

func (c *notifyConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			return msg, nil
		}
		switch req.Method {
		case methodListen:
			if refusal := c.listen(ctx, req); refusal != nil {
				// Answered here: the SDK never sees the request.
				if err := c.write(ctx, &jsonrpc.Response{ID: req.ID, Error: refusal}); err != nil {
					return nil, fmt.Errorf("answer %s: %w", methodListen, err)
				}
				continue
			}
		case notificationCancel:
			c.cancelled(req.Params)
		}
		return msg, nil
	}
}

// listen records the task part of a subscriptions/listen, if any, for the
// SDK's acknowledgement to carry. A request it cannot read is the SDK's
// to refuse; a refusal of its own (a client that did not declare the
// extension) is returned.
func (c *notifyConn) listen(ctx context.Context, req *jsonrpc.Request) *jsonrpc.Error {
	if !req.ID.IsValid() {
		return nil
	}
	var p struct {
		Meta          map[string]any `json:"_meta"`
		Notifications *struct {
			TaskIDs []string `json:"taskIds"`
		} `json:"notifications"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil || p.Notifications == nil || len(p.Notifications.TaskIDs) == 0 {
		return nil
	}
	if !declares(p.Meta) {
		return missingCapability(methodListen + " with taskIds")
	}
	if len(p.Notifications.TaskIDs) > maxListenTasks {
		return &jsonrpc.Error{Code: CodeInvalidParams, Message: fmt.Sprintf("%s: %d taskIds, at most %d", methodListen, len(p.Notifications.TaskIDs), maxListenTasks)}
	}
	caller, err := c.callerOf(ctx, p.Meta)
	if err != nil {
		c.n.opts.Logger.Warn("mcptasks: identifying the caller", "method", methodListen, "err", err)
		return &jsonrpc.Error{Code: CodeInternalError, Message: fmt.Sprintf("%s: cannot identify the caller: %v", methodListen, err)}
	}
	// Agreed: the tasks the caller may get. Others are left out of the
	// acknowledgement, which is how the client learns of them.
	var agreed []string
	for _, id := range p.Notifications.TaskIDs {
		if id == "" || slices.Contains(agreed, id) {
			continue
		}
		if _, err := c.n.opts.Backend.Get(ctx, caller, id); err != nil {
			if !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrForeign) && !errors.Is(err, ErrExpired) {
				c.n.opts.Logger.Error("mcptasks: backend failed", "method", methodListen, "task", id, "err", err)
			}
			continue
		}
		agreed = append(agreed, id)
	}
	if len(agreed) == 0 {
		return nil
	}
	c.mu.Lock()
	c.subs[idKey(req.ID.Raw())] = &subscription{id: req.ID, caller: caller, taskIDs: agreed, sent: make(map[string]string)}
	c.mu.Unlock()
	return nil
}

// callerOf names who sends a listen whose _meta is meta: the
// connection's caller, else NotifierOptions.Caller's, else "".
func (c *notifyConn) callerOf(ctx context.Context, meta map[string]any) (string, error) {
	switch {
	case c.caller != nil:
		return c.caller(ctx)
	case c.n.opts.Caller != nil:
		r := &mcp.ServerRequest[*mcp.SubscriptionsListenParams]{Params: &mcp.SubscriptionsListenParams{Meta: meta, Notifications: &mcp.NotificationSubscriptions{}}}
		return c.n.opts.Caller(ctx, r)
	}
	return "", nil
}

// cancelled ends the subscription a notifications/cancelled names.
func (c *notifyConn) cancelled(params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || p.RequestID == nil {
		return
	}
	c.mu.Lock()
	delete(c.subs, idKey(p.RequestID))
	c.mu.Unlock()
}

func (c *notifyConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.Method == notificationAck && !m.ID.IsValid() {
			if sub := c.pending(m.Params); sub != nil {
				return c.acknowledge(ctx, m, sub)
			}
		}
	case *jsonrpc.Response:
		if c.keepOpen(m) {
			return nil
		}
	}
	return c.write(ctx, msg)
}

func (c *notifyConn) write(ctx context.Context, msg jsonrpc.Message) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	return c.Connection.Write(ctx, msg)
}

func (c *notifyConn) Close() error {
	c.n.mu.Lock()
	delete(c.n.conns, c)
	c.n.mu.Unlock()
	return c.Connection.Close()
}

// pending finds the subscription an acknowledgement is for, if it asked
// for tasks and is not acknowledged yet.
func (c *notifyConn) pending(params json.RawMessage) *subscription {
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	raw, ok := p.Meta[mcp.MetaKeySubscriptionID]
	if !ok {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	sub := c.subs[idKey(raw)]
	if sub == nil || sub.active {
		return nil
	}
	return sub
}

// acknowledge writes the SDK's acknowledgement with the task ids agreed
// to, then the current state of each: a task may have changed since the
// client last looked, and nothing of the subscription may precede its
// acknowledgement.
func (c *notifyConn) acknowledge(ctx context.Context, ack *jsonrpc.Request, sub *subscription) error {
	var params map[string]json.RawMessage
	if err := json.Unmarshal(ack.Params, &params); err != nil {
		return c.write(ctx, ack)
	}
	notes := map[string]any{}
	if raw, ok := params["notifications"]; ok {
		if err := json.Unmarshal(raw, &notes); err != nil || notes == nil {
			notes = map[string]any{}
		}
	}
	notes["taskIds"] = sub.taskIDs
	b, err := json.Marshal(notes)
	if err != nil {
		return fmt.Errorf("acknowledge task subscription: %w", err)
	}
	params["notifications"] = b
	if b, err = json.Marshal(params); err != nil {
		return fmt.Errorf("acknowledge task subscription: %w", err)
	}
	patched := *ack
	patched.Params = b
	if err := c.write(ctx, &patched); err != nil {
		return err
	}
	c.mu.Lock()
	sub.active = true
	c.mu.Unlock()
	// Each task's state now, read twice: a change the follower sent
	// while the first read was on its way would otherwise be followed by
	// that older state; the second read ends on the newest one.
	for range 2 {
		for _, id := range sub.taskIDs {
			st, err := c.n.opts.Backend.Get(ctx, sub.caller, id)
			if err != nil {
				c.n.opts.Logger.Debug("mcptasks: task state for a new subscription", "task", id, "err", err)
				continue
			}
			if err := c.send(ctx, sub, st); err != nil {
				return err
			}
		}
	}
	return nil
}

// keepOpen reports whether resp is the SDK's end of a subscription that
// still has tasks to follow: the SDK ends at once a listen it has nothing
// of its own to send on. Such a subscription ends when the client cancels
// it or leaves. A refusal ends it.
func (c *notifyConn) keepOpen(resp *jsonrpc.Response) bool {
	if !resp.ID.IsValid() {
		return false
	}
	key := idKey(resp.ID.Raw())
	c.mu.Lock()
	defer c.mu.Unlock()
	sub := c.subs[key]
	if sub == nil {
		return false
	}
	if resp.Error != nil || !sub.active {
		delete(c.subs, key)
		return false
	}
	return true
}

// listens reports whether a subscription of this connection has the task.
func (c *notifyConn) listens(taskID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, sub := range c.subs {
		if slices.Contains(sub.taskIDs, taskID) {
			return true
		}
	}
	return false
}

// subscribedTo returns the acknowledged subscriptions that have the task.
func (c *notifyConn) subscribedTo(taskID string) []*subscription {
	c.mu.Lock()
	defer c.mu.Unlock()
	var subs []*subscription
	for _, sub := range c.subs {
		if sub.active && slices.Contains(sub.taskIDs, taskID) {
			subs = append(subs, sub)
		}
	}
	return subs
}

// send writes notifications/tasks with st to sub, unless its last one
// said the same or the subscription has ended.
func (c *notifyConn) send(ctx context.Context, sub *subscription, st State) error {
	msg, err := statusNotification(st, sub.id, c.n.opts.PollInterval)
	if err != nil {
		return err
	}
	fp := fingerprint(st)
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.mu.Lock()
	live := c.subs[idKey(sub.id.Raw())] == sub
	c.mu.Unlock()
	last, sentBefore := sub.sent[st.ID]
	// An ended task's notification is its last: a state read before it
	// ended, sent late, would take it back.
	if !live || last == fp || sentBefore && ended(last) {
		return nil
	}
	if err := c.Connection.Write(ctx, msg); err != nil {
		return fmt.Errorf("%s for task %s: %w", NotificationStatus, st.ID, err)
	}
	sub.sent[st.ID] = fp
	return nil
}

// ended reports whether a fingerprint is that of a task that has ended.
func ended(fp string) bool {
	status, _, _ := strings.Cut(fp, "\x00")
	return Status(status).Terminal()
}

// fingerprint is what a client acts on: the status, and which input
// requests are outstanding.
func fingerprint(st State) string {
	status := st.Status
	if status == "" {
		status = StatusWorking
	}
	keys := slices.Collect(maps.Keys(st.InputRequests))
	sort.Strings(keys)
	return string(status) + "\x00" + strings.Join(keys, "\x00")
}

// statusNotification is notifications/tasks for st on the subscription
// opened by the listen request id: the task as tasks/get gives it (a
// DetailedTask, without resultType), with the subscription's id in _meta.
func statusNotification(st State, id jsonrpc.ID, poll time.Duration) (*jsonrpc.Request, error) {
	b, err := json.Marshal(wire(st, "", poll, true))
	if err != nil {
		return nil, err
	}
	var params map[string]json.RawMessage
	if err := json.Unmarshal(b, &params); err != nil {
		return nil, fmt.Errorf("task %s: %w", st.ID, err)
	}
	delete(params, "resultType")
	if params["_meta"], err = json.Marshal(map[string]any{mcp.MetaKeySubscriptionID: id.Raw()}); err != nil {
		return nil, fmt.Errorf("task %s: %w", st.ID, err)
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", st.ID, err)
	}
	return &jsonrpc.Request{Method: NotificationStatus, Params: raw}, nil
}
