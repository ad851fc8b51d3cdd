// Package repl is the interactive chat: a person talks to an agent,
// forks it, moves between the agents of the tree, stops them, and runs
// background tasks, which the agents launch too.
//
// The chat itself (Chat) knows nothing of terminals: it turns each line
// typed into blocks to show and, for a message, an agent turn that runs in
// the background and reports what it does as Events. It follows the
// store's change log for the tasks of its agents: their progress, their
// notifications, and the wake of an idle agent once its tasks have ended.
// Two front ends show all this: RunTerminal, a full-screen-free terminal
// UI (Bubble Tea, in the terminal's normal scrollback), and RunPlain,
// which reads lines from a pipe and prints plain text for scripts.
package repl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/cost"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/tasktools"
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
	// BlockNotice is the notification of a background task's end, or of
	// its question.
	BlockNotice
)

// Block is one thing the chat shows in the transcript.
type Block struct {
	Kind    BlockKind
	Session sa.Session // the agent of a header
	Text    string
}

// EventKind says what an Event reports.
type EventKind int

// Event kinds.
const (
	// TurnStart begins an agent's turn; Wake is set when the endings of
	// its background tasks woke it (a turn without new input).
	TurnStart EventKind = iota
	// TurnText carries the next piece of the answer in Text.
	TurnText
	// TurnTool reports a tool call that started; Text is its compact line.
	TurnTool
	// TurnToolFailed reports a tool call that failed; Text says how.
	TurnToolFailed
	// TurnEnd ends the turn: Err is set when it failed, Cancelled when it
	// was stopped.
	TurnEnd
	// TaskNotice: a background task of the agent ended, or asks a
	// question (/send answers it); Text is the visible text of the
	// notification its session received.
	TaskNotice
	// TasksChanged: the background tasks of the tree changed (launched,
	// progressed, ended); Activity has the new state.
	TasksChanged
	// TaskOutput ends a wait for a task (/output --block): Text is the
	// task's output, Err a failure, Cancelled a wait stopped by the user.
	TaskOutput
)

// Event is something an agent's turn, or a background task, did. Events
// of one turn come in order, from a goroutine of the chat.
type Event struct {
	Session   string
	Kind      EventKind
	Text      string
	Err       error
	Cancelled bool
	Wake      bool
	// turn is the turn a Turn* event comes from.
	turn *Turn
}

// Reply is what a line typed into the chat did.
type Reply struct {
	// Blocks to show now, in order.
	Blocks []Block
	// Failed is set when the line was refused or could not be carried out
	// (the blocks explain why).
	Failed bool
	// Quit is set when the chat should end; Force when it should end at
	// once, without asking about (or waiting for) background tasks.
	Quit, Force bool
	turn        *Turn
	// busy is the running turn of the agent that refused the line: once
	// it ends, the same line can be tried again.
	busy *Turn
}

// agentState is what the chat knows of one agent beyond the store.
type agentState struct {
	status Status
	turn   *Turn  // the running turn, if any
	model  string // set by /model: the model of later turns
	// killed: stopped by /kill; the endings of its tasks do not wake it
	// (a message from the user brings it back).
	killed bool
	// waking serializes the decision to wake the agent, which reads the
	// store (so it cannot hold the chat's lock).
	waking sync.Mutex
}

// Options open a chat.
type Options struct {
	// Runtime runs the agents' turns and their background tasks; its bus
	// follows the store's changes, for the tasks' progress and
	// notifications.
	Runtime *runtime.Runtime
	// Session is the agent to open, with its tree; when empty a new root
	// session is created with Agent and Model.
	Session string
	Agent   string
	// Model is the model of a new session, or a /model for the opened one.
	Model string
	// SettleLimit bounds how long piped input, once ended, waits for the
	// background tasks and the turns they wake (default: the configured
	// task timeout and a minute).
	SettleLimit time.Duration
}

