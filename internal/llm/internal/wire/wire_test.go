package wire

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/superagents/superagents"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func text(role superagents.Role, s string) superagents.Message {
	return superagents.Message{Role: role, Parts: []superagents.Part{superagents.TextPart(s)}}
}

func calls(ids ...string) superagents.Message {
	m := superagents.Message{Role: superagents.RoleAssistant}
	for _, id := range ids {
		m.Parts = append(m.Parts, superagents.Part{Type: superagents.PartToolCall, CallID: id, Name: "t" + id, Input: json.RawMessage(`{}`)})
	}
	return m
}

func results(ids ...string) superagents.Message {
	m := superagents.Message{Role: superagents.RoleTool}
	for _, id := range ids {
		m.Parts = append(m.Parts, superagents.Part{Type: superagents.PartToolResult, CallID: id, Name: "t" + id, Output: "out " + id})
	}
	return m
}

func missing(id string) superagents.Part {
	return superagents.Part{Type: superagents.PartToolResult, CallID: id, Name: "t" + id, Output: MissingResult, IsError: true}
}

func TestVisible(t *testing.T) {
	u := superagents.RoleUser
	tests := []struct {
		name string
		in   []superagents.Message
		want []superagents.Message
	}{
		{
			name: "records for people are left out",
			in: []superagents.Message{
				text(u, "hi"),
				{Role: u, Kind: superagents.KindCommand, Parts: []superagents.Part{superagents.TextPart("/fork")}},
				{Role: superagents.RoleSystem, Kind: superagents.KindFork, Parts: []superagents.Part{superagents.TextPart("forked")}},
				{Role: superagents.RoleSystem, Kind: superagents.KindClear},
				text(superagents.RoleAssistant, "hello"),
			},
			want: []superagents.Message{text(u, "hi"), text(superagents.RoleAssistant, "hello")},
		},
		{
			name: "a notification is user text, hidden part included",
			in: []superagents.Message{{Role: u, Kind: superagents.KindNotification, Parts: []superagents.Part{
				superagents.TextPart("Task done."), {Type: superagents.PartText, Text: "hint", Hidden: true},
			}}},
			want: []superagents.Message{{Role: u, Kind: superagents.KindMessage, Parts: []superagents.Part{superagents.TextPart("Task done."), superagents.TextPart("hint")}}},
		},
		{
			name: "results follow their calls in call order",
			in:   []superagents.Message{text(u, "go"), calls("1", "2"), results("2"), results("1")},
			want: []superagents.Message{text(u, "go"), calls("1", "2"), {Role: superagents.RoleTool, Kind: superagents.KindMessage, Parts: results("1", "2").Parts}},
		},
		{
			name: "a notification between calls and results does not split them",
			in:   []superagents.Message{text(u, "go"), calls("1"), text(u, "note"), results("1")},
			want: []superagents.Message{text(u, "go"), calls("1"), {Role: superagents.RoleTool, Kind: superagents.KindMessage, Parts: results("1").Parts}, text(u, "note")},
		},
		{
			name: "an interrupted call gets a missing result",
			in:   []superagents.Message{text(u, "go"), calls("1", "2"), results("1"), text(u, "next")},
			want: []superagents.Message{text(u, "go"), calls("1", "2"), {Role: superagents.RoleTool, Kind: superagents.KindMessage, Parts: []superagents.Part{results("1").Parts[0], missing("2")}}, text(u, "next")},
		},
		{
			name: "calls at the very end are answered too",
			in:   []superagents.Message{text(u, "go"), calls("1")},
			want: []superagents.Message{text(u, "go"), calls("1"), {Role: superagents.RoleTool, Kind: superagents.KindMessage, Parts: []superagents.Part{missing("1")}}},
		},
		{
			name: "results after the next assistant message do not count; orphans are dropped",
			in:   []superagents.Message{calls("1"), text(superagents.RoleAssistant, "x"), results("1"), results("9")},
			want: []superagents.Message{calls("1"), {Role: superagents.RoleTool, Kind: superagents.KindMessage, Parts: []superagents.Part{missing("1")}}, text(superagents.RoleAssistant, "x")},
		},
		{
			name: "empty text, compaction markers and empty messages go",
			in: []superagents.Message{
				{Role: u, Parts: []superagents.Part{superagents.TextPart("  "), {Type: superagents.PartCompaction}}},
				{Role: u, Parts: []superagents.Part{{Type: superagents.PartCompaction}, superagents.TextPart("kept")}},
			},
			want: []superagents.Message{text(u, "kept")},
		},
		{
			name: "reasoning is kept for the providers to decide",
			in:   []superagents.Message{{Role: superagents.RoleAssistant, Parts: []superagents.Part{{Type: superagents.PartReasoning, Text: "hm", Signature: "s"}}}},
			want: []superagents.Message{{Role: superagents.RoleAssistant, Parts: []superagents.Part{{Type: superagents.PartReasoning, Text: "hm", Signature: "s"}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := make([]superagents.Message, len(tt.in))
			for i, m := range tt.in {
				in[i] = m.Clone()
			}
			got := Visible(in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.in, in); diff != "" {
				t.Errorf("the input was modified:\n%s", diff)
			}
		})
	}
}

func TestErrorfRedacts(t *testing.T) {
	c := Call{Provider: "p", Secrets: []string{"", "s3cret"}}
	inner := errors.New("boom")
	err := c.Errorf(inner, "got s3cret in %s", "s3cret body")
	if err.Error() != "p: got [redacted] in [redacted] body" || !errors.Is(err, inner) {
		t.Fatalf("error = %v", err)
	}
	if got := c.APIError(0, "", "").Error(); got != "p: the API returned an error without a message" {
		t.Errorf("empty API error = %q", got)
	}
	if got := c.APIError(529, "overloaded_error", " Overloaded "); got.Error() != "p: 529: overloaded_error: Overloaded" {
		t.Errorf("API error = %q", got)
	}
}

func TestWatchIdle(t *testing.T) {
	ctx, idle, release := WatchIdle(t.Context(), 20*time.Millisecond)
	defer release()
	idle.Touch() // starts the watch
	<-ctx.Done()
	idle.Touch() // harmless after the fact
	c := Call{Provider: "p", IdleTimeout: 20 * time.Millisecond}
	if err := c.Failed(t.Context(), ctx, context.Canceled, true); !errors.Is(err, ErrIdle) || !strings.Contains(err.Error(), "stream_idle_timeout") {
		t.Fatalf("error = %v", err)
	}

	ctx, _, release = WatchIdle(t.Context(), 0)
	release()
	if !errors.Is(context.Cause(ctx), context.Canceled) {
		t.Fatalf("released watchdog context: %v", context.Cause(ctx))
	}
}

func TestFailedClassifies(t *testing.T) {
	c := Call{Provider: "p"}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		ctx     context.Context
		err     error
		started bool
		is      error
		want    string
	}{
		{cancelled, errors.New("x"), false, context.Canceled, "p: context canceled"},
		{t.Context(), io.ErrUnexpectedEOF, true, ErrCut, "after it had begun (not retried)"},
		{t.Context(), io.ErrUnexpectedEOF, false, ErrCut, "closed before the response"},
		{t.Context(), errors.New("other"), false, nil, "p: other"},
	}
	for _, tt := range tests {
		err := c.Failed(tt.ctx, nil, tt.err, tt.started)
		if tt.is != nil && !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Failed(%v) = %v, want %v with %q", tt.err, err, tt.is, tt.want)
		}
	}
}

func TestRetry(t *testing.T) {
	cut := Call{Provider: "p"}.Incomplete()
	tests := []struct {
		name     string
		started  bool
		err      error
		attempts int
	}{
		{"a cut before output is retried", false, cut, 2},
		{"a cut after output is not", true, cut, 1},
		{"other errors are not", false, errors.New("400"), 1},
		{"success", false, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := 0
			err := Retry(t.Context(), 1, func() (bool, error) { n++; return tt.started, tt.err })
			if n != tt.attempts || !errors.Is(err, tt.err) {
				t.Errorf("%d attempts, error %v", n, err)
			}
		})
	}
}
