package llmtest

import (
	"context"
	"strings"

	"github.com/superagents/superagents"
)

// Transcript is what a provider's stream yielded, in order.
type Transcript []superagents.StreamEvent

// Collect runs a provider's stream to its end. On error, the transcript
// holds the events yielded before it.
func Collect(ctx context.Context, p superagents.Provider, req superagents.ModelRequest) (Transcript, error) {
	var t Transcript
	for e, err := range p.Stream(ctx, req) {
		if err != nil {
			return t, err
		}
		t = append(t, e)
	}
	return t, nil
}

// UserRequest is a request of one user message.
func UserRequest(model, text string) superagents.ModelRequest {
	return superagents.ModelRequest{
		Model:    model,
		Messages: []superagents.Message{{Role: superagents.RoleUser, Parts: []superagents.Part{superagents.TextPart(text)}}},
	}
}

// Text returns the text deltas joined.
func (t Transcript) Text() string {
	var b strings.Builder
	for _, e := range t {
		if e.Type == superagents.EventTextDelta {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

// Reasoning returns the reasoning deltas joined, and their signatures.
func (t Transcript) Reasoning() (text, signature string) {
	for _, e := range t {
		if e.Type == superagents.EventReasoningDelta {
			text += e.Text
			signature += e.Signature
		}
	}
	return text, signature
}

// ToolCalls returns the tool calls.
func (t Transcript) ToolCalls() []superagents.Part {
	var calls []superagents.Part
	for _, e := range t {
		if e.Type == superagents.EventToolCall && e.ToolCall != nil {
			calls = append(calls, *e.ToolCall)
		}
	}
	return calls
}

// Count returns the number of events of a type.
func (t Transcript) Count(typ superagents.EventType) int {
	n := 0
	for _, e := range t {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// Usage returns the last usage reported.
func (t Transcript) Usage() superagents.Usage {
	var u superagents.Usage
	for _, e := range t {
		if e.Type == superagents.EventUsage {
			u = e.Usage
		}
	}
	return u
}

// Stop returns the stop reason, or "" when the stream did not stop (the
// stop event must be the last one).
func (t Transcript) Stop() superagents.StopReason {
	if n := len(t); n > 0 && t[n-1].Type == superagents.EventStop {
		return t[n-1].StopReason
	}
	return ""
}