// Chat is one chat: a tree of agents, the one in view, their turns and
// their background tasks. Its methods are safe for concurrent use.
type Chat struct {
	rt     *runtime.Runtime
	store  chatStore
	tools  *tasktools.Tools
	root   string // the root of the tree
	settle time.Duration
	base   context.Context
	stop   context.CancelFunc
	turns  sync.WaitGroup // the waits for tasks (/output --block, /compact)
	// bg is the runtime's record of the agents' turns: it runs them, stops
	// them, and wakes an agent (through wakeNow) once its tasks have ended.
	bg *runtime.Turns

	mu      sync.Mutex
	sink    func(Event)
	current sa.Session
	agents  map[string]*agentState
	members map[string]bool    // session → in the tree (a cache)
	running map[string]sa.Task // active tasks of the tree's agents
	waits   map[*Turn]bool     // /output --block waits
	// untold are the turns started whose end has not been told yet: an
	// agent is free (its turn nil) a moment before its TurnEnd goes out,
	// and what waits for the chat's turns (Settle) waits for that too.
	untold   map[*Turn]bool
	costs    map[string]float64 // agent → what it cost so far, in dollars
	created  string             // the root this chat created, removed at Close if unused
	restored bool
	closed   bool

	follow follower
	quiet  quietEndings // endings the user's /cancel caused
	// questions tell a task's question notice from its ending's.
	questions askedQuestions
}

