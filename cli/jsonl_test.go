package cli_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/cli"
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
