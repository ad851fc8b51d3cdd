// Package superagents holds the domain model shared by every part of the
// system: sessions, messages and their parts, background tasks, the errors
// callers can test for, and the interfaces the concrete packages implement
// (Store in sqlite/, Provider in llm/...).
//
// A conversation is stored as deltas. A fork is one session row that points
// at its parent and at the parent's last message at that moment; the
// effective history of a session is rebuilt by BuildHistory, which walks the
// ancestor chain back to a clear and replays forward.
package superagents

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Role is who authored a message.
type Role string

// Roles. Tool results live in their own RoleTool message, right after the
// assistant message that asked for them.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleSystem    Role = "system"
	RoleTool      Role = "tool"
)

// Valid reports whether r is one of the known roles.
func (r Role) Valid() bool {
	switch r {
	case RoleUser, RoleAssistant, RoleSystem, RoleTool:
		return true
	}
	return false
}

// Kind says what a message is for beyond an ordinary turn.
type Kind string

// Message kinds.
const (
	// KindMessage is an ordinary conversational turn.
	KindMessage Kind = "message"
	// KindClear is a context boundary: history replay stops here.
	KindClear Kind = "clear"
	// KindFork records, in the child, that it was forked (audit only).
	KindFork Kind = "fork"
	// KindNotification reports a background task's end to its parent.
	KindNotification Kind = "notification"
	// KindCommand records a slash command or similar user action.
	KindCommand Kind = "command"
)

// Valid reports whether k is one of the known kinds.
func (k Kind) Valid() bool {
	switch k {
	case KindMessage, KindClear, KindFork, KindNotification, KindCommand:
		return true
	}
	return false
}

// PartType is the type of one piece of a message.
type PartType string

// Part types.
const (
	PartText       PartType = "text"
	PartReasoning  PartType = "reasoning"
	PartToolCall   PartType = "tool_call"
	PartToolResult PartType = "tool_result"
	// PartCompaction marks, in a user message, that the conversation before
	// it was compacted; the summary follows in an assistant message whose
	// Summary flag is set.
	PartCompaction PartType = "compaction"
)

// Part is one piece of a message. Which fields are meaningful depends on
// Type; Validate checks the combination.
type Part struct {
	Type PartType `json:"type"`

	// Text is the content of a text or reasoning part (and an optional note
	// on a compaction part).
	Text string `json:"text,omitempty"`
	// Hidden marks text meant for the model only: it is sent to providers
	// but not shown to people (a notification's hint, for example).
	Hidden bool `json:"hidden,omitempty"`
	// Signature is the provider's opaque signature of a reasoning part,
	// which some providers require to be sent back unchanged.
	Signature string `json:"signature,omitempty"`

	// CallID links a tool_call to its tool_result.
	CallID string `json:"call_id,omitempty"`
	// Name is the tool's name, on both the call and the result.
	Name string `json:"name,omitempty"`
	// Input is the tool call's arguments, a JSON object.
	Input json.RawMessage `json:"input,omitempty"`
	// Output is the tool result's content.
	Output string `json:"output,omitempty"`
	// IsError marks a tool result that reports a failure.
	IsError bool `json:"is_error,omitempty"`
	// Compacted marks a tool result whose content was cleared to save room.
	Compacted bool `json:"compacted,omitempty"`
}

// TextPart returns a text part.
func TextPart(text string) Part { return Part{Type: PartText, Text: text} }

// Validate reports whether the part's fields fit its type.
func (p Part) Validate() error {
	switch p.Type {
	case PartText, PartReasoning:
		if p.CallID != "" || p.Name != "" || len(p.Input) > 0 || p.Output != "" {
			return fmt.Errorf("%w: a %s part carries only text", ErrInvalid, p.Type)
		}
	case PartCompaction:
		if p.CallID != "" || len(p.Input) > 0 || p.Output != "" {
			return fmt.Errorf("%w: a compaction part carries only an optional note", ErrInvalid)
		}
	case PartToolCall:
		if p.CallID == "" || p.Name == "" {
			return fmt.Errorf("%w: a tool_call part needs call_id and name", ErrInvalid)
		}
		if len(p.Input) > 0 && !json.Valid(p.Input) {
			return fmt.Errorf("%w: tool_call %q input is not valid JSON", ErrInvalid, p.CallID)
		}
	case PartToolResult:
		if p.CallID == "" {
			return fmt.Errorf("%w: a tool_result part needs call_id", ErrInvalid)
		}
	default:
		return fmt.Errorf("%w: unknown part type %q", ErrInvalid, p.Type)
	}
	return nil
}

// Usage is the token accounting a provider reported for one response.
type Usage struct {
	InputTokens      int64 `json:"input_tokens,omitempty"`
	OutputTokens     int64 `json:"output_tokens,omitempty"`
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
}

// IsZero reports whether no tokens were counted.
func (u Usage) IsZero() bool { return u == Usage{} }

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + v.InputTokens,
		OutputTokens:     u.OutputTokens + v.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + v.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
	}
}

