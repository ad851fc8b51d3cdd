package superagents_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
)

func TestMessageValidate(t *testing.T) {
	tests := []struct {
		name    string
		msg     sa.Message
		wantErr string
	}{
		{"user text", sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("hi")}}, ""},
		{"clear needs no parts", sa.ClearMessage(), ""},
		{"unknown role", sa.Message{Role: "robot", Parts: []sa.Part{sa.TextPart("hi")}}, `unknown role "robot"`},
		{"unknown kind", sa.Message{Role: sa.RoleUser, Kind: "gossip", Parts: []sa.Part{sa.TextPart("hi")}}, `unknown kind "gossip"`},
		{"no parts", sa.Message{Role: sa.RoleUser}, "at least one part"},
		{"unknown part", sa.Message{Role: sa.RoleUser, Parts: []sa.Part{{Type: "video"}}}, `unknown part type "video"`},
		{"tool call without id", sa.Message{Role: sa.RoleAssistant, Parts: []sa.Part{{Type: sa.PartToolCall, Name: "read"}}}, "needs call_id and name"},
		{"tool call bad json", sa.Message{Role: sa.RoleAssistant, Parts: []sa.Part{{Type: sa.PartToolCall, CallID: "c1", Name: "read", Input: json.RawMessage("{")}}}, "not valid JSON"},
		{"tool result without id", sa.Message{Role: sa.RoleTool, Parts: []sa.Part{{Type: sa.PartToolResult, Output: "x"}}}, "needs call_id"},
		{"text part with output", sa.Message{Role: sa.RoleUser, Parts: []sa.Part{{Type: sa.PartText, Output: "x"}}}, "carries only text"},
		{"compaction with note", sa.Message{Role: sa.RoleUser, Parts: []sa.Part{{Type: sa.PartCompaction, Text: "compacted"}}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.msg.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, sa.ErrInvalid) {
				t.Fatalf("Validate() = %v, want ErrInvalid containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestTaskStatusTransitions(t *testing.T) {
	allowed := map[[2]sa.TaskStatus]bool{
		{sa.TaskQueued, sa.TaskRunning}:    true,
		{sa.TaskQueued, sa.TaskError}:      true,
		{sa.TaskQueued, sa.TaskCancelled}:  true,
		{sa.TaskRunning, sa.TaskCompleted}: true,
		{sa.TaskRunning, sa.TaskError}:     true,
		{sa.TaskRunning, sa.TaskCancelled}: true,
		{sa.TaskResumed, sa.TaskCompleted}: true,
		{sa.TaskResumed, sa.TaskError}:     true,
		{sa.TaskResumed, sa.TaskCancelled}: true,
		{sa.TaskCompleted, sa.TaskResumed}: true,
	}
	for _, from := range sa.TaskStatuses {
		for _, to := range sa.TaskStatuses {
			want := from == to || allowed[[2]sa.TaskStatus{from, to}]
			if got := from.CanBecome(to); got != want {
				t.Errorf("%s → %s: CanBecome = %v, want %v", from, to, got, want)
			}
		}
	}
	// TASK-PERSIST-3: terminal states never regress.
	for _, to := range []sa.TaskStatus{sa.TaskRunning, sa.TaskCompleted, sa.TaskQueued, sa.TaskResumed} {
		if sa.TaskCancelled.CanBecome(to) || sa.TaskError.CanBecome(to) {
			t.Errorf("a cancelled or failed task may become %s", to)
		}
	}
}

func TestIDs(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := sa.NewID()
		if len(id) != 16 {
			t.Fatalf("NewID() = %q, want 16 characters", id)
		}
		if _, err := sa.CheckIDPrefix(id); err != nil {
			t.Fatalf("a new id is not a valid reference: %v", err)
		}
		if seen[id] {
			t.Fatalf("NewID repeated %q", id)
		}
		seen[id] = true
	}
	if got := sa.ShortID("abc123def456ghij"); got != "abc123..." {
		t.Fatalf("ShortID = %q, want abc123...", got)
	}
	refs := []struct {
		ref, want, wantErr string
	}{
		{"abcd", "abcd", ""},
		{"abc123...", "abc123", ""},
		{"abc", "", "too short"},
		{"ab%d", "", "only lowercase letters and digits"},
		{"ABCD", "", "only lowercase letters and digits"},
		{"", "", "empty id"},
		{"abcdabcdabcdabcda", "", "longer than any id"},
	}
	for _, r := range refs {
		got, err := sa.CheckIDPrefix(r.ref)
		if r.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), r.wantErr) {
				t.Errorf("CheckIDPrefix(%q) = %q, %v; want error %q", r.ref, got, err, r.wantErr)
			}
			continue
		}
		if err != nil || got != r.want {
			t.Errorf("CheckIDPrefix(%q) = %q, %v; want %q", r.ref, got, err, r.want)
		}
	}
}

// TestMessageTexts: Text joins the visible text parts, HiddenText the
// hidden ones (a notification's hint), each by blank lines, empty parts
// left out.
func TestMessageTexts(t *testing.T) {
	msg := sa.Message{Parts: []sa.Part{
		sa.TextPart("seen"),
		{Type: sa.PartText, Hidden: true, Text: "for the model"},
		{Type: sa.PartText, Hidden: true},
		sa.TextPart("also seen"),
		{Type: sa.PartText, Hidden: true, Text: "and more"},
	}}
	if got := msg.Text(); got != "seen\n\nalso seen" {
		t.Errorf("Text = %q", got)
	}
	if got := msg.HiddenText(); got != "for the model\n\nand more" {
		t.Errorf("HiddenText = %q", got)
	}
}
