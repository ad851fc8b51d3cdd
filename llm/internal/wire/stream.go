package wire

import (
	"context"
	"iter"

	"github.com/superagents/superagents"
)

// Out is where an attempt sends its events. It remembers whether output
// reached the caller (then the attempt may not be retried) and whether the
// caller stopped the iteration.
type Out struct {
	yield   func(superagents.StreamEvent, error) bool
	started bool
	stopped bool
}

// Emit sends an event of output; it reports false when the caller stopped.
func (o *Out) Emit(e superagents.StreamEvent) bool {
	o.started = true
	if !o.yield(e, nil) {
		o.stopped = true
	}
	return !o.stopped
}

// Started reports whether any output reached the caller.
func (o *Out) Started() bool { return o.started }

// Finish sends the usage (when known) and the stop event.
func (o *Out) Finish(u superagents.Usage, stop superagents.StopReason) {
	if !u.IsZero() && !o.Emit(superagents.StreamEvent{Type: superagents.EventUsage, Usage: u}) {
		return
	}
	o.Emit(superagents.StreamEvent{Type: superagents.EventStop, StopReason: stop})
}

// Stream is the body of a network provider's Stream method: it builds the
// request (a failure there is the caller's: nothing is sent), then runs
// attempts under Retry, and ends the sequence with the error, if any,
// unless the caller has already stopped.
func Stream[P any](ctx context.Context, c Call, retries int, build func() (P, error), attempt func(context.Context, P, *Out) error) iter.Seq2[superagents.StreamEvent, error] {
	return func(yield func(superagents.StreamEvent, error) bool) {
		params, err := build()
		if err != nil {
			yield(superagents.StreamEvent{}, c.Errorf(err, "%v", err))
			return
		}
		out := &Out{yield: yield}
		err = Retry(ctx, retries, func() (bool, error) {
			err := attempt(ctx, params, out)
			return out.started, err
		})
		if err != nil && !out.stopped {
			yield(superagents.StreamEvent{}, err)
		}
	}
}
