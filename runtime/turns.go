package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	sa "github.com/superagents/superagents"
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
	// session is then woken when its tasks have ended.
	Launches func(sa.TurnEvent) bool
	// Busy words the refusal of a second turn in a session that runs one
	// here; it wraps ErrTurnRunning.
	Busy func(sessionID string) error
}

// Turns is a process's one record of the turns it runs in the
// background, one at a time per session: it starts them, knows their
// state, wakes an agent whose background tasks have all ended and left
// notifications it has not answered (the one waker, following the change
// log), and stops them all.
type Turns struct {
	rt   *Runtime
	opts TurnsOptions
	log  *slog.Logger

	ctx    context.Context // cancelled by stop: running turns end
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// waker wakes the sessions whose agent launched tasks in a turn run
	// here (only those) when their tasks have ended.
	waker *Waker

	mu      sync.Mutex
	running map[string]*BackgroundTurn
	last    map[string]TurnState
	stopped bool
}

// BackgroundTurn is one turn Turns runs; its state is final once Done is
// closed.
type BackgroundTurn struct {
	session string
	model   string
	started time.Time
	done    chan struct{}
	state   TurnState
	lease   *Turn // nil once given back
}

// Done is closed once the turn has ended.
func (tr *BackgroundTurn) Done() <-chan struct{} { return tr.done }

// State is the turn's state; read it once Done is closed.
func (tr *BackgroundTurn) State() TurnState { return tr.state }

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
	t.waker = rt.NewWaker(t.wake)
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

// reserve takes a session's turn: its lease in the store (refused while a
// turn or task runs there, in this process or another) and its slot here.
func (t *Turns) reserve(session, model string) (*BackgroundTurn, error) {
	t.mu.Lock()
	stopped, running := t.stopped, t.running[session] != nil
	t.mu.Unlock()
	switch {
	case stopped:
		return nil, sa.ErrClosed
	case running:
		return nil, t.busy(session)
	}
	lease, err := t.rt.Begin(t.ctx, session, t.opts.Holder)
	var busy *sa.BusyError
	switch {
	case errors.As(err, &busy):
		return nil, fmt.Errorf("%w: %s", ErrTurnRunning, busy.Error())
	case err != nil:
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped || t.running[session] != nil {
		lease.End()
		if t.stopped {
			return nil, sa.ErrClosed
		}
		return nil, t.busy(session)
	}
	tr := &BackgroundTurn{session: session, model: model, started: time.Now(), done: make(chan struct{}), lease: lease}
	tr.state = tr.StartedState()
	t.running[session] = tr
	return tr, nil
}

// busy is the refusal of a second turn in a session that runs one here.
func (t *Turns) busy(session string) error {
	if t.opts.Busy != nil {
		return t.opts.Busy(session)
	}
	return fmt.Errorf("%w in session %s: wait for it to end", ErrTurnRunning, sa.ShortID(session))
}

// release gives a slot back without running a turn.
func (t *Turns) release(tr *BackgroundTurn) {
	tr.lease.End()
	t.mu.Lock()
	delete(t.running, tr.session)
	t.mu.Unlock()
	close(tr.done)
}

// Start runs a turn of a session in the background. before, if set, runs
// first, with the session's slot held (to store the user's message): when
// it fails no turn runs.
func (t *Turns) Start(session, model string, before func(lease *Turn) error) (*BackgroundTurn, error) {
	tr, err := t.reserve(session, model)
	if err != nil {
		return nil, err
	}
	if before != nil {
		if err := before(tr.lease); err != nil {
			t.release(tr)
			return nil, err
		}
	}
	t.mu.Lock()
	stopped := t.stopped
	if !stopped {
		t.wg.Add(1)
	}
	t.mu.Unlock()
	if stopped {
		t.release(tr)
		return nil, sa.ErrClosed
	}
	go t.run(tr)
	return tr, nil
}

func (t *Turns) run(tr *BackgroundTurn) {
	defer t.wg.Done()
	opts := TurnOptions{Model: tr.model, OnEvent: func(e sa.TurnEvent) {
		if t.opts.Launches != nil && t.opts.Launches(e) {
			t.waker.Watch(tr.session)
		}
	}}
	outcome, err := tr.lease.Run(t.ctx, opts)
	tr.lease.End()
	end := time.Now()
	state := TurnState{Status: TurnCompleted, StartedAt: tr.state.StartedAt, EndedAt: &end, Answer: outcome.Text,
		Steps: outcome.Steps, ToolCalls: outcome.ToolCalls, Usage: outcome.Usage}
	switch {
	case err != nil && errors.Is(t.ctx.Err(), context.Canceled):
		state.Status, state.Error = TurnStopped, "stopped: the server shut down during the turn"
	case err != nil:
		state.Status, state.Error = TurnFailed, err.Error()
		t.log.Warn("turn failed", slog.String("session", tr.session), slog.Any("error", err))
	}
	t.mu.Lock()
	delete(t.running, tr.session)
	t.last[tr.session] = state
	tr.state = state
	t.mu.Unlock()
	close(tr.done)
	// Tasks may have ended while the turn ran: their wake-up was skipped.
	if err == nil {
		t.waker.Check(t.ctx, tr.session)
	}
}

// wake runs a turn for a session the waker found due: its agent answers
// the notifications of its ended tasks. A busy session is looked at again
// when its turn ends.
func (t *Turns) wake(session string) bool {
	_, err := t.Start(session, "", nil)
	if err != nil && !errors.Is(err, ErrTurnRunning) && !errors.Is(err, sa.ErrClosed) {
		t.log.Warn("wake agent", slog.String("session", session), slog.Any("error", err))
	}
	return err == nil
}

// Stop ends the running turns and waits for them; no turn starts after.
func (t *Turns) Stop() {
	t.mu.Lock()
	t.stopped = true
	t.mu.Unlock()
	t.waker.Close()
	t.cancel()
	t.wg.Wait()
}
