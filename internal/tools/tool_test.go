package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/superagents/superagents"
)

type echoInput struct {
	Text  string `json:"text" jsonschema:"What to echo."`
	Times int    `json:"times,omitempty"`
}

func echoTool(t *testing.T, name string, readOnly bool) Tool {
	t.Helper()
	tool, err := New(name, "Echoes text.", readOnly, func(ctx context.Context, in echoInput) (Result, error) {
		switch in.Text {
		case "panic":
			panic("boom")
		case "fail":
			return Result{}, errors.New("disk on fire")
		case "block":
			<-ctx.Done()
			return Result{}, ctx.Err()
		}
		return Result{Output: strings.Repeat(in.Text, max(in.Times, 1))}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func TestNewValidates(t *testing.T) {
	run := func(context.Context, echoInput) (Result, error) { return Result{}, nil }
	for _, tc := range []struct{ name, description, want string }{
		{"", "d", "tool name"},
		{"has space", "d", "tool name"},
		{strings.Repeat("x", 65), "d", "tool name"},
		{"ok", "", "empty description"},
	} {
		if _, err := New(tc.name, tc.description, true, run); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%q, %q) = %v, want %q", tc.name, tc.description, err, tc.want)
		}
	}
	if _, err := New("bad", "d", true, func(context.Context, struct{ F func() }) (Result, error) { return Result{}, nil }); err == nil {
		t.Error("an input type without a JSON schema was accepted")
	}
}

func TestCallContract(t *testing.T) {
	set, err := NewSet(echoTool(t, "echo", true))
	must(t, err)
	tests := []struct {
		name    string
		tool    string
		input   string
		want    Result
		wantErr bool
	}{
		{"success", "echo", `{"text":"ab","times":2}`, Result{Output: "abab"}, false},
		{"empty input is {}", "echo", ``, Result{Output: `invalid input for echo: required: missing properties: ["text"]`, IsError: true}, false},
		{"not JSON", "echo", `{"text":`, Result{Output: "invalid input for echo: not valid JSON: unexpected end of JSON input", IsError: true}, false},
		{"not an object", "echo", `"text"`, Result{Output: "invalid input for echo: the input must be a JSON object", IsError: true}, false},
		{"unknown field", "echo", `{"text":"a","colour":1}`, Result{Output: `invalid input for echo: unexpected additional properties ["colour"]`, IsError: true}, false},
		{"a tool's own error", "echo", `{"text":"fail"}`, Result{Output: "echo failed: disk on fire", IsError: true}, false},
		{"a panic", "echo", `{"text":"panic"}`, Result{Output: "internal error in tool echo: boom", IsError: true}, false},
		{"unknown tool", "nope", `{}`, Result{Output: `unknown tool "nope"; the available tools are: echo`, IsError: true}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := set.Call(context.Background(), tc.tool, json.RawMessage(tc.input))
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCallHonoursCancellation(t *testing.T) {
	set, err := NewSet(echoTool(t, "echo", true))
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := set.Call(ctx, "echo", json.RawMessage(`{"text":"x"}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("already cancelled: error = %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := set.Call(ctx, "echo", json.RawMessage(`{"text":"block"}`))
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled while running: error = %v", err)
	}
}

func TestSet(t *testing.T) {
	set, err := NewSet(echoTool(t, "read_x", true), echoTool(t, "write_x", false), echoTool(t, "superagents_task", true), echoTool(t, "superagents_output", true))
	must(t, err)
	if _, err := NewSet(echoTool(t, "a", true), echoTool(t, "a", true)); err == nil {
		t.Error("duplicate names accepted")
	}
	if _, err := NewSet(nil); err == nil {
		t.Error("nil tool accepted")
	}
	sel, err := set.Select([]string{"superagents_*", "write_x", "missing"})
	must(t, err)
	if diff := cmp.Diff([]string{"write_x", "superagents_task", "superagents_output"}, sel.Names()); diff != "" {
		t.Errorf("Select keeps the set's order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"missing", "nope_*"}, set.Unmatched([]string{"read_x", "missing", "super*", "nope_*"})); diff != "" {
		t.Errorf("Unmatched (-want +got):\n%s", diff)
	}
	if _, err := set.Select([]string{"[bad"}); err == nil {
		t.Error("malformed pattern accepted")
	}
	if diff := cmp.Diff([]string{"read_x", "superagents_task", "superagents_output"}, set.ReadOnly().Names()); diff != "" {
		t.Errorf("ReadOnly (-want +got):\n%s", diff)
	}
	if got := set.Specs(); len(got) != 4 || got[0].Name != "read_x" || !json.Valid(got[0].InputSchema) {
		t.Errorf("Specs = %+v", got)
	}
	if tool, ok := set.Get("write_x"); !ok || tool.ReadOnly() {
		t.Error("Get(write_x) failed")
	}
	want := superagents.Part{Type: superagents.PartToolResult, CallID: "c1", Name: "echo", Output: "x", IsError: true}
	if got := (Result{Output: "x", IsError: true}).Part("c1", "echo"); !cmp.Equal(got, want) {
		t.Errorf("Part = %+v", got)
	}
}

// cancelAfter is a context whose Err turns to context.Canceled after it
// was asked n times: it cancels a tool in the middle of its work without
// any timing.
type cancelAfter struct {
	context.Context
	n int
}

func (c *cancelAfter) Err() error {
	if c.n <= 0 {
		return context.Canceled
	}
	c.n--
	return nil
}

func TestLongToolsStopOnCancel(t *testing.T) {
	files := map[string]string{"big.txt": strings.Repeat("line\n", 100_000)}
	for i := range 200 {
		files["d/f"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+".txt"] = "x\n"
	}
	_, set := newTestWorkspace(t, files, Options{})
	for _, tc := range []struct{ tool, input string }{
		{Grep, `{"pattern":"x"}`},
		{Glob, `{"pattern":"**/*.txt"}`},
		{Read, `{"path":"big.txt","limit":5}`},
	} {
		ctx := &cancelAfter{Context: context.Background(), n: 3}
		_, err := set.Call(ctx, tc.tool, json.RawMessage(tc.input))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: error = %v, want context.Canceled", tc.tool, err)
		}
	}
}
