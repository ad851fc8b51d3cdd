// Package offline is a model that needs no network: it does arithmetic,
// recalls the questions asked earlier in the conversation, follows an
// optional script of canned replies and tool calls, and otherwise says
// plainly what it cannot do.
//
// It is deterministic: the reply depends only on the request, never on
// hidden state, so a conversation behaves the same after a restart or in a
// fork. It streams its answer in a few deltas and reports an estimate of
// the tokens (about four characters each), like a real model.
package offline

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"unicode/utf8"

	"github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/llm/internal/wire"
)

// Cannot is the reply to anything the offline model cannot answer.
const Cannot = "I am the offline model, so I can only do simple arithmetic and recall your earlier questions; " +
	"to use a real model, set ANTHROPIC_API_KEY or OPENAI_API_KEY, or set model = \"provider/model\" in .superagents/config.toml."

// Options configure the offline model.
type Options struct {
	// Script, when set, is tried before the built-in answers.
	Script *Script
}

// Provider is the offline model. It is safe for concurrent use.
type Provider struct {
	script *Script
}

// New returns the offline model.
func New(o Options) *Provider { return &Provider{script: o.Script} }

// Stream answers the request.
func (p *Provider) Stream(ctx context.Context, req superagents.ModelRequest) iter.Seq2[superagents.StreamEvent, error] {
	return func(yield func(superagents.StreamEvent, error) bool) {
		text, calls, err := p.answer(req)
		if err != nil {
			yield(superagents.StreamEvent{}, fmt.Errorf("offline: %w", err))
			return
		}
		for _, e := range events(req, text, calls) {
			if err := ctx.Err(); err != nil {
				yield(superagents.StreamEvent{}, fmt.Errorf("offline: %w", err))
				return
			}
			if !yield(e, nil) {
				return
			}
		}
	}
}

// answer decides the reply: a script rule, or else the built-in answers.
func (p *Provider) answer(req superagents.ModelRequest) (string, []superagents.Part, error) {
	t := newTurn(req.Messages)
	if t.empty {
		return "", nil, fmt.Errorf("%w: the conversation has no message for the model", superagents.ErrInvalid)
	}
	if p.script != nil {
		for i := range p.script.Rules {
			r := &p.script.Rules[i]
			if groups, ok := r.match(t); ok {
				text, calls, err := r.answer(t, groups, req.Tools)
				for j := range calls {
					// Deterministic and unique within a conversation, whose
					// history grows with every call.
					calls[j].CallID = fmt.Sprintf("call_%d_%d", len(req.Messages), j+1)
				}
				return text, calls, err
			}
		}
	}
	switch {
	case t.afterTools():
		return t.toolSummary(), nil, nil
	case t.notification:
		return "Noted: " + firstLine(t.user), nil, nil
	}
	if text, ok := arithmetic(t.user); ok {
		return text, nil, nil
	}
	if text, ok := recall(t.user, req.Messages); ok {
		return text, nil, nil
	}
	return Cannot, nil, nil
}

// events streams a reply: the text in a few deltas, the tool calls, the
// usage and the stop.
func events(req superagents.ModelRequest, text string, calls []superagents.Part) []superagents.StreamEvent {
	var out []superagents.StreamEvent
	for _, piece := range pieces(text, 4) {
		out = append(out, superagents.StreamEvent{Type: superagents.EventTextDelta, Text: piece})
	}
	output := utf8.RuneCountInString(text)
	for i := range calls {
		out = append(out, superagents.StreamEvent{Type: superagents.EventToolCall, ToolCall: &calls[i]})
		output += len(calls[i].Name) + len(calls[i].Input)
	}
	stop := superagents.StopEndTurn
	if len(calls) > 0 {
		stop = superagents.StopToolUse
	}
	usage := superagents.Usage{InputTokens: tokens(inputChars(req)), OutputTokens: tokens(output)}
	return append(out,
		superagents.StreamEvent{Type: superagents.EventUsage, Usage: usage},
		superagents.StreamEvent{Type: superagents.EventStop, StopReason: stop},
	)
}

