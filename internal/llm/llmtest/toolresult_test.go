package llmtest

import "testing"

func TestLastToolResult(t *testing.T) {
	tests := []struct {
		name, body, want string
		ok               bool
	}{
		{"openai", `{"messages":[{"role":"tool","content":"first"},{"role":"assistant","content":"x"},{"role":"tool","content":"second"}]}`, "second", true},
		{"anthropic string", `{"messages":[{"role":"user","content":[{"type":"tool_result","content":"a"},{"type":"tool_result","content":"b"}]}]}`, "b", true},
		{"anthropic blocks", `{"messages":[{"role":"user","content":[{"type":"tool_result","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]}]}]}`, "xy", true},
		{"none", `{"messages":[{"role":"user","content":"hi"}]}`, "", false},
		{"not JSON", `{`, "", false},
	}
	for _, tt := range tests {
		got, ok := Request{Body: []byte(tt.body)}.LastToolResult()
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: %q %v, want %q %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}
