package agent

import (
	"context"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/compact"
)

// EventCompacted: the session was compacted before a model request; the
// marker and the summary were stored (and reported as sa.TurnEventMessage).
const EventCompacted sa.TurnEventType = "compacted"

// Compactor returns a compactor with the loop's model, system prompt and
// tools, so a summary request reads the conversation's cached prefix.
func (l *Loop) Compactor() *compact.Compactor {
	c := &compact.Compactor{Store: l.Store, Provider: l.Provider, Model: l.Model, ModelLabel: l.ModelLabel,
		System: l.System, MaxTokens: l.MaxTokens}
	if l.Tools != nil {
		c.Tools = l.Tools.Specs()
	}
	return c
}

// compactIfDue compacts the session when the request it is about to send
// passes the loop's compaction threshold, and returns the history to send
// from (re-read after a compaction).
func (r *run) compactIfDue(ctx context.Context, history []sa.Message, specs []sa.ToolSpec) ([]sa.Message, error) {
	auto := r.loop.Compaction
	if auto == nil {
		return history, nil
	}
	if _, due := auto.Due(history, r.loop.System, specs); !due {
		return history, nil
	}
	c := r.loop.Compactor()
	res, err := c.Compact(ctx, r.sessionID, "")
	if res.Marker.ID != 0 {
		r.emit(sa.TurnEvent{Type: sa.TurnEventMessage, Step: r.out.Steps, Message: &res.Marker})
	}
	if err != nil {
		return nil, err
	}
	r.out.Usage = r.out.Usage.Add(res.Summary.Usage)
	r.emit(sa.TurnEvent{Type: sa.TurnEventMessage, Step: r.out.Steps, Message: &res.Summary})
	r.emit(sa.TurnEvent{Type: EventCompacted, Step: r.out.Steps, Message: &res.Summary})
	r.read = false // a compaction starts the history anew
	return r.readHistory(ctx)
}
