package llmtest

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/superagents/superagents"
)

// Live runs LiveRoundTrip against a real API when the environment variable
// keyEnv holds a key, and skips otherwise. The model is the variable
// modelEnv, or defaultModel; open builds the provider (baseURL comes from
// baseURLEnv and may be empty).
func Live(t *testing.T, keyEnv, baseURLEnv, modelEnv, defaultModel string, open func(key, baseURL string) (superagents.Provider, error)) {
	key := os.Getenv(keyEnv)
	if key == "" {
		t.Skip(keyEnv + " is not set")
	}
	model := os.Getenv(modelEnv)
	if model == "" {
		model = defaultModel
	}
	p, err := open(key, os.Getenv(baseURLEnv))
	if err != nil {
		t.Fatal(err)
	}
	LiveRoundTrip(t, p, model)
}

// LiveRoundTrip checks a provider against the real API: a short prompt,
// then a tool call round trip (the model calls an add tool, gets its
// result, and answers with it). Live tests call it only when an API key
// is set.
func LiveRoundTrip(t *testing.T, p superagents.Provider, model string) {
	t.Helper()
	got, err := Collect(t.Context(), p, UserRequest(model, "Reply with the single word: pong"))
	if err != nil {
		t.Fatalf("short prompt: %v", err)
	}
	if !strings.Contains(strings.ToLower(got.Text()), "pong") || got.Stop() == "" || got.Usage().OutputTokens == 0 {
		t.Fatalf("short prompt: text %q, stop %q, usage %+v", got.Text(), got.Stop(), got.Usage())
	}

	add := superagents.ToolSpec{
		Name:        "add",
		Description: "Add two integers and return their sum.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}`),
	}
	req := UserRequest(model, "Use the add tool to add 1234 and 4321, then tell me the result.")
	req.Tools = []superagents.ToolSpec{add}
	got, err = Collect(t.Context(), p, req)
	if err != nil {
		t.Fatalf("tool call: %v", err)
	}
	calls := got.ToolCalls()
	if len(calls) == 0 || calls[0].Name != "add" || got.Stop() != superagents.StopToolUse {
		t.Fatalf("no add call: text %q, calls %+v, stop %q", got.Text(), calls, got.Stop())
	}
	var args struct{ A, B int }
	if err := json.Unmarshal(calls[0].Input, &args); err != nil || args.A+args.B != 5555 {
		t.Fatalf("add arguments %s: %v", calls[0].Input, err)
	}
	assistant := superagents.Message{Role: superagents.RoleAssistant}
	if text := got.Text(); text != "" {
		assistant.Parts = append(assistant.Parts, superagents.TextPart(text))
	}
	assistant.Parts = append(assistant.Parts, calls...)
	results := superagents.Message{Role: superagents.RoleTool}
	for _, c := range calls {
		results.Parts = append(results.Parts, superagents.Part{Type: superagents.PartToolResult, CallID: c.CallID, Name: c.Name, Output: "5555"})
	}
	req.Messages = append(req.Messages, assistant, results)
	got, err = Collect(t.Context(), p, req)
	if err != nil {
		t.Fatalf("answer after the tool: %v", err)
	}
	if !strings.Contains(strings.ReplaceAll(got.Text(), ",", ""), "5555") || got.Stop() != superagents.StopEndTurn {
		t.Fatalf("answer after the tool: text %q, stop %q", got.Text(), got.Stop())
	}
}
