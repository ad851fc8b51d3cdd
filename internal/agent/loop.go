// Package agent is the agent loop: it sends a session's history to a
// model, stores what the model says, runs the tools it calls (in
// parallel), stores their results, and repeats until the model ends its
// turn. Every message is stored as soon as it is complete, so a crash at
// any point leaves a session the next turn can continue.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/compact"
	"github.com/superagents/superagents/internal/tools"
)

// Errors that end a turn early. The turn's messages up to that point are
// stored.
var (
	// ErrMaxSteps: the model kept calling tools past the step limit.
	ErrMaxSteps = errors.New("step limit reached")
	// ErrLoopDetected: the model repeated the same tool call with the same
	// arguments too many times.
	ErrLoopDetected = errors.New("loop detected")
)

// Defaults for the limits of a Loop.
const (
	DefaultMaxSteps    = 50
	DefaultRepeatLimit = 4
)

// Loop runs turns of one agent: a model, a system prompt and tools.
type Loop struct {
	Store    sa.Sessions
	Provider sa.Provider
	// Model is the provider's model name; ModelLabel the "provider/model"
	// string recorded on the messages it writes.
	Model      string
	ModelLabel string
	System     string
	// Tools the model may call; nil means none.
	Tools *tools.Set
	// MaxSteps caps the model requests of one turn (default 50).
	MaxSteps int
	// RepeatLimit stops a turn when one call (same tool, same arguments)
	// comes for the RepeatLimit-th time (default 4).
	RepeatLimit int
	// MaxTokens caps each response; 0 is the provider's default.
	MaxTokens int
	// Compaction, if set, compacts the session before a model request
	// once its context passes the threshold, so a long turn does not die
	// of a full context window. A stored compaction is honoured either
	// way: the model is sent the latest summary and what follows it.
	Compaction *compact.Auto
	// OnEvent, if set, sees the turn as it happens. Calls are serialized.
	OnEvent func(sa.TurnEvent)
	// NewSession says that the session has no parent and holds only what
	// it was made with: its history is its own messages (after its last
	// clear), read as those stored since none, without walking a lineage.
	NewSession bool
	// Inbox, if set, stores in the session the messages sent to it while
	// it runs (a task's steering) and returns them: it is called before
	// each model request, and once more before the turn ends, which goes
	// on when it brought any.
	Inbox func(ctx context.Context) ([]sa.Message, error)
}

// Run stores the input messages in the session and runs the model until it
// ends its turn. It returns the outcome even with an error, which wraps
// ErrMaxSteps, ErrLoopDetected, the provider's error or ctx's.
func (l *Loop) Run(ctx context.Context, sessionID string, input ...sa.Message) (sa.TurnOutcome, error) {
	// A new session's history is read as the messages stored after none
	// (see readHistory): it has no lineage to walk.
	r := &run{loop: l, sessionID: sessionID, seen: make(map[string]int), read: l.NewSession}
	return r.turn(ctx, input)
}

// run is the state of one turn.
type run struct {
	loop      *Loop
	sessionID string
	out       sa.TurnOutcome
	seen      map[string]int // call key → times called this turn
	mu        sync.Mutex     // serializes OnEvent
	// history is the session's history as last read (see readHistory);
	// read tells an empty one from none; current says that nothing was
	// stored or asked of the model since (it is cleared by the turn's own
	// goroutine where it stores or asks; a step's tool results come after
	// its request, which cleared it).
	history []sa.Message
	read    bool
	current bool
}

// readHistory returns the session's history. The first read of a turn
// reads it whole; the later ones add the session's own messages stored
// since (its answers and tool results, notifications), so that a long
// history is not read again at every model request. That is the whole
// history as long as none of them is a clear, which starts it anew: then
// it is read whole again.
//
// A read right after another, with nothing stored or asked in between
// (the first request of a task's run, whose messages came with the task),
// is not made again: a message stored meanwhile by someone else, a
// notification, is no different from one stored just after, which the
// turn looks for before it ends (see notifiedSince).
func (r *run) readHistory(ctx context.Context) ([]sa.Message, error) {
	if r.read && r.current {
		return r.history, nil
	}
	if r.read {
		var last int64
		if n := len(r.history); n > 0 {
			last = r.history[n-1].ID
		}
		// Ids follow commit order in both stores: whatever was stored
		// since the last read has a greater id than all it returned.
		since, err := r.loop.Store.MessagesAfter(ctx, r.sessionID, last)
		if err != nil {
			return nil, fmt.Errorf("read history: %w", err)
		}
		if !slices.ContainsFunc(since, func(m sa.Message) bool { return m.Kind == sa.KindClear }) {
			r.history, r.current = append(r.history, since...), true
			return r.history, nil
		}
	}
	history, err := r.loop.Store.History(ctx, r.sessionID)
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	r.history, r.read, r.current = history, true, true
	return history, nil
}

