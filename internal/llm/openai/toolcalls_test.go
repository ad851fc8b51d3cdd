package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/superagents/superagents"
)

type delta struct {
	index          int64
	id, name, args string
}

func TestToolCallAccumulator(t *testing.T) {
	call := func(id, name, input string) superagents.Part {
		return superagents.Part{Type: superagents.PartToolCall, CallID: id, Name: name, Input: json.RawMessage(input)}
	}
	tests := []struct {
		name   string
		deltas []delta
		want   []superagents.Part
		err    string
	}{
		{
			name: "one call in pieces",
			deltas: []delta{
				{0, "call_1", "read", ""}, {0, "", "", `{"pa`}, {0, "", "", `th":"a"}`},
			},
			want: []superagents.Part{call("call_1", "read", `{"path":"a"}`)},
		},
		{
			name: "parallel calls with their own indexes (OpenAI)",
			deltas: []delta{
				{0, "call_1", "read", `{"path":`}, {0, "", "", `"a"}`},
				{1, "call_2", "read", `{"path":`}, {1, "", "", `"b"}`},
			},
			want: []superagents.Part{call("call_1", "read", `{"path":"a"}`), call("call_2", "read", `{"path":"b"}`)},
		},
		{
			name: "parallel calls that all say index 0 (Ollama)",
			deltas: []delta{
				{0, "call_1", "read", `{"path":"a"}`},
				{0, "call_2", "read", `{"path":"b"}`},
				{0, "call_3", "bash", `{"command":`}, {0, "", "", `"ls"}`},
			},
			want: []superagents.Part{call("call_1", "read", `{"path":"a"}`), call("call_2", "read", `{"path":"b"}`), call("call_3", "bash", `{"command":"ls"}`)},
		},
		{
			name: "interleaved indexes",
			deltas: []delta{
				{0, "call_1", "read", ``}, {1, "call_2", "list", ``},
				{0, "", "", `{"path":"a"}`}, {1, "", "", `{}`},
			},
			want: []superagents.Part{call("call_1", "read", `{"path":"a"}`), call("call_2", "list", `{}`)},
		},
		{
			name:   "a repeated id continues its call",
			deltas: []delta{{0, "call_1", "read", `{"path":`}, {0, "call_1", "", `"a"}`}},
			want:   []superagents.Part{call("call_1", "read", `{"path":"a"}`)},
		},
		{
			name:   "no arguments",
			deltas: []delta{{0, "call_1", "list", ""}},
			want:   []superagents.Part{call("call_1", "list", `{}`)},
		},
		{
			name:   "invalid arguments",
			deltas: []delta{{0, "call_1", "read", `{"path":`}},
			err:    `invalid JSON arguments for tool "read" (call call_1)`,
		},
		{
			name:   "no name",
			deltas: []delta{{0, "call_1", "", `{}`}},
			err:    "without a tool name",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var acc toolCalls
			for _, d := range tt.deltas {
				acc.add(d.index, d.id, d.name, d.args)
			}
			got, err := acc.parts()
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestToolCallWithoutIDGetsOne(t *testing.T) {
	var acc toolCalls
	acc.add(0, "", "read", `{}`)
	acc.add(1, "", "list", `{}`)
	got, err := acc.parts()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].CallID == "" || got[0].CallID == got[1].CallID {
		t.Fatalf("ids %q, %q", got[0].CallID, got[1].CallID)
	}
}

// BenchmarkToolCallAccumulator feeds the deltas of three parallel calls
// that share index 0, each argument string cut into 8-byte pieces.
func BenchmarkToolCallAccumulator(b *testing.B) {
	var deltas []delta
	for i, id := range []string{"call_1", "call_2", "call_3"} {
		args := `{"path":"internal/some/longer/path/file` + string(rune('a'+i)) + `.go","offset":120,"limit":400}`
		deltas = append(deltas, delta{0, id, "read", ""})
		for len(args) > 0 {
			n := min(8, len(args))
			deltas = append(deltas, delta{0, "", "", args[:n]})
			args = args[n:]
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		var acc toolCalls
		for _, d := range deltas {
			acc.add(d.index, d.id, d.name, d.args)
		}
		if calls, err := acc.parts(); err != nil || len(calls) != 3 {
			b.Fatal(err, len(calls))
		}
	}
	b.ReportMetric(float64(len(deltas)*b.N)/b.Elapsed().Seconds(), "deltas/s")
}
