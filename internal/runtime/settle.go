package runtime

import (
	"context"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/tasks"
)

// SettleOptions adjust a turn run through the one turn loop.
type SettleOptions struct {
	TurnOptions
	// Ended, if set, sees each turn's outcome as it ends (the first turn
	// and every wake); what it returns (the turn's error, or its own)
	// ends the loop when not nil.
	Ended func(sa.TurnOutcome, error) error
	// BeforeWake, if set, runs once the session's tasks have all ended,
	// before the waker decides whether the agent is woken: a way in shows
	// their notifications there, before the turn that answers them.
	BeforeWake func(ctx context.Context) error
}

// Settle runs the turn (input stored first) and then, while the agent
// has tasks of its own, waits for them and wakes it once per batch of
// ended tasks, lease held throughout: the one turn loop
// (tasks.Manager.Settle) in its blocking mode, which `run --wait` and
// tasks waiting for their own tasks use. Its background mode is Turns
// (the chat, HTTP): there each turn gives the lease back before the
// waker's Check decides on the wake, since the user may write meanwhile.
// Both modes leave that decision to the waker's Check alone.
func (t *Turn) Settle(ctx context.Context, opts SettleOptions, input ...sa.Message) error {
	return t.rt.tasks.Settle(ctx, t.session.ID, tasks.Loop{
		Turn: func(ctx context.Context, wake bool) error {
			var in []sa.Message
			if !wake {
				in = input
			}
			outcome, err := t.Run(ctx, opts.TurnOptions, in...)
			if opts.Ended != nil {
				return opts.Ended(outcome, err)
			}
			return err
		},
		BeforeWake: opts.BeforeWake,
	})
}
