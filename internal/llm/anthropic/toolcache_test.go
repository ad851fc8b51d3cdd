package anthropic

import (
	"encoding/json"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/llm/llmtest"
)

// TestToolParametersAreSharedNotMarked: a tool's converted parameter is
// kept between requests; the cache breakpoint a request puts on its last
// tool must not stay on it for the next request, where the tool is no
// longer last, and a changed schema is converted again.
func TestToolParametersAreSharedNotMarked(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	p := newProvider(t, srv.BaseURL(), "k", llmtest.SuiteLimits())
	schema := func(prop string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{"` + prop + `":{"type":"string"}},"required":["` + prop + `"]}`)
	}
	a := sa.ToolSpec{Name: "alpha", Description: "first", InputSchema: schema("path")}
	b := sa.ToolSpec{Name: "beta", Description: "second", InputSchema: schema("query")}
	changed := a
	changed.InputSchema = schema("file")
	for _, tools := range [][]sa.ToolSpec{{a, b}, {b, a}, {b, changed}} {
		srv.Push(llmtest.Reply{Text: "ok"})
		req := llmtest.UserRequest("claude-test", "hi")
		req.Tools = tools
		if _, err := llmtest.Collect(t.Context(), p, req); err != nil {
			t.Fatal(err)
		}
	}
	type tool struct {
		Name         string          `json:"name"`
		CacheControl json.RawMessage `json:"cache_control"`
		InputSchema  struct {
			Properties map[string]any `json:"properties"`
		} `json:"input_schema"`
	}
	for i, r := range srv.Requests() {
		var body struct {
			Tools []tool `json:"tools"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		for j, tl := range body.Tools {
			last := j == len(body.Tools)-1
			if marked := len(tl.CacheControl) > 0 && string(tl.CacheControl) != "null"; marked != last {
				t.Errorf("request %d: tool %s (position %d of %d) cache_control %s", i, tl.Name, j+1, len(body.Tools), tl.CacheControl)
			}
		}
		if i == 2 {
			if _, ok := body.Tools[1].InputSchema.Properties["file"]; !ok {
				t.Errorf("request 3: the changed schema was not sent: %+v", body.Tools[1])
			}
		}
	}
}
