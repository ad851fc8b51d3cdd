// Package repl is the interactive chat: a person talks to an agent,
// forks it, moves between the agents of the tree and stops them.
//
// The chat itself (Chat) knows nothing of terminals: it turns each line
// typed into blocks to show and, for a message, an agent turn that runs in
// the background and reports what it does as TurnEvents. Two front ends
// show them: RunTerminal, a full-screen-free terminal UI (Bubble Tea, in
// the terminal's normal scrollback), and RunPlain, which reads lines from
// a pipe and prints plain text for scripts.
package repl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/agent"
	"github.com/superagents/superagents/engine"
)

// Status is what an agent is doing, as /agents shows it.
type Status string

// Agent statuses.
const (
	StatusIdle    Status = "idle"
	StatusWorking Status = "working"
	// StatusStopped: its last turn was cancelled (Ctrl+C or /kill).
	StatusStopped Status = "stopped"
	// StatusFailed: its last turn ended with an error.
	StatusFailed Status = "failed"
)

// BlockKind says what a Block shows.
type BlockKind int

// Block kinds.
const (
	// BlockHeader is an agent's header line; Session is the agent.
	BlockHeader BlockKind = iota
	// BlockNote is information: "Forked from ...", a command's output.
	BlockNote
	// BlockError explains, in one line, why a line did nothing.
	BlockError
	// BlockUser is a message the user sent (in a restored transcript).
	BlockUser
	// BlockAnswer is an agent's answer, in Markdown.
	BlockAnswer
	// BlockTool is the compact line of a tool call.
	BlockTool
)

// Block is one thing the chat shows in the transcript.
type Block struct {
	Kind    BlockKind
	Session sa.Session // the agent of a header
	Text    string
}

// TurnEventKind says what a TurnEvent reports.
type TurnEventKind int

// Turn event kinds.
const (
	// TurnText carries the next piece of the answer in Text.
	TurnText TurnEventKind = iota
	// TurnTool reports a tool call that started; Text is its compact line.
	TurnTool
	// TurnToolFailed reports a tool call that failed; Text says how.
	TurnToolFailed
	// TurnEnd ends the turn: Err is set when it failed, Cancelled when it
	// was stopped.
	TurnEnd
)

// TurnEvent is something an agent's turn did. Events of one turn come in
// order, from a goroutine of the chat.
type TurnEvent struct {
	Session   string
	Kind      TurnEventKind
	Text      string
	Err       error
	Cancelled bool
}

// Reply is what a line typed into the chat did.
type Reply struct {
	// Blocks to show now, in order.
	Blocks []Block
	// Failed is set when the line was refused or could not be carried out
	// (the blocks explain why).
	Failed bool
	// Quit is set when the chat should end.
	Quit bool
	turn *Turn
}

// Turn is an agent turn that a line asked for. It runs once Start is
// called, so that the front end shows the reply's blocks first.
type Turn struct {
	chat    *Chat
	session string
	input   sa.Message
	model   string
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
	once    sync.Once
}

// Session is the agent that runs the turn.
func (t *Turn) Session() string { return t.session }

// Turn returns the turn the line started, or nil.
func (r Reply) Turn() *Turn { return r.turn }

// Start runs the turn in the background (once, however often it is
// called) and returns a channel closed when it has ended, after its
// TurnEnd event.
func (t *Turn) Start() <-chan struct{} {
	t.once.Do(func() { t.chat.turns.Go(t.run) })
	return t.done
}

func (t *Turn) run() {
	defer close(t.done)
	defer t.cancel()
	c := t.chat
	onEvent := func(e agent.Event) {
		switch e.Type {
		case agent.EventTextDelta:
			c.emit(TurnEvent{Session: t.session, Kind: TurnText, Text: e.Text})
		case agent.EventToolStart:
			c.emit(TurnEvent{Session: t.session, Kind: TurnTool, Text: ToolLine(*e.Call)})
		case agent.EventToolEnd:
			if e.Result.IsError {
				c.emit(TurnEvent{Session: t.session, Kind: TurnToolFailed, Text: ToolFailedLine(*e.Result)})
			}
		}
	}
	_, err := c.eng.Run(t.ctx, t.session, engine.TurnOptions{Model: t.model, OnEvent: onEvent}, t.input)
	end := TurnEvent{Session: t.session, Kind: TurnEnd}
	status := StatusIdle
	switch {
	case err != nil && t.ctx.Err() != nil:
		end.Cancelled, status = true, StatusStopped
	case err != nil:
		end.Err, status = err, StatusFailed
	}
	c.mu.Lock()
	if a := c.agents[t.session]; a != nil && a.turn == t {
		a.status, a.turn = status, nil
	}
	c.mu.Unlock()
	c.emit(end)
}

// agentState is what the chat knows of one agent beyond the store.
type agentState struct {
	status Status
	turn   *Turn  // the running turn, if any
	model  string // set by /model: the model of later turns
}