// Message is one entry of a session. IDs are assigned by the store, are
// unique across the whole store and strictly increasing: they order
// everything (timestamps never do).
type Message struct {
	ID        int64     `json:"id,omitempty"`
	SessionID string    `json:"session_id,omitempty"`
	Role      Role      `json:"role"`
	Kind      Kind      `json:"kind,omitempty"`
	Parts     []Part    `json:"parts"`
	Summary   bool      `json:"summary,omitempty"`
	Model     string    `json:"model,omitempty"`
	Usage     Usage     `json:"usage,omitzero"`
	CreatedAt time.Time `json:"created_at,omitzero"`
}

// Validate reports whether a message is fit to be stored. An empty Kind is
// accepted and means KindMessage.
func (m Message) Validate() error {
	if !m.Role.Valid() {
		return fmt.Errorf("%w: unknown role %q (want user, assistant, system or tool)", ErrInvalid, m.Role)
	}
	if m.Kind != "" && !m.Kind.Valid() {
		return fmt.Errorf("%w: unknown kind %q", ErrInvalid, m.Kind)
	}
	if m.Kind != KindClear && len(m.Parts) == 0 {
		return fmt.Errorf("%w: a message needs at least one part", ErrInvalid)
	}
	for i, p := range m.Parts {
		if err := p.Validate(); err != nil {
			return fmt.Errorf("part %d: %w", i+1, err)
		}
	}
	return nil
}

// Text returns the message's visible text parts joined by blank lines.
func (m Message) Text() string { return m.texts(false) }

// HiddenText returns the message's hidden text parts (what its model
// reads and a person is not shown: a notification's hint) joined by
// blank lines.
func (m Message) HiddenText() string { return m.texts(true) }

// texts joins the text parts that are hidden or not by blank lines.
func (m Message) texts(hidden bool) string {
	var out []byte
	for _, p := range m.Parts {
		if p.Type != PartText || p.Hidden != hidden || p.Text == "" {
			continue
		}
		if len(out) > 0 {
			out = append(out, "\n\n"...)
		}
		out = append(out, p.Text...)
	}
	return string(out)
}

// Clone returns a deep copy, so that callers may change it freely.
func (m Message) Clone() Message {
	m.Parts = slices.Clone(m.Parts)
	for i := range m.Parts {
		m.Parts[i].Input = slices.Clone(m.Parts[i].Input)
	}
	return m
}

// Session is one conversation. A forked session has a ParentID and
// inherits the parent's effective history up to ForkMessageID.
type Session struct {
	ID string `json:"id"`
	// ParentID is the session this one was forked from; empty for a root.
	ParentID string `json:"parent_id,omitempty"`
	// ForkMessageID is the parent's last own message when the fork was
	// made. Only the parent's messages with IDs up to it are inherited; 0
	// means the parent had no messages of its own yet, so nothing of the
	// parent's own is inherited (what the parent inherited itself still is).
	// It is meaningful only when ParentID is set.
	ForkMessageID int64  `json:"fork_message_id,omitempty"`
	Agent         string `json:"agent,omitempty"`
	Model         string `json:"model,omitempty"`
	Title         string `json:"title,omitempty"`
	// Origin says how the session came to be (see Origin).
	Origin    Origin    `json:"origin,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	// DeletedAt is set on a deleted session whose rows are still needed by
	// the sessions forked from it. Such a session is hidden everywhere.
	DeletedAt *time.Time `json:"deleted_at,omitempty"`
}

// Deleted reports whether the session was deleted.
func (s Session) Deleted() bool { return s.DeletedAt != nil }

// SessionSummary is a session as listed, with the number of messages it
// stores itself (inherited messages are not counted) and the id of the
// newest of them, which tells which session was active last.
type SessionSummary struct {
	Session
	MessageCount int `json:"message_count"`
	// LastMessageID is the id of the session's newest own message, 0 when
	// it has none.
	LastMessageID int64 `json:"last_message_id,omitempty"`
}

// NewSession describes a session to create, with the messages it starts
// with (written in the same transaction).
type NewSession struct {
	Agent    string
	Model    string
	Title    string
	Origin   Origin
	Messages []Message
}

// Origin says how a session came to be: which way in created it, or that
// a task, a fork or an import did. Empty for sessions older than the field.
type Origin string

// Origins.
const (
	OriginChat   Origin = "chat"
	OriginHTTP   Origin = "http"
	OriginCLI    Origin = "cli"
	OriginMCP    Origin = "mcp"
	OriginTask   Origin = "task"
	OriginFork   Origin = "fork"
	OriginImport Origin = "import"
)

// MCPClientAgent is the agent recorded on the session of an MCP client:
// the session records the client's tasks and their notices, and runs no
// turn of its own.
const MCPClientAgent = "mcp"

// ForkOptions describes the child of a fork.
type ForkOptions struct {
	Agent string // defaults to the parent's agent
	Model string // defaults to the parent's model
	Title string
	// Origin defaults to OriginFork.
	Origin Origin
	// Messages are stored in the child in the fork's own transaction (the
	// record of where it came from, see ForkRecord): a crash leaves the
	// child with them or no child at all.
	Messages []Message
}
