package superagents

// DefaultAgent is the agent profile of sessions that name none.
const DefaultAgent = "general"

// TurnEventType says what a TurnEvent reports.
type TurnEventType string

// Turn event types.
const (
	TurnEventTextDelta      TurnEventType = "text_delta"
	TurnEventReasoningDelta TurnEventType = "reasoning_delta"
	// TurnEventMessage: a message was stored (the input, an assistant
	// message, a tool result).
	TurnEventMessage   TurnEventType = "message"
	TurnEventToolStart TurnEventType = "tool_start"
	TurnEventToolEnd   TurnEventType = "tool_end"
	// TurnEventStep: a model request is about to be sent (Step counts from 1).
	TurnEventStep TurnEventType = "step"
)

// TurnEvent is one thing that happened during an agent's turn, as every
// way in shows it.
type TurnEvent struct {
	Type      TurnEventType
	SessionID string
	Step      int
	Text      string   // text and reasoning deltas
	Call      *Part    // tool_start, tool_end
	Result    *Part    // tool_end
	Message   *Message // message
}

// TurnOutcome sums up a finished (or stopped) turn.
type TurnOutcome struct {
	// Text is the final answer: the text of the last assistant message.
	Text      string
	Steps     int
	ToolCalls int
	Usage     Usage
	// StopReason is the model's reason for its last stop.
	StopReason StopReason
}

// UserMessage is a user's text as a message.
func UserMessage(text string) Message {
	return Message{Role: RoleUser, Parts: []Part{TextPart(text)}}
}