func (r *run) emit(e sa.TurnEvent) {
	if r.loop.OnEvent == nil {
		return
	}
	e.SessionID = r.sessionID
	r.mu.Lock()
	defer r.mu.Unlock()
	r.loop.OnEvent(e)
}

func (r *run) store(ctx context.Context, msgs ...sa.Message) error {
	stored, err := r.loop.Store.Append(ctx, r.sessionID, msgs...)
	if err != nil {
		return fmt.Errorf("store message: %w", err)
	}
	for i := range stored {
		r.emit(sa.TurnEvent{Type: sa.TurnEventMessage, Step: r.out.Steps, Message: &stored[i]})
	}
	return nil
}

func (r *run) turn(ctx context.Context, input []sa.Message) (sa.TurnOutcome, error) {
	if err := r.repairDangling(ctx); err != nil {
		return r.out, err
	}
	if len(input) > 0 {
		if err := r.store(ctx, input...); err != nil {
			return r.out, err
		}
		r.current = false // the history read misses the input
	}
	maxSteps := cmpOr(r.loop.MaxSteps, DefaultMaxSteps)
	for {
		if r.out.Steps >= maxSteps {
			return r.out, fmt.Errorf("%w: %d model requests in one turn without a final answer", ErrMaxSteps, maxSteps)
		}
		r.out.Steps++
		r.emit(sa.TurnEvent{Type: sa.TurnEventStep, Step: r.out.Steps})
		calls, seen, err := r.step(ctx)
		if err != nil {
			return r.out, err
		}
		if len(calls) == 0 {
			// A message sent or a notification stored while the model
			// wrote this answer was not in its request: answer it before
			// the turn ends. A notification stored after this check
			// follows the answer, where waking logic
			// (tasks.Manager.Unseen) sees it; a message, where the task's
			// ending refuses to complete (sa.ErrUndelivered).
			sent, err := r.deliver(ctx)
			if err != nil {
				return r.out, err
			}
			late, err := r.notifiedSince(ctx, seen)
			if err != nil || (!late && !sent) {
				return r.out, err
			}
			continue
		}
		if err := r.runTools(ctx, calls); err != nil {
			return r.out, err
		}
	}
}

// repairDangling answers tool calls left without a result by an earlier,
// interrupted turn, so the session is consistent before it continues.
func (r *run) repairDangling(ctx context.Context) error {
	history, err := r.readHistory(ctx)
	if err != nil {
		return err
	}
	dangling := danglingCalls(history)
	if len(dangling) == 0 {
		return nil
	}
	parts := make([]sa.Part, len(dangling))
	for i, c := range dangling {
		parts[i] = sa.Part{Type: sa.PartToolResult, CallID: c.CallID, Name: c.Name, Output: interruptedOutput, IsError: true}
	}
	r.current = false // the history read misses the answers
	return r.store(ctx, sa.Message{Role: sa.RoleTool, Parts: parts})
}

// notifiedSince reports whether a notification was stored in the session
// after the message with id seen.
func (r *run) notifiedSince(ctx context.Context, seen int64) (bool, error) {
	// The session's own rows after seen, not its history: whatever came
	// since is there, and a long history is not read again at every turn.
	since, err := r.loop.Store.MessagesAfter(ctx, r.sessionID, seen)
	if err != nil {
		return false, fmt.Errorf("read the session's latest messages: %w", err)
	}
	for _, m := range since {
		if m.Kind == sa.KindNotification {
			return true, nil
		}
	}
	return false, nil
}

