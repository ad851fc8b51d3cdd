package cli_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/cli"
)

func TestParseJSONL(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    int
		wantErr string
	}{
		{"text lines", "{\"role\":\"user\",\"text\":\"a\"}\n{\"role\":\"assistant\",\"text\":\"b\"}", 2, ""},
		{"blank lines and CRLF", "\r\n{\"role\":\"user\",\"text\":\"a\"}\r\n\r\n", 1, ""},
		{"ids are ignored", `{"id":7,"session_id":"x","role":"user","text":"a"}`, 1, ""},
		{"clear without parts", `{"role":"system","kind":"clear"}`, 1, ""},
		{"two values on a line", `{"role":"user","text":"a"}{"role":"user","text":"b"}`, 0, "line 1: invalid input: more than one JSON value"},
		{"not an object", `["user","a"]`, 0, "line 1"},
		{"missing role", `{"text":"a"}`, 0, `missing "role"`},
		{"empty text", `{"role":"user","text":""}`, 0, `empty "text"`},
		{"no text or parts", `{"role":"user"}`, 0, "at least one part"},
		{"bad part", `{"role":"assistant","parts":[{"type":"tool_call","name":"x"}]}`, 0, "needs call_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := cli.ParseJSONL(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, sa.ErrInvalid) {
					t.Fatalf("ParseJSONL error = %v, want ErrInvalid containing %q", err, tt.wantErr)
				}
				if got != nil {
					t.Fatal("a failed parse returned messages")
				}
				return
			}
			if err != nil || len(got) != tt.want {
				t.Fatalf("ParseJSONL = %d messages, %v; want %d", len(got), err, tt.want)
			}
		})
	}
}

// FuzzParseJSONL: any input either parses into messages that validate or
// fails with a line-numbered ErrInvalid; it never panics.
func FuzzParseJSONL(f *testing.F) {
	f.Add([]byte("{\"role\":\"user\",\"text\":\"What is 2+2?\"}\n{\"role\":\"assistant\",\"text\":\"4\"}\n"))
	f.Add([]byte(`{"role":"assistant","parts":[{"type":"tool_call","call_id":"c","name":"read","input":{"p":1}}]}`))
	f.Add([]byte(`{"role":"tool","parts":[{"type":"tool_result","call_id":"c","output":"x","is_error":true}]}`))
	f.Add([]byte(`{"role":"system","kind":"clear"}`))
	f.Add([]byte("\xff\xfe{\"role\":"))
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, err := cli.ParseJSONL(bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("error without a line number: %v", err)
			}
			return
		}
		for _, m := range msgs {
			if err := m.Validate(); err != nil {
				t.Fatalf("parsed message does not validate: %v", err)
			}
		}
	})
}

// TestParseJSONLFirstBadLine: input of several megabytes is decoded on
// every core, and still reports the first bad line, with blank lines
// counted, and the messages in the order of the lines.
func TestParseJSONLFirstBadLine(t *testing.T) {
	big := strings.Repeat("x", 1000)
	var b strings.Builder
	for i := 1; i <= 4000; i++ {
		switch i {
		case 7:
			b.WriteString("\n")
		case 1500, 3900:
			fmt.Fprintf(&b, "{\"role\":\"bad\",\"text\":\"%d %s\"}\n", i, big)
		default:
			fmt.Fprintf(&b, "{\"role\":\"user\",\"text\":\"%d %s\"}\n", i, big)
		}
	}
	_, err := cli.ParseJSONL(strings.NewReader(b.String()))
	if err == nil || !strings.Contains(err.Error(), "line 1500:") {
		t.Fatalf("ParseJSONL error = %v, want one about line 1500", err)
	}
	good := strings.ReplaceAll(b.String(), `"bad"`, `"user"`)
	msgs, err := cli.ParseJSONL(strings.NewReader(good))
	if err != nil || len(msgs) != 3999 {
		t.Fatalf("ParseJSONL = %d messages, %v; want 3999", len(msgs), err)
	}
	for i, m := range msgs {
		no := i + 1
		if no >= 7 {
			no++ // the blank line
		}
		if m.Role == sa.RoleUser && !strings.HasPrefix(m.Parts[0].Text, fmt.Sprint(no, " ")) {
			t.Fatalf("message %d is %.20q, want line %d", i, m.Parts[0].Text, no)
		}
	}
}

// BenchmarkParseJSONL reads 7,500 messages (2,500 requests, tool calls
// and their 8 KB results: 23 MB), as `superagents import` does.
func BenchmarkParseJSONL(b *testing.B) {
	var out strings.Builder
	for i := 0; out.Len() < 8000; i++ {
		fmt.Fprintf(&out, "\tif err := step(%d); err != nil { return fmt.Errorf(\"step %%d: %%w\", %d, err) } // \"quoted\"\n", i, i)
	}
	output, _ := json.Marshal(out.String())
	var in bytes.Buffer
	for i := range 2500 {
		fmt.Fprintf(&in, "{\"role\":\"user\",\"text\":\"Look at file %d.\"}\n", i)
		fmt.Fprintf(&in, "{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"text\":\"Let me read it.\"},{\"type\":\"tool_call\",\"call_id\":\"c%d\",\"name\":\"read\",\"input\":{\"path\":\"f%d.go\"}}]}\n", i, i)
		fmt.Fprintf(&in, "{\"role\":\"tool\",\"parts\":[{\"type\":\"tool_result\",\"call_id\":\"c%d\",\"name\":\"read\",\"output\":%s}]}\n", i, output)
	}
	b.SetBytes(int64(in.Len()))
	for b.Loop() {
		msgs, err := cli.ParseJSONL(bytes.NewReader(in.Bytes()))
		if err != nil || len(msgs) != 7500 {
			b.Fatal(len(msgs), err)
		}
	}
}