// Open starts a chat: on the session named, or on a new root session.
func Open(ctx context.Context, opts Options) (*Chat, error) {
	if opts.Runtime == nil {
		return nil, errors.New("repl: no runtime")
	}
	settle := opts.SettleLimit
	if settle <= 0 {
		settle = opts.Runtime.Config().Tasks.Timeout.Duration + time.Minute
	}
	tools, err := tasktools.New(opts.Runtime)
	if err != nil {
		return nil, err
	}
	base, stop := context.WithCancel(ctx)
	c := &Chat{
		rt: opts.Runtime, store: opts.Runtime.Store(), tools: tools, settle: settle,
		base: base, stop: stop,
		agents: map[string]*agentState{}, members: map[string]bool{}, running: map[string]sa.Task{}, waits: map[*Turn]bool{}, untold: map[*Turn]bool{}, costs: map[string]float64{},
	}
	// The waker decides, by the one wake rule, when an agent is woken to
	// answer its tasks' notifications: once per batch. The chat asks it
	// once a notification is shown (maybeWake), and wakeNow holds a wake
	// back until then.
	c.bg = opts.Runtime.NewTurns(runtime.TurnsOptions{Holder: runtime.HolderChat, Wake: c.wakeNow, FollowsItself: true})
	if err := c.open(ctx, opts); err != nil {
		stop()
		c.bg.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Chat) open(ctx context.Context, opts Options) error {
	var err error
	if opts.Session != "" {
		c.current, err = c.store.Session(ctx, opts.Session)
		if err == nil {
			// A task's session is the task's: the chat would write to it.
			err = c.rt.Sessions().CheckWritable(ctx, c.current.ID)
		}
		c.restored = true
	} else {
		c.current, err = c.newRoot(ctx, opts.Agent, opts.Model)
		c.created = c.current.ID
	}
	if err != nil {
		return err
	}
	root, err := rootOf(ctx, c.store, c.current.ID)
	if err != nil {
		return err
	}
	c.root = root.ID
	if opts.Model != "" && opts.Session != "" {
		if r := c.setModel(ctx, opts.Model); r.Failed {
			return errors.New(r.Blocks[0].Text)
		}
	}
	return c.startFollowing(ctx)
}

// chatStore is the part of the store the chat reads: sessions, tasks and
// the change log; what it writes goes through the runtime.
type chatStore interface {
	sa.SessionReader
	sa.TaskReader
	sa.ChangeLog
}

// newRoot creates the root session of a new chat, once its agent and
// model are known to work.
func (c *Chat) newRoot(ctx context.Context, agentName, model string) (sa.Session, error) {
	return c.rt.Sessions().Create(ctx, sa.NewSession{Agent: agentName, Model: model, Origin: sa.OriginChat})
}

// SetSink sets where events go. Call it before the first turn.
func (c *Chat) SetSink(sink func(Event)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sink = sink
}

// emit hands an event to the sink. c.mu must not be held.
func (c *Chat) emit(e Event) {
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

// Activity is what is going on in a chat, for its status line.
type Activity struct {
	// Current: the agent in view runs a turn; Others: how many other
	// agents do.
	Current bool
	Others  int
	// Waiting: a /output --block waits for a task.
	Waiting bool
	// Tasks is how many background tasks of the tree's agents run (in any
	// process), ToolCalls how many tool calls they made so far, and Task
	// the description of the task when there is one.
	Tasks     int
	ToolCalls int
	Task      string
	// Cost is what the agent in view has cost so far, with its tasks
	// ("" when its models have no price).
	Cost string
}

// Busy reports whether anything is going on.
func (a Activity) Busy() bool { return a.Current || a.Others > 0 || a.Waiting || a.Tasks > 0 }

// Activity reports what the agents and their tasks are doing.
func (c *Chat) Activity() Activity {
	c.mu.Lock()
	defer c.mu.Unlock()
	var act Activity
	for id, a := range c.agents {
		switch {
		case a.turn == nil:
		case id == c.current.ID:
			act.Current = true
		default:
			act.Others++
		}
	}
	act.Waiting = len(c.waits) > 0
	if usd, ok := c.costs[c.current.ID]; ok {
		act.Cost = cost.Dollars(usd)
	}
	for _, t := range c.running {
		act.Tasks++
		act.ToolCalls += t.Progress.ToolCalls
		act.Task = t.Description
	}
	if act.Tasks != 1 {
		act.Task = ""
	}
	return act
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

// Interrupt cancels the turn of the agent in view or, with none, the
// waits for tasks. It reports whether there was one.
func (c *Chat) Interrupt() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a := c.agents[c.current.ID]; a != nil && a.turn != nil {
		a.turn.cancel()
		return true
	}
	for t := range c.waits {
		t.cancel()
	}
	return len(c.waits) > 0
}

// Close cancels every running turn and wait, stops following the tasks,
// and removes the session the chat created if nothing was ever said in
// it. Background tasks keep running: they belong to the task manager.
func (c *Chat) Close() error {
	c.mu.Lock()
	c.closed = true // no turn starts from now on
	c.mu.Unlock()
	c.stop()
	c.bg.Stop()
	c.turns.Wait()
	c.follow.wait()
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
	if err := c.rt.Sessions().Delete(ctx, c.created); err != nil {
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
		return in.Command.run(ctx, c, in)
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
		return refused(&busyError{session: cur, turn: a.turn})
	}
	a.killed = false // talked to again: it is back
	t, err := c.startTurn(a, cur.ID, sa.UserMessage(text))
	if err != nil {
		return failed(fmt.Sprintf("cannot send to %s: %s", sa.ShortID(cur.ID), runtime.Describe(err)))
	}
	return Reply{turn: t}
}

// busyError: the agent runs a turn, and what was asked must wait until
// it ends.
type busyError struct {
	session sa.Session
	turn    *Turn
}

func (e *busyError) Error() string {
	return sa.ShortID(e.session.ID) + " is still working: wait for its answer, or press Ctrl+C to stop it"
}

// refused is the reply to a line that could not be carried out; when an
// agent's running turn refused it, the reply says which turn.
func refused(err error) Reply {
	r := failed(err.Error())
	var busy *busyError
	if errors.As(err, &busy) {
		r.busy = busy.turn
	}
	return r
}

// runningTurn returns the turn an agent runs, or nil.
func (c *Chat) runningTurn(id string) *Turn {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a := c.agents[id]; a != nil {
		return a.turn
	}
	return nil
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
				blocks = append(blocks, Block{Kind: BlockNotice, Text: t})
			}
		case m.Kind != sa.KindMessage && m.Kind != "":
			// commands and clears are records, not conversation
		case m.Role == sa.RoleUser:
			if t := m.Text(); t != "" {
				blocks = append(blocks, Block{Kind: BlockUser, Text: t})
			}
		case m.Role == sa.RoleTool:
			for _, p := range m.Parts {
				if p.Type == sa.PartToolResult && p.IsError {
					blocks = append(blocks, Block{Kind: BlockTool, Text: ToolFailedLine(p)})
				}
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
