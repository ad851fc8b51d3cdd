package agent

import (
	sa "github.com/superagents/superagents"
)

// interruptedOutput is the result recorded for a tool call whose result
// was never stored (the process stopped while the tool ran).
const interruptedOutput = "interrupted: the tool did not finish (superagents stopped while it ran); run it again if you still need its result"

// ModelMessages turns an effective history into what a model is sent:
//
//   - audit records (fork, command) are dropped; notifications stay (the
//     model must learn that a background task ended);
//   - each assistant message's tool results follow it directly, whatever
//     was stored between them (a notification can land while tools run);
//   - a tool call without a stored result gets an error result saying it
//     was interrupted, so providers always receive answered calls.
//
// The returned slice shares no parts with the input.
func ModelMessages(history []sa.Message) []sa.Message {
	results := make(map[string]sa.Part)
	for _, m := range history {
		if m.Role != sa.RoleTool {
			continue
		}
		for _, p := range m.Parts {
			if p.Type == sa.PartToolResult {
				results[p.CallID] = p
			}
		}
	}
	out := make([]sa.Message, 0, len(history))
	for _, m := range history {
		switch {
		case m.Kind == sa.KindFork || m.Kind == sa.KindCommand || m.Kind == sa.KindClear:
			continue
		case m.Role == sa.RoleTool:
			continue // placed right after its call below
		}
		out = append(out, m.Clone())
		if m.Role != sa.RoleAssistant {
			continue
		}
		var answers []sa.Part
		for _, p := range m.Parts {
			if p.Type != sa.PartToolCall {
				continue
			}
			r, ok := results[p.CallID]
			if !ok {
				r = sa.Part{Type: sa.PartToolResult, CallID: p.CallID, Name: p.Name, Output: interruptedOutput, IsError: true}
			}
			answers = append(answers, r)
		}
		if len(answers) > 0 {
			out = append(out, sa.Message{SessionID: m.SessionID, Role: sa.RoleTool, Kind: sa.KindMessage, Parts: answers})
		}
	}
	return out
}

// danglingCalls returns the tool calls of the history that have no stored
// result, in order.
func danglingCalls(history []sa.Message) []sa.Part {
	answered := make(map[string]bool)
	for _, m := range history {
		if m.Role == sa.RoleTool {
			for _, p := range m.Parts {
				answered[p.CallID] = true
			}
		}
	}
	var out []sa.Part
	for _, m := range history {
		if m.Role != sa.RoleAssistant {
			continue
		}
		for _, p := range m.Parts {
			if p.Type == sa.PartToolCall && !answered[p.CallID] {
				out = append(out, p)
			}
		}
	}
	return out
}
