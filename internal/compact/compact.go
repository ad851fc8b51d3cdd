// Package compact shortens a conversation that has grown too long for its
// model: it asks the model for a summary and stores it in the shape the
// fork pipeline and imported transcripts already use (a user message with
// a compaction part, then an assistant message with Summary set). Nothing
// is copied or deleted: the history stays a list of deltas, and what a
// model is sent afterwards starts at the summary (View).
package compact

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	sa "github.com/superagents/superagents"
)

// ErrNoSummary: the model answered the summary request without text.
var ErrNoSummary = errors.New("the model wrote no summary")

// SummaryPrompt is the request for a summary, sent as the last user
// message after the conversation itself.
const SummaryPrompt = `The conversation so far is about to be replaced by a summary, to save room in the context window. Write that summary now, so that the work can continue from it alone:
- the goal and every request of the user, with their constraints;
- what was done and found: files read or changed, commands run and their results, decisions and their reasons;
- what is still to do, and the very next step.
Keep exact names, paths, identifiers and values. Reply with the summary only, as plain text; do not call any tool.`

// summaryLead introduces the summary when it is sent to a model.
const summaryLead = "The conversation before this point was compacted to save room. Its summary:\n\n"

// Marker returns the user message that opens a compaction: a compaction
// part, with the instructions given for the summary as its note.
func Marker(instructions string) sa.Message {
	return sa.Message{Role: sa.RoleUser, Parts: []sa.Part{{Type: sa.PartCompaction, Text: strings.TrimSpace(instructions)}}}
}

// Boundary finds the latest complete compaction boundary of a history: the
// index of its summary (the assistant message with Summary set that
// follows a marker), or -1 when there is none. pending reports a later
// marker whose summary has not come (a compaction in progress): it is
// ignored in favour of the previous complete boundary, as the fork
// pipeline does. A marker followed by any other assistant message was
// abandoned; a clear forgets everything before it.
func Boundary(history []sa.Message) (summary int, pending bool) {
	summary, marker := -1, -1
	for i, m := range history {
		switch {
		case m.Kind == sa.KindClear:
			summary, marker = -1, -1
		case m.Role == sa.RoleUser && isMarker(m):
			marker = i
		case m.Role == sa.RoleAssistant && marker >= 0:
			if m.Summary {
				summary = i
			}
			marker = -1
		}
	}
	return summary, marker >= 0
}

func isMarker(m sa.Message) bool {
	return slices.ContainsFunc(m.Parts, func(p sa.Part) bool { return p.Type == sa.PartCompaction })
}

// View returns what a model is sent of a history: everything when it holds
// no complete compaction, else the latest summary and what follows it. The
// summary goes as a user message (the APIs want the conversation to open
// with one) that says what it is. The history is not modified.
func View(history []sa.Message) []sa.Message {
	start, _ := Boundary(history)
	if start < 0 {
		return history
	}
	view := slices.Clone(history[start:])
	s := view[0]
	view[0] = sa.Message{ID: s.ID, SessionID: s.SessionID, Role: sa.RoleUser, Kind: sa.KindMessage, CreatedAt: s.CreatedAt,
		Parts: []sa.Part{sa.TextPart(summaryLead + summaryText(s))}}
	return view
}

// summaryText is the text of a summary message, hidden parts included.
func summaryText(m sa.Message) string {
	var texts []string
	for _, p := range m.Parts {
		if p.Type == sa.PartText && strings.TrimSpace(p.Text) != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n\n")
}

// Compactor writes compactions of sessions with one model.
type Compactor struct {
	Store    sa.Sessions
	Provider sa.Provider
	// Model is the provider's model name; ModelLabel the "provider/model"
	// string recorded on the summary.
	Model, ModelLabel string
	// System and Tools are the agent's own: sent unchanged, the request
	// reads the conversation's cached prefix, and the Messages API refuses
	// a history with tool calls when no tool is defined.
	System    string
	Tools     []sa.ToolSpec
	MaxTokens int
}

// Result is a compaction that was stored.
type Result struct {
	// Marker and Summary are the two messages stored, in order.
	Marker  sa.Message `json:"marker"`
	Summary sa.Message `json:"summary"`
	// Compacted is how many messages the summary replaces in what the
	// model is sent.
	Compacted int `json:"compacted"`
}

// Compact asks the model for a summary of what it is sent of the session
// now and stores the compaction: the marker first (a compaction in
// progress, which readers ignore), then the summary with the request's
// usage. If the model fails, the marker stays without a summary and the
// next assistant message abandons it; the session is otherwise unchanged.
func (c *Compactor) Compact(ctx context.Context, sessionID, instructions string) (Result, error) {
	history, err := c.Store.History(ctx, sessionID)
	if err != nil {
		return Result{}, fmt.Errorf("compact: read history: %w", err)
	}
	view := View(history)
	start, _ := Boundary(history)
	if !hasTurns(history[start+1:]) {
		return Result{}, fmt.Errorf("%w: compact: session %s has nothing to compact", sa.ErrInvalid, sa.ShortID(sessionID))
	}
	stored, err := c.Store.Append(ctx, sessionID, Marker(instructions))
	if err != nil {
		return Result{}, fmt.Errorf("compact: store marker: %w", err)
	}
	res := Result{Marker: stored[0], Compacted: len(view)}

	prompt := SummaryPrompt
	if s := strings.TrimSpace(instructions); s != "" {
		prompt += "\n\nAlso: " + s
	}
	req := sa.ModelRequest{
		Model: c.Model, System: c.System, Tools: c.Tools, MaxTokens: c.MaxTokens,
		Messages: append(slices.Clip(view), sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart(prompt)}}),
	}
	text, usage, err := c.ask(ctx, req)
	if err != nil {
		return res, fmt.Errorf("compact: %w", err)
	}
	summary := sa.Message{Role: sa.RoleAssistant, Summary: true, Model: c.ModelLabel, Usage: usage, Parts: []sa.Part{sa.TextPart(text)}}
	stored, err = c.Store.Append(ctx, sessionID, summary)
	if err != nil {
		return res, fmt.Errorf("compact: store summary: %w", err)
	}
	res.Summary = stored[0]
	return res, nil
}

// ask sends the summary request and returns the text the model wrote (any
// tool call it made instead is ignored) and the usage it reported.
func (c *Compactor) ask(ctx context.Context, req sa.ModelRequest) (string, sa.Usage, error) {
	var b strings.Builder
	var usage sa.Usage
	for ev, err := range c.Provider.Stream(ctx, req) {
		if err != nil {
			return "", usage, fmt.Errorf("model: %w", err)
		}
		switch ev.Type {
		case sa.EventTextDelta:
			b.WriteString(ev.Text)
		case sa.EventUsage:
			usage = ev.Usage
		}
	}
	text := strings.TrimSpace(b.String())
	if text == "" {
		return "", usage, ErrNoSummary
	}
	return text, usage, nil
}

// hasTurns reports whether messages hold a conversation turn a summary
// could replace.
func hasTurns(msgs []sa.Message) bool {
	return slices.ContainsFunc(msgs, func(m sa.Message) bool {
		switch {
		case m.Kind == sa.KindClear, m.Kind == sa.KindFork, m.Kind == sa.KindCommand, isMarker(m):
			return false
		}
		return m.Role != sa.RoleSystem
	})
}
