package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/runtime"
	"github.com/superagents/superagents/tasktools"
)

// TurnState is what the server knows of a session's latest turn. The
// turn's lease is in the store (so no other process or way in writes to
// the session meanwhile), but its progress is only known to the server
// that runs it; its messages are stored as usual.
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
	turnIdle      = "idle"
	turnRunning   = "running"
	turnCompleted = "completed"
	turnFailed    = "failed"
	turnStopped   = "stopped"
)

// turns runs session turns in the background, one at a time per session,
// and wakes an agent whose background tasks have all ended and left
// notifications it has not answered, as `run --wait` does.
type turns struct {
	rt  *runtime.Runtime
	log *slog.Logger

	ctx    context.Context // cancelled by stop: running turns end
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// waker wakes the sessions whose agent launched tasks in a turn run
	// here (only those) when their tasks have ended.
	waker *runtime.Waker

	mu      sync.Mutex
	running map[string]*turn
	last    map[string]TurnState
	stopped bool
}

// turn is one running turn; state is final once done is closed.
type turn struct {
	session string
	model   string
	started time.Time
	done    chan struct{}
	state   TurnState
	lease   *runtime.Turn // nil once given back
}

// startedState is the turn's state as it started; it never changes, so
// it may be read while the turn runs.
func (tr *turn) startedState() TurnState {
	started := tr.started
	return TurnState{Status: turnRunning, StartedAt: &started}
}

func newTurns(rt *runtime.Runtime, log *slog.Logger) *turns {
	ctx, cancel := context.WithCancel(context.Background())
	t := &turns{rt: rt, log: log, ctx: ctx, cancel: cancel,
		running: map[string]*turn{}, last: map[string]TurnState{}}
	t.waker = rt.NewWaker(t.wake)
	return t
}

// state returns what is known of a session's turns.
func (t *turns) state(session string) TurnState {
	t.mu.Lock()
	defer t.mu.Unlock()
	if tr := t.running[session]; tr != nil {
		return tr.state
	}
	if st, ok := t.last[session]; ok {
		return st
	}
	return TurnState{Status: turnIdle}
}

// reserve takes a session's turn: its lease in the store (refused while a
// turn or task runs there, in this process or another) and its slot here.
func (t *turns) reserve(session, model string) (*turn, error) {
	t.mu.Lock()
	stopped, running := t.stopped, t.running[session] != nil
	t.mu.Unlock()
	switch {
	case stopped:
		return nil, sa.ErrClosed
	case running:
		return nil, t.busy(session)
	}
	lease, err := t.rt.Begin(t.ctx, session, runtime.HolderHTTP)
	var busy *sa.BusyError
	switch {
	case errors.As(err, &busy):
		return nil, fmt.Errorf("%w: %s", errTurnRunning, busy.Error())
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
	tr := &turn{session: session, model: model, started: time.Now(), done: make(chan struct{}), lease: lease}
	tr.state = tr.startedState()
	t.running[session] = tr
	return tr, nil
}

// busy is the refusal of a second turn in a session that runs one here.
func (t *turns) busy(session string) error {
	return fmt.Errorf("%w in session %s: wait for it to end (GET /v1/sessions/%s shows it)", errTurnRunning, sa.ShortID(session), session)
}

// release gives a slot back without running a turn.
func (t *turns) release(tr *turn) {
	tr.lease.End()
	t.mu.Lock()
	delete(t.running, tr.session)
	t.mu.Unlock()
	close(tr.done)
}

// start runs a turn of a session in the background. before, if set, runs
// first, with the session's slot held (to store the user's message): when
// it fails no turn runs.
func (t *turns) start(session, model string, before func(lease *runtime.Turn) error) (*turn, error) {
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

func (t *turns) run(tr *turn) {
	defer t.wg.Done()
	opts := runtime.TurnOptions{Model: tr.model, OnEvent: func(e sa.TurnEvent) {
		if e.Type == sa.TurnEventToolStart && e.Call != nil && e.Call.Name == tasktools.TaskToolName {
			t.waker.Watch(tr.session)
		}
	}}
	outcome, err := tr.lease.Run(t.ctx, opts)
	tr.lease.End()
	end := time.Now()
	state := TurnState{Status: turnCompleted, StartedAt: tr.state.StartedAt, EndedAt: &end, Answer: outcome.Text,
		Steps: outcome.Steps, ToolCalls: outcome.ToolCalls, Usage: outcome.Usage}
	switch {
	case err != nil && errors.Is(t.ctx.Err(), context.Canceled):
		state.Status, state.Error = turnStopped, "stopped: the server shut down during the turn"
	case err != nil:
		state.Status, state.Error = turnFailed, err.Error()
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
func (t *turns) wake(session string) bool {
	_, err := t.start(session, "", nil)
	if err != nil && !errors.Is(err, errTurnRunning) && !errors.Is(err, sa.ErrClosed) {
		t.log.Warn("wake agent", slog.String("session", session), slog.Any("error", err))
	}
	return err == nil
}

// stop ends the running turns and waits for them; no turn starts after.
func (t *turns) stop() {
	t.mu.Lock()
	t.stopped = true
	t.mu.Unlock()
	t.waker.Close()
	t.cancel()
	t.wg.Wait()
}
