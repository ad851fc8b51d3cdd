package agent

import (
	sa "github.com/superagents/superagents"
)

// interruptedOutput is the result recorded for a tool call whose result
// was never stored (the process stopped while the tool ran).
const interruptedOutput = "interrupted: the tool did not finish (superagents stopped while it ran); run it again if you still need its result"

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