// deliver stores the messages sent to the session since the last look
// (Loop.Inbox), reporting whether there were any.
func (r *run) deliver(ctx context.Context) (bool, error) {
	if r.loop.Inbox == nil {
		return false, nil
	}
	msgs, err := r.loop.Inbox(ctx)
	if err != nil {
		return false, fmt.Errorf("deliver messages: %w", err)
	}
	if len(msgs) == 0 {
		return false, nil
	}
	r.current = false // the history read misses them
	for i := range msgs {
		r.emit(sa.TurnEvent{Type: sa.TurnEventMessage, Step: r.out.Steps, Message: &msgs[i]})
	}
	return true, nil
}

// step sends one request and stores the assistant message. It returns the
// tool calls the model made and the id of the newest message the request
// held.
func (r *run) step(ctx context.Context) ([]sa.Part, int64, error) {
	if _, err := r.deliver(ctx); err != nil {
		return nil, 0, err
	}
	history, err := r.readHistory(ctx)
	if err != nil {
		return nil, 0, err
	}
	req, seen, err := r.request(ctx, history)
	if err != nil {
		return nil, 0, err
	}

	r.current = false // the model's answer is stored next, or the turn ends
	var acc accumulator
	var usage sa.Usage
	var streamErr error
	for ev, err := range r.loop.Provider.Stream(ctx, req) {
		if err != nil {
			streamErr = err
			break
		}
		switch ev.Type {
		case sa.EventTextDelta:
			acc.text(ev.Text)
			r.emit(sa.TurnEvent{Type: sa.TurnEventTextDelta, Step: r.out.Steps, Text: ev.Text})
		case sa.EventReasoningDelta:
			acc.reasoning(ev.Text, ev.Signature)
			if ev.Text != "" {
				r.emit(sa.TurnEvent{Type: sa.TurnEventReasoningDelta, Step: r.out.Steps, Text: ev.Text})
			}
		case sa.EventToolCall:
			if ev.ToolCall != nil {
				acc.call(*ev.ToolCall)
			}
		case sa.EventUsage:
			usage = ev.Usage // the totals so far for this response
		case sa.EventStop:
			r.out.StopReason = ev.StopReason
		}
	}
	r.out.Usage = r.out.Usage.Add(usage)

	if streamErr != nil {
		// Keep what was said before the failure, without its unfinished
		// tool calls: the session stays consistent and readable.
		if text := acc.partialText(); text != "" {
			msg := sa.Message{Role: sa.RoleAssistant, Model: r.loop.ModelLabel, Usage: usage,
				Parts: []sa.Part{sa.TextPart(text + "\n\n[interrupted]")}}
			_ = r.store(context.WithoutCancel(ctx), msg)
		}
		if ctx.Err() != nil {
			return nil, seen, ctx.Err()
		}
		return nil, seen, fmt.Errorf("model: %w", streamErr)
	}
	if len(acc.parts) == 0 {
		// An empty response ends the turn with an empty answer.
		r.out.Text = ""
		return nil, seen, nil
	}
	msg := sa.Message{Role: sa.RoleAssistant, Model: r.loop.ModelLabel, Usage: usage, Parts: acc.parts}
	if err := r.store(ctx, msg); err != nil {
		return nil, seen, err
	}
	r.out.Text = msg.Text()
	return acc.calls(), seen, nil
}

// request is the model request of a step over the session's history
// (compacted first when it is due), with the id of the newest message it
// holds.
func (r *run) request(ctx context.Context, history []sa.Message) (sa.ModelRequest, int64, error) {
	var specs []sa.ToolSpec
	if r.loop.Tools != nil {
		specs = r.loop.Tools.Specs()
	}
	history, err := r.compactIfDue(ctx, history, specs)
	if err != nil {
		return sa.ModelRequest{}, 0, err
	}
	var seen int64
	if len(history) > 0 {
		seen = history[len(history)-1].ID
	}
	return sa.ModelRequest{
		Model:     r.loop.Model,
		System:    r.loop.System,
		Messages:  compact.View(history), // providers put it in the shape their API wants
		MaxTokens: r.loop.MaxTokens,
		Tools:     specs,
	}, seen, nil
}

