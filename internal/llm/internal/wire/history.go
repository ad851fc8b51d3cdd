// Package wire holds what the providers share: the model's view of a
// conversation and, for the network providers (Anthropic, OpenAI), the
// HTTP client, the stream idle watchdog, retries and error messages that
// never carry a secret.
package wire

import (
	"strings"

	"github.com/superagents/superagents"
)

// MissingResult is the output given to a tool call that has no recorded
// result (the turn was interrupted), because both APIs refuse a call left
// unanswered.
const MissingResult = "no result was recorded for this tool call (it was interrupted)"

// Visible returns the conversation as a model should see it:
//   - fork, command and clear messages are left out (they are records for
//     people, not turns);
//   - a notification becomes a user message with all its text, hidden parts
//     included (hidden means "not shown to people");
//   - empty text parts and compaction markers are dropped, and messages
//     left with no parts;
//   - every assistant message with tool calls is followed by one tool
//     message that answers each call, in call order: the recorded result
//     (found up to the next assistant message, so a notification that
//     arrived while tools ran does not split them) or, when there is none
//     (an interrupted turn), MissingResult. Results without a call are
//     dropped: both APIs refuse them.
//
// Reasoning parts are kept; each provider decides whether to send them.
// The input is not modified.
func Visible(msgs []superagents.Message) []superagents.Message {
	kept := make([]superagents.Message, 0, len(msgs))
	for _, m := range msgs {
		switch m.Kind {
		case superagents.KindFork, superagents.KindCommand, superagents.KindClear:
			continue
		case superagents.KindNotification:
			m = notificationText(m)
		}
		kept = append(kept, m)
	}
	out := make([]superagents.Message, 0, len(kept))
	for i, m := range kept {
		if m.Role == superagents.RoleTool {
			continue // placed after the calls they answer
		}
		parts := make([]superagents.Part, 0, len(m.Parts))
		var calls []superagents.Part
		for _, p := range m.Parts {
			switch {
			case p.Type == superagents.PartText && strings.TrimSpace(p.Text) == "":
			case p.Type == superagents.PartCompaction, p.Type == superagents.PartToolResult:
			case p.Type == superagents.PartToolCall && m.Role != superagents.RoleAssistant:
			default:
				parts = append(parts, p)
				if p.Type == superagents.PartToolCall {
					calls = append(calls, p)
				}
			}
		}
		if len(parts) == 0 {
			continue
		}
		m.Parts = parts
		out = append(out, m)
		if len(calls) > 0 {
			out = append(out, answers(calls, kept[i+1:]))
		}
	}
	return out
}

// answers returns the tool message that answers calls, from the tool
// messages in rest up to the next assistant message.
func answers(calls []superagents.Part, rest []superagents.Message) superagents.Message {
	results := make([]superagents.Part, 0, len(calls))
	for _, call := range calls {
		result := superagents.Part{Type: superagents.PartToolResult, CallID: call.CallID, Name: call.Name, Output: MissingResult, IsError: true}
	search:
		for _, m := range rest {
			if m.Role == superagents.RoleAssistant {
				break
			}
			if m.Role != superagents.RoleTool {
				continue
			}
			for _, p := range m.Parts {
				if p.Type == superagents.PartToolResult && p.CallID == call.CallID {
					result = p
					if result.Name == "" {
						result.Name = call.Name
					}
					break search
				}
			}
		}
		results = append(results, result)
	}
	return superagents.Message{Role: superagents.RoleTool, Kind: superagents.KindMessage, Parts: results}
}

// notificationText turns a notification into a plain user message that
// carries all its text, hidden parts included.
func notificationText(m superagents.Message) superagents.Message {
	parts := make([]superagents.Part, 0, len(m.Parts))
	for _, p := range m.Parts {
		if p.Type == superagents.PartText {
			parts = append(parts, superagents.TextPart(p.Text))
		}
	}
	m.Role, m.Kind, m.Parts = superagents.RoleUser, superagents.KindMessage, parts
	return m
}

// Text returns the text parts of a message joined by blank lines, hidden
// ones included.
func Text(m superagents.Message) string {
	var texts []string
	for _, p := range m.Parts {
		if p.Type == superagents.PartText {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n\n")
}
