package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/tasks"
)

// TurnState is what a process knows of a session's latest turn run by
// its Turns. The turn's lease is in the store (so no other process or way
// in writes to the session meanwhile), but its progress is only known to
// the process that runs it; its messages are stored as usual.
type TurnState struct {
	// Status is idle (no turn run here yet), running, completed, failed
	// or stopped (by a shutdown).
	Status    string     `json:"status"`
	StartedAt *time.Time `json:"started_at,omitempty"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	// Answer is the text of the turn's last answer.
	Answer    string   `json:"answer,omitempty"`
	Error     string   `json:"error,omitempty"`
	Steps     int      `json:"steps,omitempty"`
	ToolCalls int      `json:"tool_calls,omitempty"`
	Usage     sa.Usage `json:"usage,omitzero"`
}

// Turn statuses.
const (
	TurnIdle      = "idle"
	TurnRunning   = "running"
	TurnCompleted = "completed"
	TurnFailed    = "failed"
	TurnStopped   = "stopped"
)

// ErrTurnRunning refuses a turn in a session that runs one.
var ErrTurnRunning = errors.New("a turn is running")

// TurnsOptions configure a process's record of background turns.
type TurnsOptions struct {
	// Holder names the way in on the leases its turns take.
	Holder string
	// Log hears of turns that failed and wakes that could not start.
	Log *slog.Logger
	// Launches reports whether an event of a turn launches a task: the
	// session is then woken when its tasks have ended. A way in that
	// watches its sessions itself (Wake) leaves it nil.
	Launches func(sa.TurnEvent) bool
	// Busy words the refusal of a second turn in a session that runs one
	// here; it wraps ErrTurnRunning.
	Busy func(sessionID string) error
	// Wake, if set, starts the turn of a session the waker found due, as
	// the way in wants it (its model, its events), through Reserve or
	// Start, and reports whether it did. It may hold the wake back (the
	// chat does until the notification that allows it is shown) and ask
	// again with Turns.Wake. When nil, a plain turn is started.
	Wake func(sessionID string) bool
	// FollowsItself: the way in follows the change log itself and calls
	// Turns.Wake once it has dealt with a task's ending (the chat, which
	// shows the notification first); Turns then does not follow it.
	FollowsItself bool
}

// TurnRequest is one background turn as a way in asks for it.
type TurnRequest struct {
	// Model overrides the session's model for the turn.
	Model string
	// Input is stored first, in the turn (the user's message); a wake has
	// none.
	Input []sa.Message
	// Before, if set, runs at once with the session's lease held (to store
	// the user's message): when it fails no turn runs.
	Before func(lease *Turn) error
	// Started, if set, runs in the turn's goroutine before the agent does.
	Started func(*BackgroundTurn)
	// OnEvent, if set, hears the turn's events as they come (streaming).
	OnEvent func(sa.TurnEvent)
	// Ended, if set, is told the turn's end (the turn's error, nil when it
	// completed) once the session's slot is free, before the waker looks
	// at the session again and before Done is closed.
	Ended func(tr *BackgroundTurn, err error)
}

// Turns is a process's one record of the turns it runs in the
// background, one at a time per session, for the chat and the HTTP API:
// it starts them, knows their state, stops one or all, and wakes an agent
// whose background tasks have all ended and left notifications it has
// not answered (the one waker).
//
// Each turn gives the session's lease back when it ends, before the waker
// looks at the session: a user may send a message between a turn and the
// wake it calls for. That is the background mode of the one turn loop;
// Turn.Settle (tasks.Manager.Settle) is its blocking mode, for `run
// --wait` and tasks, which hold the lease while their tasks run. Both
// leave the decision to the waker's Check.
type Turns struct {
	rt   *Runtime
	opts TurnsOptions
	log  *slog.Logger

	ctx    context.Context // cancelled by stop: running turns end
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// waker wakes the sessions it watches (those whose agent launched
	// tasks in a turn run here, or those the way in names) when their
	// tasks have ended.
	waker *tasks.Waker

	mu      sync.Mutex
	running map[string]*BackgroundTurn // reserved or running
	last    map[string]TurnState
	stopped bool
}

// BackgroundTurn is one turn Turns runs; its state is final once Done is
// closed.
type BackgroundTurn struct {
	turns   *Turns
	session string
	req     TurnRequest
	started time.Time
	ctx     context.Context // the turn's own: Cancel ends it
	cancel  context.CancelFunc
	done    chan struct{}
	state   TurnState
	lease   *Turn // its End gives the lease back (again: nothing)
	going   bool  // Go was called; guarded by turns.mu
	ended   bool  // its end was recorded; guarded by turns.mu
	stopped bool  // it ended stopped; guarded by turns.mu
}

// Session is the session the turn runs in.
func (tr *BackgroundTurn) Session() string { return tr.session }

// Done is closed once the turn has ended.
func (tr *BackgroundTurn) Done() <-chan struct{} { return tr.done }

// State is the turn's state; read it once Done is closed.
func (tr *BackgroundTurn) State() TurnState { return tr.state }

// Stopped reports whether the turn was stopped (Cancel, or Stop); once it
// has ended, whether that is how it ended.
func (tr *BackgroundTurn) Stopped() bool {
	tr.turns.mu.Lock()
	defer tr.turns.mu.Unlock()
	if tr.ended {
		return tr.stopped
	}
	return tr.ctx.Err() != nil
}

// StartedState is the turn's state as it started; it never changes, so
// it may be read while the turn runs.
func (tr *BackgroundTurn) StartedState() TurnState {
	started := tr.started
	return TurnState{Status: TurnRunning, StartedAt: &started}
}

// NewTurns makes the process's record of background turns for a way in;
// Stop ends them.
func (rt *Runtime) NewTurns(opts TurnsOptions) *Turns {
	ctx, cancel := context.WithCancel(context.Background())
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := &Turns{rt: rt, opts: opts, log: log, ctx: ctx, cancel: cancel,
		running: map[string]*BackgroundTurn{}, last: map[string]TurnState{}}
	if opts.FollowsItself {
		t.waker = rt.tasks.NewCheckedWaker(t.wake)
	} else {
		t.waker = rt.tasks.NewWaker(t.wake)
	}
	return t
}

// State returns what is known of a session's turns.
func (t *Turns) State(session string) TurnState {
	t.mu.Lock()
	defer t.mu.Unlock()
	if tr := t.running[session]; tr != nil {
		return tr.state
	}
	if st, ok := t.last[session]; ok {
		return st
	}
	return TurnState{Status: TurnIdle}
}

// Reserve takes a session's turn without running it yet: its lease in
// the store (refused while a turn or task runs there, in this process or
// another) and its slot here; req.Before runs then. The turn runs once
// Go is called (a way in shows what it has to say first); until then
// Cancel or Stop end it unrun.
func (t *Turns) Reserve(session string, req TurnRequest) (*BackgroundTurn, error) {
	t.mu.Lock()
	stopped, running := t.stopped, t.running[session] != nil
	t.mu.Unlock()
	switch {
	case stopped:
		return nil, sa.ErrClosed
	case running:
		return nil, t.busy(session)
	}
	lease, err := t.rt.Sessions().Begin(t.ctx, session, t.opts.Holder)
	var busy *sa.BusyError
	switch {
	case errors.As(err, &busy):
		return nil, fmt.Errorf("%w: %w", ErrTurnRunning, err)
	case err != nil:
		return nil, err
	}
	t.mu.Lock()
	if t.stopped || t.running[session] != nil {
		t.mu.Unlock()
		lease.End()
		if t.stopped {
			return nil, sa.ErrClosed
		}
		return nil, t.busy(session)
	}
	ctx, cancel := context.WithCancel(t.ctx)
	tr := &BackgroundTurn{turns: t, session: session, req: req, started: time.Now(), ctx: ctx, cancel: cancel,
		done: make(chan struct{}), lease: lease}
	tr.state = tr.StartedState()
	t.running[session] = tr
	t.mu.Unlock()
	if req.Before != nil {
		if err := req.Before(lease); err != nil {
			t.release(tr)
			return nil, err
		}
	}
	return tr, nil
}

// busy is the refusal of a second turn in a session that runs one here.
func (t *Turns) busy(session string) error {
	if t.opts.Busy != nil {
		return t.opts.Busy(session)
	}
	return fmt.Errorf("%w in session %s: wait for it to end", ErrTurnRunning, sa.ShortID(session))
}

// release gives a slot back without running a turn nor recording one.
func (t *Turns) release(tr *BackgroundTurn) {
	tr.lease.End()
	tr.cancel()
	t.mu.Lock()
	tr.ended = true
	delete(t.running, tr.session)
	t.mu.Unlock()
	close(tr.done)
}

// Start reserves a session's turn and runs it in the background.
func (t *Turns) Start(session string, req TurnRequest) (*BackgroundTurn, error) {
	tr, err := t.Reserve(session, req)
	if err != nil {
		return nil, err
	}
	tr.Go()
	return tr, nil
}

// Go runs a reserved turn in the background; calling it again does
// nothing. A turn stopped before it ran ends at once, as stopped.
func (tr *BackgroundTurn) Go() {
	t := tr.turns
	t.mu.Lock()
	if tr.going || tr.ended {
		t.mu.Unlock()
		return
	}
	tr.going = true
	run := !t.stopped && tr.ctx.Err() == nil
	if run {
		t.wg.Add(1)
	}
	t.mu.Unlock()
	if !run {
		// Stopped for certain (Stop may not have cancelled the turns yet):
		// a stopped turn's end asks the waker nothing, which matters here,
		// since Go may be running inside the waker's own Check.
		tr.cancel()
		t.end(tr, sa.TurnOutcome{}, context.Canceled)
		return
	}
	go t.run(tr)
}

// run is one background turn: the agent runs once, lease held; the lease
// is given back, and then the waker decides whether the agent is woken
// for the notifications of tasks that ended meanwhile (their wake-up was
// skipped while it ran). The same step as Turn.Settle's, in the
// background mode: the wake is a turn of its own, started by the waker.
func (t *Turns) run(tr *BackgroundTurn) {
	defer t.wg.Done()
	if tr.req.Started != nil {
		tr.req.Started(tr)
	}
	opts := TurnOptions{Model: tr.req.Model, OnEvent: func(e sa.TurnEvent) {
		if t.opts.Launches != nil && t.opts.Launches(e) {
			t.waker.Watch(tr.session)
		}
		if tr.req.OnEvent != nil {
			tr.req.OnEvent(e)
		}
	}}
	outcome, err := tr.lease.Run(tr.ctx, opts, tr.req.Input...)
	t.end(tr, outcome, err)
}

// end records a turn's end, gives its lease back, tells the way in and,
// unless the turn was stopped, has the waker look at the session again.
func (t *Turns) end(tr *BackgroundTurn, outcome sa.TurnOutcome, err error) {
	tr.lease.End()
	stopped := err != nil && tr.Stopped()
	end := time.Now()
	state := TurnState{Status: TurnCompleted, StartedAt: tr.state.StartedAt, EndedAt: &end, Answer: outcome.Text,
		Steps: outcome.Steps, ToolCalls: outcome.ToolCalls, Usage: outcome.Usage}
	switch {
	case stopped && t.ctx.Err() != nil:
		state.Status, state.Error = TurnStopped, "stopped: the server shut down during the turn"
	case stopped:
		state.Status, state.Error = TurnStopped, "stopped during the turn"
	case err != nil:
		state.Status, state.Error = TurnFailed, err.Error()
		t.log.Warn("turn failed", slog.String("session", tr.session), slog.Any("error", err))
	}
	t.mu.Lock()
	tr.ended, tr.stopped = true, stopped
	delete(t.running, tr.session)
	t.last[tr.session] = state
	tr.state = state
	t.mu.Unlock()
	tr.cancel()
	if tr.req.Ended != nil {
		tr.req.Ended(tr, err)
	}
	if !stopped {
		t.waker.Check(t.ctx, tr.session) //nolint:errcheck // looked at again at the next ending
	}
	close(tr.done)
}

// Cancel stops the turn of a session (reserved or running) and reports
// whether there was one: the chat's Ctrl+C and /kill.
func (t *Turns) Cancel(session string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	tr := t.running[session]
	if tr != nil {
		tr.cancel()
	}
	return tr != nil
}

// Wake watches a session and has the waker look at it: its agent is
// woken if it is due (the one rule, once per batch of ended tasks). A way
// in that follows the change log itself calls it once it has dealt with
// a task's ending.
func (t *Turns) Wake(ctx context.Context, session string) error {
	t.waker.Watch(session)
	return t.waker.Check(ctx, session)
}

// wake starts the turn of a session the waker found due: its agent
// answers the notifications of its ended tasks. A busy session is looked
// at again when its turn ends.
func (t *Turns) wake(session string) bool {
	if t.opts.Wake != nil {
		return t.opts.Wake(session)
	}
	_, err := t.Start(session, TurnRequest{})
	if err != nil && !errors.Is(err, ErrTurnRunning) && !errors.Is(err, sa.ErrClosed) {
		t.log.Warn("wake agent", slog.String("session", session), slog.Any("error", err))
	}
	return err == nil
}

// Stop ends the running turns (and those reserved but not run) and waits
// for them; no turn starts after.
func (t *Turns) Stop() {
	t.mu.Lock()
	t.stopped = true
	var unrun []*BackgroundTurn
	for _, tr := range t.running {
		if !tr.going {
			unrun = append(unrun, tr)
		}
	}
	t.mu.Unlock()
	t.waker.Close()
	t.cancel()
	for _, tr := range unrun {
		tr.Go() // ends it, as stopped
	}
	t.wg.Wait()
}
