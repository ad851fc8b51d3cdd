package superagents

import (
	"context"
	"encoding/json"
	"iter"
)

// Provider is a model API. Stream sends one request and yields the
// response as normalized events; the sequence ends after an EventStop, or
// early with an error. Cancelling ctx stops the stream at once.
type Provider interface {
	Stream(ctx context.Context, req ModelRequest) iter.Seq2[StreamEvent, error]
}

// ModelRequest is one call to a model: the conversation so far and the
// tools it may call.
type ModelRequest struct {
	// Model is the provider's own model name, without the "provider/" prefix.
	Model string
	// System is the system prompt.
	System string
	// Messages is the conversation, oldest first. Providers translate the
	// parts to their wire format; reasoning parts are sent back only where
	// the provider requires them.
	Messages []Message
	// Tools the model may call.
	Tools []ToolSpec
	// MaxTokens caps the response; 0 means the provider's default.
	MaxTokens int
}

// ToolSpec describes a tool to a model.
type ToolSpec struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// InputSchema is the JSON Schema of the tool's input object.
	InputSchema json.RawMessage `json:"input_schema"`
}

// EventType is the type of a StreamEvent.
type EventType string

// Stream event types.
const (
	// EventTextDelta carries the next piece of the answer in Text.
	EventTextDelta EventType = "text_delta"
	// EventReasoningDelta carries the next piece of the model's reasoning
	// in Text (and, at the end of a block, its Signature if any).
	EventReasoningDelta EventType = "reasoning_delta"
	// EventToolCall carries one complete tool call in ToolCall.
	EventToolCall EventType = "tool_call"
	// EventUsage carries token usage; providers may send it more than once,
	// each time with the totals so far.
	EventUsage EventType = "usage"
	// EventStop ends the response, with StopReason.
	EventStop EventType = "stop"
)

// StopReason says why the model stopped.
type StopReason string

// Stop reasons.
const (
	StopEndTurn   StopReason = "end_turn"
	StopToolUse   StopReason = "tool_use"
	StopMaxTokens StopReason = "max_tokens"
	StopOther     StopReason = "other"
)

// StreamEvent is one normalized event of a model's streamed response.
type StreamEvent struct {
	Type       EventType  `json:"type"`
	Text       string     `json:"text,omitempty"`
	Signature  string     `json:"signature,omitempty"`
	ToolCall   *Part      `json:"tool_call,omitempty"`
	Usage      Usage      `json:"usage,omitzero"`
	StopReason StopReason `json:"stop_reason,omitempty"`
}
