package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"

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

// Stream is the body of a network provider's Stream method: it checks the
// request and builds the API's parameters (a failure there is the
// caller's: nothing is sent), then runs attempts under Retry, and ends the
// sequence with the error, if any, unless the caller has already stopped.
func Stream[P any](ctx context.Context, c Call, retries int, req superagents.ModelRequest, build func(superagents.ModelRequest) (P, error), attempt func(context.Context, P, *Out) error) iter.Seq2[superagents.StreamEvent, error] {
	return func(yield func(superagents.StreamEvent, error) bool) {
		var params P
		err := checkModel(req)
		if err == nil {
			params, err = build(req)
		}
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

func checkModel(req superagents.ModelRequest) error {
	if strings.TrimSpace(req.Model) == "" {
		return fmt.Errorf("%w: no model name", superagents.ErrInvalid)
	}
	return nil
}

// Schema returns a tool's input schema as a JSON object ({} when it has
// none), checking the tool's name.
func Schema(t superagents.ToolSpec) (map[string]any, error) {
	if t.Name == "" {
		return nil, fmt.Errorf("%w: a tool has no name", superagents.ErrInvalid)
	}
	schema := map[string]any{}
	if len(t.InputSchema) > 0 {
		if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
			return nil, fmt.Errorf("%w: tool %q: input schema is not a JSON object: %v", superagents.ErrInvalid, t.Name, err)
		}
	}
	return schema, nil
}
