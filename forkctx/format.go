package forkctx

import (
	"bytes"
	"encoding/json"
	"strings"

	sa "github.com/superagents/superagents"
)

// block is one message of the digest as formatted, with its sizes, so the
// budgets can drop or cut it without formatting anything again.
type block struct {
	text  string
	chars int
	// tokens is counted only for blocks that survive the character budget.
	tokens int
	// messages is how many history messages the block stands for: its own
	// and the following ones that show nothing by themselves (a tool
	// message whose results appear under their calls, for example).
	messages int
	summary  bool
	removed  bool
	// fresh: the block shows a tool call or result of tier 1 or 2, whose
	// text changes as the parent's conversation grows (see stableBounds).
	fresh bool
}

// label returns the prefix of a message: its role's, or for a task's
// notification (stored as a user message, but nobody said it) its own.
func label(m sa.Message) string {
	if m.Kind == sa.KindNotification {
		return "Notification:"
	}
	switch m.Role {
	case sa.RoleUser:
		return "User:"
	case sa.RoleAssistant:
		return "Agent:"
	case sa.RoleSystem:
		return "System:"
	}
	return "Tool:"
}

// format renders each kept message once. summaryFirst says the first
// message is the compaction summary the digest starts from.
func (p *Pipeline) format(history []sa.Message, plan tierPlan, summaryFirst bool, st *Stats) []block {
	blocks := make([]block, 0, len(history))
	leading := 0 // messages before the first block that shows something
	nextCall, nextResult := 0, 0
	var items []string
	var fresh bool
	var b strings.Builder
	for i, m := range history {
		items, fresh = items[:0], false
		for _, part := range m.Parts {
			switch part.Type {
			case sa.PartText:
				if part.Text != "" && !part.Hidden {
					items = append(items, validUTF8(part.Text))
				}
			case sa.PartReasoning:
				st.ReasoningOmitted++
			case sa.PartToolCall:
				items = append(items, p.formatCall(part, history, plan, nextCall))
				fresh = fresh || plan.calls[nextCall].tier < 3
				nextCall++
			case sa.PartToolResult:
				if r := plan.results[nextResult]; r.call < 0 {
					items = append(items, orphanResult(part, r))
					fresh = fresh || r.tier < 3
				}
				nextResult++
			}
		}
		// Kinds fork and command are records for people, not context.
		if m.Kind == sa.KindFork || m.Kind == sa.KindCommand || len(items) == 0 {
			if len(blocks) == 0 {
				leading++
			} else {
				blocks[len(blocks)-1].messages++
			}
			continue
		}
		summary := summaryFirst && i == 0
		b.Reset()
		b.WriteString(label(m))
		b.WriteByte(' ')
		if summary {
			b.WriteString("[Summary of the earlier conversation]\n")
		}
		for j, item := range items {
			if j > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(item)
		}
		text := b.String()
		blocks = append(blocks, block{text: text, chars: charCount(text), messages: 1, summary: summary, fresh: fresh})
	}
	if len(blocks) > 0 {
		blocks[0].messages += leading
	}
	return blocks
}

// formatCall renders a tool call and, under it, its result wherever in the
// history that result is.
func (p *Pipeline) formatCall(part sa.Part, history []sa.Message, plan tierPlan, callIndex int) string {
	c := plan.calls[callIndex]
	var b strings.Builder
	b.WriteString("[Tool: ")
	b.WriteString(validUTF8(part.Name))
	b.WriteString("] ")
	b.WriteString(previewRunes(compactJSON(part.Input), p.paramChars[c.tier-1]))
	if c.result >= 0 {
		r := plan.results[c.result]
		res := history[r.msg].Parts[r.part]
		b.WriteString("\n[Result")
		b.WriteString(resultFlag(res))
		b.WriteString("]\n")
		b.WriteString(r.text)
	}
	return b.String()
}

// orphanResult renders a result whose call is not in the history (it was
// before the compaction boundary, say): it names the tool and the call.
func orphanResult(part sa.Part, r toolResult) string {
	name := r.name
	if name == "" {
		name = "unknown tool"
	}
	return "[Result: " + validUTF8(name) + ", call " + validUTF8(part.CallID) + resultFlag(part) + "]\n" + r.text
}

// resultFlag marks a result that reports a failure.
func resultFlag(part sa.Part) string {
	if part.IsError {
		return " (error)"
	}
	return ""
}

// compactJSON returns a call's parameters on one line. Inputs are valid
// JSON once validated; anything else is shown as it is.
func compactJSON(input json.RawMessage) string {
	if len(input) == 0 {
		return "{}"
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, input); err != nil {
		return string(input)
	}
	return buf.String()
}