// runTools runs the calls of one step concurrently and stores each result
// as soon as it is ready.
func (r *run) runTools(ctx context.Context, calls []sa.Part) error {
	limit := cmpOr(r.loop.RepeatLimit, DefaultRepeatLimit)
	var loopErr error
	var wg sync.WaitGroup
	errs := make([]error, len(calls))
	for i, call := range calls {
		r.out.ToolCalls++
		key := callKey(call)
		r.seen[key]++
		if r.seen[key] >= limit {
			loopErr = fmt.Errorf("%w: %s was called %d times with the same arguments", ErrLoopDetected, call.Name, r.seen[key])
			res := tools.Errorf("not run: this exact call was already made %d times in this turn; the turn is stopped to break the loop", r.seen[key]-1)
			errs[i] = r.finishCall(ctx, call, res)
			continue
		}
		wg.Go(func() {
			r.emit(sa.TurnEvent{Type: sa.TurnEventToolStart, Step: r.out.Steps, Call: &call})
			res, err := r.callTool(ctx, call)
			storeCtx := ctx
			if err != nil {
				// Cancelled: record it so the session stays consistent,
				// with what the tool said of it (a command's output so
				// far) when it said anything.
				if res.Output == "" {
					res = tools.Errorf("cancelled: %v", err)
				}
				res.IsError = true
				storeCtx = context.WithoutCancel(ctx)
				errs[i] = err
			}
			if storeErr := r.finishCall(storeCtx, call, res); storeErr != nil && errs[i] == nil {
				errs[i] = storeErr
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		if ctxErr := context.Cause(ctx); ctxErr != nil {
			return ctxErr
		}
		return err
	}
	return loopErr
}

func (r *run) callTool(ctx context.Context, call sa.Part) (tools.Result, error) {
	if r.loop.Tools == nil {
		return tools.Errorf("no tools are available to this agent"), nil
	}
	return r.loop.Tools.Call(ctx, call.Name, call.Input)
}

func (r *run) finishCall(ctx context.Context, call sa.Part, res tools.Result) error {
	part := res.Part(call.CallID, call.Name)
	r.emit(sa.TurnEvent{Type: sa.TurnEventToolEnd, Step: r.out.Steps, Call: &call, Result: &part})
	return r.store(ctx, sa.Message{Role: sa.RoleTool, Parts: []sa.Part{part}})
}

// callKey identifies a call by tool and arguments; the arguments are
// re-encoded so that key order and spacing do not matter.
func callKey(call sa.Part) string {
	var v any
	if err := json.Unmarshal(call.Input, &v); err == nil {
		if canonical, err := json.Marshal(v); err == nil {
			return call.Name + "\x00" + string(canonical)
		}
	}
	return call.Name + "\x00" + string(call.Input)
}

// accumulator builds the assistant message's parts in the order they
// stream in.
type accumulator struct {
	parts []sa.Part
}

func (a *accumulator) last(t sa.PartType) *sa.Part {
	if n := len(a.parts); n > 0 && a.parts[n-1].Type == t {
		return &a.parts[n-1]
	}
	return nil
}

func (a *accumulator) text(delta string) {
	if p := a.last(sa.PartText); p != nil {
		p.Text += delta
		return
	}
	a.parts = append(a.parts, sa.TextPart(delta))
}

func (a *accumulator) reasoning(delta, signature string) {
	p := a.last(sa.PartReasoning)
	if p == nil || p.Signature != "" {
		a.parts = append(a.parts, sa.Part{Type: sa.PartReasoning})
		p = &a.parts[len(a.parts)-1]
	}
	p.Text += delta
	p.Signature += signature
}

func (a *accumulator) call(c sa.Part) {
	c.Type = sa.PartToolCall
	if len(c.Input) == 0 {
		c.Input = json.RawMessage("{}")
	}
	a.parts = append(a.parts, c)
}

func (a *accumulator) calls() []sa.Part {
	var out []sa.Part
	for _, p := range a.parts {
		if p.Type == sa.PartToolCall {
			out = append(out, p)
		}
	}
	return out
}

func (a *accumulator) partialText() string {
	var b strings.Builder
	for _, p := range a.parts {
		if p.Type == sa.PartText {
			b.WriteString(p.Text)
		}
	}
	return strings.TrimSpace(b.String())
}

func cmpOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}
