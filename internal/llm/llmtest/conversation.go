package llmtest

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/superagents/superagents"
)

// Conversation is a request that exercises every rule of translating a
// conversation into a wire format: a system prompt and a system message (a
// fork digest), records for people (a command, a fork), a notification
// with a hidden part, reasoning signed, redacted and unsigned, parallel
// tool calls whose results come in another order, one that failed, one
// empty, one missing (an interrupted turn) and one without a call, and
// tools with and without a schema.
func Conversation(model string) superagents.ModelRequest {
	user := func(s string) superagents.Message {
		return superagents.Message{Role: superagents.RoleUser, Parts: []superagents.Part{superagents.TextPart(s)}}
	}
	call := func(id, name, input string) superagents.Part {
		return superagents.Part{Type: superagents.PartToolCall, CallID: id, Name: name, Input: json.RawMessage(input)}
	}
	result := func(id, name, out string, isErr bool) superagents.Part {
		return superagents.Part{Type: superagents.PartToolResult, CallID: id, Name: name, Output: out, IsError: isErr}
	}
	return superagents.ModelRequest{
		Model:     model,
		System:    "You are a helpful agent.",
		MaxTokens: 1000,
		Messages: []superagents.Message{
			{Role: superagents.RoleSystem, Parts: []superagents.Part{superagents.TextPart("Context from the parent:\nUser: What is 2+2?")}},
			user("What is 2+2?"),
			{Role: superagents.RoleAssistant, Parts: []superagents.Part{
				{Type: superagents.PartReasoning, Text: "old thinking", Signature: "old-sig"},
				superagents.TextPart("2+2 equals 4."),
			}},
			{Role: superagents.RoleUser, Kind: superagents.KindCommand, Parts: []superagents.Part{superagents.TextPart("/fork")}},
			{Role: superagents.RoleSystem, Kind: superagents.KindFork, Parts: []superagents.Part{superagents.TextPart("forked from abc123")}},
			{Role: superagents.RoleUser, Kind: superagents.KindNotification, Parts: []superagents.Part{
				superagents.TextPart("Task abc123 completed."),
				{Type: superagents.PartText, Text: "Use superagents_output to read its result.", Hidden: true},
			}},
			user("Read a.txt and b.txt"),
			{Role: superagents.RoleAssistant, Parts: []superagents.Part{
				{Type: superagents.PartReasoning, Text: "Two reads.", Signature: "sig-1"},
				{Type: superagents.PartReasoning, Signature: "redacted-data"},
				{Type: superagents.PartReasoning, Text: "unsigned thoughts"},
				superagents.TextPart("Reading."),
				call("call_a", "read", `{"path":"a.txt"}`),
				call("call_b", "read", `{"path":"b.txt"}`),
				call("call_c", "bash", ``),
				call("call_d", "list", `{}`),
			}},
			{Role: superagents.RoleTool, Parts: []superagents.Part{result("call_b", "read", "bbb", false), result("call_d", "list", "", false)}},
			{Role: superagents.RoleTool, Parts: []superagents.Part{result("call_a", "read", "no such file", true), result("call_zz", "read", "orphan", false)}},
		},
		Tools: []superagents.ToolSpec{
			{Name: "read", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
			{Name: "list"},
		},
	}
}

// IndentedBody returns a request's JSON body indented, for a golden file.
func IndentedBody(t testing.TB, r Request) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, r.Body, "", "  "); err != nil {
		t.Fatal(err)
	}
	b.WriteByte('\n')
	return b.Bytes()
}
