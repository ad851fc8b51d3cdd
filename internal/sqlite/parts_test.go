package sqlite

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	sa "github.com/superagents/superagents"
)

// partsCases are parts' JSON as encoding/json writes them, and other
// shapes the fast path must hand to json.Unmarshal.
var partsCases = []string{
	`[]`,
	`[{"type":"text","text":"hello"}]`,
	`[{"type":"text","text":"Let me read it."},{"type":"tool_call","call_id":"c1","name":"read","input":{"path":"a.go","n":[1,2,{"x":"}"}]}}]`,
	`[{"type":"tool_result","call_id":"c1","name":"read","output":"line\t1\n\"quoted\" \\ \/ \u00e9 \ud83d\ude00 \u0000 <tag>","is_error":true,"compacted":false}]`,
	`[{"type":"reasoning","text":"x","signature":"sig","hidden":true}]`,
	` [ { "type" : "text" , "text" : "spaced" } ] `,
	`[{}]`,
	// For json.Unmarshal to decide:
	`null`,
	`[{"Type":"text","TEXT":"case differs"}]`,
	`[{"type":"text","text":null}]`,
	`[{"type":"text","unknown":1,"text":"x"}]`,
	`[{"type":"text","text":"lone \ud83d half"}]`,
	`[{"type":"text","text":"bad utf8 ` + "\xff" + `"}]`,
	`[{"type":"tool_call","input":"a string"}]`,
	`[{"type":"tool_call","input":null}]`,
	`[{"type":"text","text":"dup"},]`,
	`[{"type":"text","text":"unterminated}]`,
	`[{"type":"text","text":"x"}] trailing`,
	`[{"type":"text","hidden":tru}]`,
	`[{"type":"tool_call","input":{"a":}}]`,
	`{"type":"text"}`,
	``,
}

// TestDecodePartsMatchesUnmarshal: whatever the input, decodeParts gives
// json.Unmarshal's result or fails where it fails.
func TestDecodePartsMatchesUnmarshal(t *testing.T) {
	for _, in := range partsCases {
		t.Run(in, func(t *testing.T) { sameAsUnmarshal(t, []byte(in)) })
	}
}

// TestDecodePartsRoundTrip: every part written by encoding/json is read
// back by the fast path itself.
func TestDecodePartsRoundTrip(t *testing.T) {
	parts := []sa.Part{
		sa.TextPart("plain"),
		{Type: sa.PartToolCall, CallID: "c", Name: "bash", Input: json.RawMessage(`{"command":"echo \"hi\"\n"}`)},
		{Type: sa.PartToolResult, CallID: "c", Name: "bash", Output: "out\x00\x1b[31m<>&\u2028é😀", IsError: true, Compacted: true},
		{Type: sa.PartReasoning, Text: "think", Signature: "s", Hidden: true},
	}
	data, err := json.Marshal(parts)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := fastParts(data)
	if !ok {
		t.Fatalf("the fast path refused %s", data)
	}
	if diff := cmp.Diff(parts, got); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s", diff)
	}
}

func sameAsUnmarshal(t *testing.T, in []byte) {
	t.Helper()
	var want []sa.Part
	wantErr := json.Unmarshal(in, &want)
	got, err := decodeParts(in)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("error %v, json.Unmarshal's %v", err, wantErr)
	}
	if err == nil {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("differs from json.Unmarshal (-want +got):\n%s", diff)
		}
	}
}

func FuzzDecodeParts(f *testing.F) {
	for _, in := range partsCases {
		f.Add([]byte(in))
	}
	f.Fuzz(sameAsUnmarshal)
}

func TestClosingQuote(t *testing.T) {
	for _, tt := range []struct {
		name, contents string // the string's contents and what follows
		want           int
	}{
		{"plain", `abc"`, 3},
		{"an escaped quote first", `a\"b"`, 4},
		{"an escaped backslash before the end", `a\\"`, 3},
		{"an escaped backslash, then an escaped quote", `a\\\"b",`, 6},
		{"unterminated", `a\"b`, -1},
	} {
		b := []byte(`{"x":"` + tt.contents)
		start := len(`{"x":"`)
		want := tt.want
		if want >= 0 {
			want += start
		}
		if got := closingQuote(b, start, start); got != want {
			t.Errorf("%s: %d, want %d", tt.name, got, want)
		}
	}
}