// Options open a chat.
type Options struct {
	Engine *engine.Engine
	// Session is the agent to open, with its tree; when empty a new root
	// session is created with Agent and Model.
	Session string
	Agent   string
	// Model is the model of a new session, or a /model for the opened one.
	Model string
}

// Chat is one chat: a tree of agents, the one in view, and their turns.
// Its methods are safe for concurrent use.
type Chat struct {
	eng   *engine.Engine
	store sa.Store
	base  context.Context
	stop  context.CancelFunc
	turns sync.WaitGroup

	mu       sync.Mutex
	sink     func(TurnEvent)
	current  sa.Session
	agents   map[string]*agentState
	created  string // the root this chat created, removed at Close if unused
	restored bool
}

// Open starts a chat: on the session named, or on a new root session.
func Open(ctx context.Context, opts Options) (*Chat, error) {
	if opts.Engine == nil {
		return nil, errors.New("repl: no engine")
	}
	base, stop := context.WithCancel(ctx)
	c := &Chat{eng: opts.Engine, store: opts.Engine.Store, base: base, stop: stop, agents: map[string]*agentState{}}
	var err error
	if opts.Session != "" {
		c.current, err = c.store.Session(ctx, opts.Session)
		c.restored = true
	} else {
		c.current, err = c.newRoot(ctx, opts.Agent, opts.Model)
		c.created = c.current.ID
	}
	if err != nil {
		stop()
		return nil, err
	}
	if opts.Model != "" && opts.Session != "" {
		if r := c.setModel(ctx, opts.Model); r.Failed {
			stop()
			return nil, errors.New(r.Blocks[0].Text)
		}
	}
	return c, nil
}

// newRoot creates the root session of a new chat, once its agent and
// model are known to work.
func (c *Chat) newRoot(ctx context.Context, agentName, model string) (sa.Session, error) {
	profile, err := c.eng.Profile(agentName)
	if err != nil {
		return sa.Session{}, err
	}
	sess := sa.Session{Agent: profile.Name, Model: model}
	if err := c.eng.Check(sess); err != nil {
		return sa.Session{}, err
	}
	return c.store.CreateSession(ctx, sa.NewSession{Agent: sess.Agent, Model: model})
}

// SetSink sets where turn events go. Call it before the first turn.
func (c *Chat) SetSink(sink func(TurnEvent)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sink = sink
}

func (c *Chat) emit(e TurnEvent) {
	c.mu.Lock()
	sink := c.sink
	c.mu.Unlock()
	if sink != nil {
		sink(e)
	}
}

// Current returns the agent in view.
func (c *Chat) Current() sa.Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.current
}

// Activity reports whether the agent in view is running a turn, and how
// many other agents are.
func (c *Chat) Activity() (current bool, others int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, a := range c.agents {
		switch {
		case a.turn == nil:
		case id == c.current.ID:
			current = true
		default:
			others++
		}
	}
	return current, others
}

// Opening returns what the chat shows first: the header of the agent in
// view and, when an existing session was opened, its transcript.
func (c *Chat) Opening(ctx context.Context) []Block {
	cur := c.Current()
	blocks := []Block{{Kind: BlockHeader, Session: cur}}
	if !c.restored {
		return blocks
	}
	history, err := c.store.History(ctx, cur.ID)
	if err != nil {
		return append(blocks, Block{Kind: BlockError, Text: fmt.Sprintf("cannot read the history of %s: %v", sa.ShortID(cur.ID), err)})
	}
	return append(blocks, transcript(history, maxTranscript)...)
}

// Interrupt cancels the turn of the agent in view. It reports whether
// there was one.
func (c *Chat) Interrupt() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.agents[c.current.ID]
	if a == nil || a.turn == nil {
		return false
	}
	a.turn.cancel()
	return true
}

// Close cancels every running turn, waits for them to end, and removes
// the session the chat created if nothing was ever said in it.
func (c *Chat) Close() error {
	c.stop()
	c.turns.Wait()
	if c.created == "" {
		return nil
	}
	ctx := context.Background()
	history, err := c.store.History(ctx, c.created)
	if err != nil || len(history) > 0 {
		return nil
	}
	kids, err := c.store.ListSessions(ctx, sa.SessionFilter{ParentID: c.created, Limit: 1})
	if err != nil || len(kids) > 0 {
		return nil
	}
	if err := c.store.DeleteSession(ctx, c.created); err != nil {
		return fmt.Errorf("remove the unused session %s: %w", sa.ShortID(c.created), err)
	}
	return nil
}

// state returns the chat's record of an agent, reading the model set by
// /model from its history the first time. c.mu must not be held.
func (c *Chat) state(ctx context.Context, id string) (*agentState, error) {
	c.mu.Lock()
	a := c.agents[id]
	c.mu.Unlock()
	if a != nil {
		return a, nil
	}
	history, err := c.store.History(ctx, id)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if a = c.agents[id]; a == nil {
		a = &agentState{status: StatusIdle, model: modelCommand(history)}
		c.agents[id] = a
	}
	return a, nil
}

