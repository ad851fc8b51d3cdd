package agent

import (
	"encoding/json"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
)

func call(id, name string) sa.Part {
	return sa.Part{Type: sa.PartToolCall, CallID: id, Name: name, Input: json.RawMessage(`{}`)}
}

func result(id, name, out string) sa.Message {
	return sa.Message{Role: sa.RoleTool, Parts: []sa.Part{{Type: sa.PartToolResult, CallID: id, Name: name, Output: out}}}
}

func text(role sa.Role, s string) sa.Message {
	return sa.Message{Role: role, Parts: []sa.Part{sa.TextPart(s)}}
}

// shape renders messages compactly: role and, for tools, call ids.
func shape(msgs []sa.Message) string {
	var out []string
	for _, m := range msgs {
		s := string(m.Role)
		for _, p := range m.Parts {
			switch p.Type {
			case sa.PartText:
				s += ":" + p.Text
			case sa.PartToolCall:
				s += ":call(" + p.CallID + ")"
			case sa.PartToolResult:
				s += ":result(" + p.CallID + "=" + p.Output[:min(len(p.Output), 11)] + ")"
			}
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func TestModelMessages(t *testing.T) {
	notification := sa.Message{Role: sa.RoleUser, Kind: sa.KindNotification, Parts: []sa.Part{sa.TextPart("task done")}}
	tests := []struct {
		name    string
		history []sa.Message
		want    string
	}{
		{
			name:    "plain conversation passes through",
			history: []sa.Message{text(sa.RoleUser, "q"), text(sa.RoleAssistant, "a")},
			want:    "user:q assistant:a",
		},
		{
			name: "results follow their calls, whatever was stored between",
			history: []sa.Message{
				text(sa.RoleUser, "q"),
				{Role: sa.RoleAssistant, Parts: []sa.Part{call("c1", "read"), call("c2", "grep")}},
				result("c2", "grep", "found"),
				notification,
				result("c1", "read", "content"),
				text(sa.RoleAssistant, "done"),
			},
			want: "user:q assistant:call(c1):call(c2) tool:result(c1=content):result(c2=found) user:task done assistant:done",
		},
		{
			name: "a call without a result is answered as interrupted",
			history: []sa.Message{
				text(sa.RoleUser, "q"),
				{Role: sa.RoleAssistant, Parts: []sa.Part{call("c1", "bash")}},
				text(sa.RoleUser, "are you there?"),
			},
			want: "user:q assistant:call(c1) tool:result(c1=interrupted) user:are you there?",
		},
		{
			name: "audit records are dropped",
			history: []sa.Message{
				{Role: sa.RoleUser, Kind: sa.KindCommand, Parts: []sa.Part{sa.TextPart("/fork")}},
				{Role: sa.RoleSystem, Kind: sa.KindFork, Parts: []sa.Part{sa.TextPart("forked")}},
				text(sa.RoleUser, "q"),
			},
			want: "user:q",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := shape(ModelMessages(tt.history)); got != tt.want {
				t.Fatalf("ModelMessages =\n  %s\nwant\n  %s", got, tt.want)
			}
		})
	}
}
