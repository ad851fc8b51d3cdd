package repl

import (
	"context"
	"sync"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/runtime"
)

// Turn is background work a line asked for: an agent turn, or a wait for
// a task's end (/output --block). It runs once Start is called, so that
// the front end shows the reply's blocks first.
type Turn struct {
	chat    *Chat
	session string
	wake    bool
	// bg is an agent turn as the runtime's record of turns holds it (its
	// lease taken, run by Start); nil for a wait.
	bg *runtime.BackgroundTurn
	// started: its TurnStart was told; only the turn's goroutine reads it.
	started bool
	// wait, when set, makes this a wait for a task rather than a turn of
	// the agent: it returns the text to show.
	wait   func(ctx context.Context) (string, error)
	ctx    context.Context // a wait's
	cancel func()          // stops the turn or the wait
	// done is closed once it has ended, after its TurnEnd (or TaskOutput)
	// event; finished is a wait's, closed by its goroutine.
	done     <-chan struct{}
	finished chan struct{}
	once     sync.Once
}

// Session is the agent that runs the turn (or waits).
func (t *Turn) Session() string { return t.session }

// Turn returns the turn the line started, or nil.
func (r Reply) Turn() *Turn { return r.turn }

// Start runs the turn in the background (once, however often it is
// called) and returns a channel closed when it has ended, after its
// TurnEnd (or TaskOutput) event.
func (t *Turn) Start() <-chan struct{} {
	t.once.Do(func() {
		if t.bg != nil {
			t.bg.Go()
			return
		}
		t.chat.turns.Go(t.runWait)
	})
	return t.done
}

// startTurn makes the turn an agent runs next, its lease taken in the
// runtime's record of turns (started by the caller). c.mu must be held.
func (c *Chat) startTurn(a *agentState, id string, input ...sa.Message) (*Turn, error) {
	t := &Turn{chat: c, session: id, wake: len(input) == 0}
	var text paragraphs // the loop sends events one at a time
	var running *runtime.BackgroundTurn
	bg, err := c.bg.Reserve(id, runtime.TurnRequest{
		Model: a.model, Input: input,
		Started: func(tr *runtime.BackgroundTurn) {
			running, t.started = tr, true
			c.emit(Event{Session: id, Kind: TurnStart, Wake: t.wake, turn: t})
		},
		OnEvent: func(e sa.TurnEvent) { t.event(&text, running, e) },
		Ended:   t.ended,
	})
	if err != nil {
		return nil, err
	}
	t.bg, t.done = bg, bg.Done()
	t.cancel = func() { c.bg.Cancel(id) }
	a.turn, a.status = t, StatusWorking
	c.untold[t] = true
	return t, nil
}

// event shows one event of the agent's turn.
func (t *Turn) event(text *paragraphs, tr *runtime.BackgroundTurn, e sa.TurnEvent) {
	c := t.chat
	switch e.Type {
	case sa.TurnEventStep:
		text.request()
	case sa.TurnEventTextDelta:
		c.emit(Event{Session: t.session, Kind: TurnText, Text: text.delta(e.Text), turn: t})
	case sa.TurnEventToolStart:
		text.tool()
		c.emit(Event{Session: t.session, Kind: TurnTool, Text: ToolLine(*e.Call), turn: t})
	case sa.TurnEventToolEnd:
		// A call stopped with its turn is not a failure to report: the
		// turn's end says it was stopped.
		if e.Result.IsError && !tr.Stopped() {
			c.emit(Event{Session: t.session, Kind: TurnToolFailed, Text: ToolFailedLine(*e.Result), turn: t})
		}
	}
}

// ended tells the turn's end, once the agent is free: the runtime's
// record then has the waker look at the agent again (tasks that ended
// during the turn), unless the turn was stopped.
func (t *Turn) ended(tr *runtime.BackgroundTurn, err error) {
	c := t.chat
	if !t.started { // stopped before it ran: it still starts and ends
		c.emit(Event{Session: t.session, Kind: TurnStart, Wake: t.wake, turn: t})
	}
	end := Event{Session: t.session, Kind: TurnEnd, Wake: t.wake, turn: t}
	status := StatusIdle
	switch {
	case err != nil && tr.Stopped():
		end.Cancelled, status = true, StatusStopped
	case err != nil:
		end.Err, status = err, StatusFailed
	}
	c.mu.Lock()
	if a := c.agents[t.session]; a != nil && a.turn == t {
		a.status, a.turn = status, nil
	}
	c.mu.Unlock()
	c.refreshCost(c.base, t.session)
	// Told once the agent is free, so that what hears of the end can use
	// it. A turn it starts meanwhile may be told of first: events carry
	// their turn, to keep the two apart.
	c.emit(end)
	c.mu.Lock()
	delete(c.untold, t)
	c.mu.Unlock()
}

// newWait makes a wait of the agent in view: fn runs once Start is
// called, and its text is shown.
func (c *Chat) newWait(session string, fn func(ctx context.Context) (string, error)) *Turn {
	ctx, cancel := context.WithCancel(c.base)
	finished := make(chan struct{})
	return &Turn{chat: c, session: session, wait: fn, ctx: ctx, cancel: cancel, done: finished, finished: finished}
}

// runWait waits for a task, then reports what it found.
func (t *Turn) runWait() {
	defer close(t.finished)
	defer t.cancel()
	c := t.chat
	text, err := t.wait(t.ctx)
	out := Event{Session: t.session, Kind: TaskOutput, Text: text}
	switch {
	case err != nil && t.ctx.Err() != nil:
		out.Cancelled = true
	case err != nil:
		out.Err = err
	}
	c.mu.Lock()
	delete(c.waits, t)
	c.mu.Unlock()
	c.emit(out)
}

// paragraphs keeps the answers of a turn's model requests apart: the
// text of a request that follows one that wrote text, with no tool call
// between (a notification came in while the model answered), starts a
// paragraph of its own instead of running on from the last sentence.
type paragraphs struct {
	wrote      bool // text since the last tool call
	newRequest bool // a request began since that text
}

func (p *paragraphs) request() { p.newRequest = p.wrote }

func (p *paragraphs) tool() { p.wrote, p.newRequest = false, false }

// delta returns a piece of text as it is to be shown.
func (p *paragraphs) delta(text string) string {
	if text == "" {
		return ""
	}
	if p.newRequest {
		text, p.newRequest = "\n\n"+text, false
	}
	p.wrote = true
	return text
}