// Submit carries out one line: a message to the agent in view, or a
// slash command.
func (c *Chat) Submit(ctx context.Context, line string) Reply {
	in, err := ParseLine(line)
	if err != nil {
		return failed(err.Error())
	}
	switch {
	case in.Command != nil:
		return in.Command.run(ctx, c, in.Args)
	case in.Message != "":
		return c.send(ctx, in.Message)
	}
	return Reply{}
}

// send starts a turn of the agent in view.
func (c *Chat) send(ctx context.Context, text string) Reply {
	cur := c.Current()
	a, err := c.state(ctx, cur.ID)
	if err != nil {
		return failed(fmt.Sprintf("cannot read agent %s: %v", sa.ShortID(cur.ID), err))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if a.turn != nil {
		return failed(busyText(cur))
	}
	turnCtx, cancel := context.WithCancel(c.base)
	a.turn = &Turn{chat: c, session: cur.ID, input: engine.UserMessage(text), model: a.model, ctx: turnCtx, cancel: cancel, done: make(chan struct{})}
	a.status = StatusWorking
	return Reply{turn: a.turn}
}

// busyText says that an agent is running a turn.
func busyText(s sa.Session) string {
	return sa.ShortID(s.ID) + " is still working: wait for its answer, or press Ctrl+C to stop it"
}

// failed is a reply that explains in one line why nothing happened.
func failed(msg string) Reply {
	return Reply{Failed: true, Blocks: []Block{{Kind: BlockError, Text: msg}}}
}

// note is a reply of information lines.
func note(format string, args ...any) Reply {
	return Reply{Blocks: []Block{{Kind: BlockNote, Text: fmt.Sprintf(format, args...)}}}
}

// modelPrefix starts the command message that records /model.
const modelPrefix = "/model "

// modelCommand returns the model the latest /model in a history set.
func modelCommand(history []sa.Message) string {
	for i := len(history) - 1; i >= 0; i-- {
		m := history[i]
		if m.Kind != sa.KindCommand {
			continue
		}
		if model, ok := strings.CutPrefix(m.Text(), modelPrefix); ok {
			return strings.TrimSpace(model)
		}
	}
	return ""
}

// commandMessage records a command in a session; models never see it.
func commandMessage(text string) sa.Message {
	return sa.Message{Role: sa.RoleUser, Kind: sa.KindCommand, Parts: []sa.Part{sa.TextPart(text)}}
}

// forkMessage records in a child where it was forked from.
func forkMessage(parent sa.Session) sa.Message {
	return sa.Message{Role: sa.RoleSystem, Kind: sa.KindFork, Parts: []sa.Part{sa.TextPart(forkedFrom(parent))}}
}

func forkedFrom(parent sa.Session) string { return "Forked from " + sa.ShortID(parent.ID) }

// maxTranscript caps the blocks of a restored transcript; older ones are
// summed up in one line.
const maxTranscript = 40

// transcript turns a history into blocks: the user's messages, the
// answers, the tool calls, and where the agent was forked.
func transcript(history []sa.Message, limit int) []Block {
	var blocks []Block
	for _, m := range history {
		switch {
		case m.Kind == sa.KindFork:
			blocks = append(blocks, Block{Kind: BlockNote, Text: m.Text()})
		case m.Kind == sa.KindNotification:
			if t := m.Text(); t != "" {
				blocks = append(blocks, Block{Kind: BlockNote, Text: t})
			}
		case m.Kind != sa.KindMessage && m.Kind != "":
			// commands and clears are records, not conversation
		case m.Role == sa.RoleUser:
			if t := m.Text(); t != "" {
				blocks = append(blocks, Block{Kind: BlockUser, Text: t})
			}
		case m.Role == sa.RoleAssistant:
			var text strings.Builder
			for _, p := range m.Parts {
				switch {
				case p.Type == sa.PartText && !p.Hidden:
					text.WriteString(p.Text)
				case p.Type == sa.PartToolCall:
					if text.Len() > 0 {
						blocks = append(blocks, Block{Kind: BlockAnswer, Text: text.String()})
						text.Reset()
					}
					blocks = append(blocks, Block{Kind: BlockTool, Text: ToolLine(p)})
				}
			}
			if strings.TrimSpace(text.String()) != "" {
				blocks = append(blocks, Block{Kind: BlockAnswer, Text: text.String()})
			}
		}
	}
	if len(blocks) > limit {
		skipped := len(blocks) - limit
		blocks = append([]Block{{Kind: BlockNote, Text: fmt.Sprintf("(%d earlier entries not shown)", skipped)}}, blocks[skipped:]...)
	}
	return blocks
}
