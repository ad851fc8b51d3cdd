package offline

import (
	"strings"
	"testing"
)

func testFuncs() funcMap {
	tr := turn{user: "read notes.txt please"}
	return tr.funcs([]string{"read notes.txt", "notes.txt", "42"})
}

// TestTemplateExecute: the text/template syntax scripts use, evaluated
// without text/template's executor.
func TestTemplateExecute(t *testing.T) {
	tests := []struct {
		name, text, want, wantErr string
	}{
		{"plain text", "no actions here", "no actions here", ""},
		{"function", "You asked: {{last_user}}", "You asked: read notes.txt please", ""},
		{"group", "[{{group 1}}]", "[notes.txt]", ""},
		{"string literal", `{{"a"}}{{ "b" }}`, "ab", ""},
		{"number literal", "{{7}}", "7", ""},
		{"pipeline", "{{2 | group}}", "42", ""},
		{"parenthesised", "{{group (group 2 | len0)}}", "", `function "len0" not defined`},
		{"nested pipe", "{{group (2)}}", "42", ""},
		{"text as a number", `{{group "1"}}`, "notes.txt", ""},
		{"if true", "{{if group 1}}yes{{else}}no{{end}}", "yes", ""},
		{"if false", `{{if tool_result "read"}}yes{{else}}no{{end}}`, "no", ""},
		{"comment", "a{{/* note */}}b", "ab", ""},
		{"slice", `{{slice (group 1) 2 5}}`, "tes", ""},
		{"slice to the end", `{{slice last_user 5}}`, "notes.txt please", ""},
		{"slice out of range", `{{slice (group 1) 2 50}}`, "", "error calling slice: index out of range: [2:50] of 9 bytes"},
		{"len", `{{len (group 1)}}`, "9", ""},
		{"missing group", "{{group 5}}", "", `template: reply:1:2: executing "reply" at <group 5>: error calling group: group 5 does not exist (the rule's regexp has 2)`},
		{"wrong arg count", "{{group}}", "", "wrong number of args for group: want 1 got 0"},
		{"wrong arg type", `{{group "x"}}`, "", "expected int"},
		{"unknown function", "{{nope}}", "", `function "nope" not defined`},
		{"field", "{{.Name}}", "", "is not supported in an offline script"},
		{"variable", "{{$x := group 1}}{{$x}}", "", "is not supported in an offline script"},
		{"range", "{{range group 1}}{{end}}", "", "is not supported in an offline script"},
		{"define", `{{define "x"}}a{{end}}`, "", "define and block are not supported"},
		{"unclosed", "{{group 1", "", "unclosed action"},
		{"argument to literal", `{{"a" 1}}`, "", "can't give argument to non-function"},
		{"float", "{{group 1.5}}", "", "is not supported in an offline script"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := execute("reply", tt.text, testFuncs())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// FuzzTemplate: any text either fails to check with an error or, once
// checked, executes without panicking.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"{{group 1}}", "{{if last_user}}a{{else}}b{{end}}", "{{2 | group}}", `{{tool_result "read"}}`, "{{.X}}", "{{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if _, err := checkTemplate(text); err != nil {
			return
		}
		_, _ = execute("reply", text, testFuncs())
	})
}