// pieces cuts text at word boundaries into at most n pieces of about the
// same number of words.
func pieces(text string, n int) []string {
	if text == "" {
		return nil
	}
	var words []string
	for len(text) > 0 {
		i := strings.IndexByte(text, ' ')
		if i < 0 {
			words = append(words, text)
			break
		}
		words = append(words, text[:i+1])
		text = text[i+1:]
	}
	n = min(n, len(words))
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, strings.Join(words[i*len(words)/n:(i+1)*len(words)/n], ""))
	}
	return out
}

// tokens estimates tokens from characters: about four each, at least one.
func tokens(chars int) int64 { return int64(chars+3)/4 + 1 }

func inputChars(req superagents.ModelRequest) int {
	n := utf8.RuneCountInString(req.System)
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			n += utf8.RuneCountInString(p.Text) + utf8.RuneCountInString(p.Output) + len(p.Input)
		}
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.InputSchema)
	}
	return n
}

// turn is what the offline model looks at in a request.
type turn struct {
	visible []superagents.Message
	// user is the latest user message's text (hidden parts included);
	// notification says whether it is a task notification.
	user         string
	notification bool
	// step is the model call within the turn: 1 for the first answer to
	// the latest user message.
	step  int
	empty bool
}

func newTurn(msgs []superagents.Message) turn {
	t := turn{visible: wire.Visible(msgs), step: 1}
	t.empty = len(t.visible) == 0
	for _, m := range msgs {
		if m.Role == superagents.RoleUser && (ordinary(m) || m.Kind == superagents.KindNotification) {
			t.user = strings.TrimSpace(wire.Text(m))
			t.notification = m.Kind == superagents.KindNotification
		}
	}
	for i := len(t.visible) - 1; i >= 0 && t.visible[i].Role != superagents.RoleUser; i-- {
		if t.visible[i].Role == superagents.RoleAssistant {
			t.step++
		}
	}
	return t
}

// results returns the tool results of the latest message, if it is a tool
// message.
func (t turn) results() []superagents.Part {
	if n := len(t.visible); n > 0 && t.visible[n-1].Role == superagents.RoleTool {
		return t.visible[n-1].Parts
	}
	return nil
}

func (t turn) afterTools() bool { return len(t.results()) > 0 }

func (t turn) afterTool(name string) bool {
	for _, r := range t.results() {
		if r.Name == name {
			return true
		}
	}
	return false
}

// toolSummary is the built-in answer after tool calls: what they returned.
func (t turn) toolSummary() string {
	var b strings.Builder
	for i, r := range t.results() {
		if i > 0 {
			b.WriteString("\n\n")
		}
		verb := "returned"
		if r.IsError {
			verb = "failed"
		}
		fmt.Fprintf(&b, "The %s tool %s:\n%s", r.Name, verb, r.Output)
	}
	return b.String()
}

func (t turn) lastToolResult() string {
	var outs []string
	for _, r := range t.results() {
		outs = append(outs, r.Output)
	}
	return strings.Join(outs, "\n")
}

// toolResult returns the latest result of the named tool.
func (t turn) toolResult(name string) string {
	for i := len(t.visible) - 1; i >= 0; i-- {
		m := t.visible[i]
		for j := len(m.Parts) - 1; j >= 0; j-- {
			if p := m.Parts[j]; p.Type == superagents.PartToolResult && p.Name == name {
				return p.Output
			}
		}
	}
	return ""
}

// funcs binds the template functions of a script to this turn.
func (t turn) funcs(groups []string) funcMap {
	str := func(f func() string) templateFunc {
		return templateFunc{call: func([]any) (string, error) { return f(), nil }}
	}
	return funcMap{
		"last_user":        str(func() string { return t.user }),
		"last_tool_result": str(t.lastToolResult),
		"tool_result": {params: []argKind{argString}, call: func(args []any) (string, error) {
			return t.toolResult(args[0].(string)), nil
		}},
		"group": {params: []argKind{argInt}, call: func(args []any) (string, error) {
			n := args[0].(int)
			if n < 0 || n >= len(groups) {
				return "", fmt.Errorf("group %d does not exist (the rule's regexp has %d)", n, max(len(groups)-1, 0))
			}
			return groups[n], nil
		}},
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
