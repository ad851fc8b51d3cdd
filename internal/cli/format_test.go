package cli

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/superagents/superagents/internal/golden"

	sa "github.com/superagents/superagents"
)

func TestTranscriptGolden(t *testing.T) {
	msgs := []sa.Message{
		{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("What is in main.go?")}},
		{Role: sa.RoleAssistant, Parts: []sa.Part{
			{Type: sa.PartReasoning, Text: "I should read the file."},
			sa.TextPart("Let me look."),
			{Type: sa.PartToolCall, CallID: "c1", Name: "read", Input: json.RawMessage(`{"path":"main.go"}`)},
			{Type: sa.PartToolCall, CallID: "c2", Name: "bash", Input: json.RawMessage(`{"command":"go vet"}`)},
		}},
		{Role: sa.RoleTool, Parts: []sa.Part{
			{Type: sa.PartToolResult, CallID: "c1", Name: "read", Output: "package main"},
			{Type: sa.PartToolResult, CallID: "c2", Name: "bash", Output: "exit status 1", IsError: true},
		}},
		{Role: sa.RoleAssistant, Parts: []sa.Part{sa.TextPart("It declares package main.")}},
		{Role: sa.RoleUser, Kind: sa.KindNotification, Parts: []sa.Part{
			sa.TextPart(`✓ Agent "scan" finished in 12s.`), {Type: sa.PartText, Text: "hidden hint", Hidden: true}}},
		{Role: sa.RoleUser, Parts: []sa.Part{{Type: sa.PartCompaction}}},
		{Role: sa.RoleAssistant, Summary: true, Parts: []sa.Part{sa.TextPart("Summary so far.")}},
		{Role: sa.RoleSystem, Parts: []sa.Part{sa.TextPart("Be brief.")}},
	}
	var buf bytes.Buffer
	if err := writeTranscript(&buf, msgs); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "transcript.golden", buf.Bytes())
}

func TestSessionTableGolden(t *testing.T) {
	at := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	list := []sa.SessionSummary{
		{Session: sa.Session{ID: "xyz789aaaaaaaaaa", ParentID: "abc123bbbbbbbbbb", ForkMessageID: 4, Agent: "general",
			Title: "What is 2+2?", CreatedAt: at.Add(time.Minute)}, MessageCount: 2},
		{Session: sa.Session{ID: "abc123bbbbbbbbbb", Agent: "explore",
			Title: "A very long title that goes on and on well past the width a table column should have", CreatedAt: at}, MessageCount: 4},
		{Session: sa.Session{ID: "empty0cccccccccc", CreatedAt: at}},
	}
	var buf bytes.Buffer
	if err := writeSessionTable(&buf, list, nil, time.UTC); err != nil {
		t.Fatal(err)
	}
	buf.WriteString("---\n")
	if err := writeSessionTable(&buf, nil, nil, time.UTC); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "sessions.golden", buf.Bytes())
}
