package llmtest

import (
	"encoding/json"
	"net/http"
	"testing"
)

// NewResponses starts a fake OpenAI Responses API (POST /v1/responses),
// closed when the test ends, streaming as the real API does: typed events
// (response.created, response.output_item.added, ...output_text.delta,
// ...function_call_arguments.delta, response.output_item.done,
// response.completed), each with its "event:" line. Point clients at
// srv.URL + "/v1". Replies' text becomes an output_text message, their
// tool calls function_call items (call ids "call_N"), their reasoning a
// reasoning item with one summary part.
func NewResponses(t testing.TB) *Server {
	t.Helper()
	return newServer(t, responsesAPI{})
}

type responsesAPI struct{}

func (responsesAPI) path() string { return "/v1/responses" }

func (responsesAPI) authorized(h http.Header, key string) bool {
	return h.Get("Authorization") == "Bearer "+key
}

func (responsesAPI) errorBody(status int, kind, message string) any {
	return openaiAPI{}.errorBody(status, kind, message)
}

func (responsesAPI) invalid([]byte) string { return "" }

func (responsesAPI) errorEvent() event {
	return event{name: "error", data: map[string]any{"type": "error", "code": "server_error", "message": "Overloaded", "param": nil}}
}

func (responsesAPI) usage(u Usage) map[string]any {
	return map[string]any{
		"input_tokens":          u.InputTokens,
		"input_tokens_details":  map[string]any{"cached_tokens": u.CacheReadTokens},
		"output_tokens":         u.OutputTokens,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens":          u.InputTokens + u.OutputTokens,
	}
}

// items returns the reply's output items, complete, with their ids.
func (a responsesAPI) items(s *Server, r Reply) []map[string]any {
	var items []map[string]any
	if r.Reasoning != "" {
		items = append(items, map[string]any{
			"type": "reasoning", "id": s.id("rs_"),
			"summary": []any{map[string]any{"type": "summary_text", "text": r.Reasoning}},
		})
	}
	if r.Text != "" {
		items = append(items, map[string]any{
			"type": "message", "id": s.id("msg_"), "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": r.Text, "annotations": []any{}}},
		})
	}
	for _, c := range (openaiAPI{}).calls(s, r) {
		item := map[string]any{
			"type": "function_call", "id": s.id("fc_"), "status": "completed",
			"call_id": c.ID, "name": c.Name, "arguments": compact(c.input()),
		}
		if c.Namespace != "" {
			item["namespace"] = c.Namespace
		}
		items = append(items, item)
	}
	return items
}

func (a responsesAPI) object(s *Server, req Request, id, status string, output []map[string]any, u *Usage) map[string]any {
	if output == nil {
		output = []map[string]any{}
	}
	obj := map[string]any{
		"id": id, "object": "response", "created_at": 1700000000, "status": status,
		"model": model(req), "output": output, "usage": nil,
	}
	if u != nil {
		obj["usage"] = a.usage(*u)
	}
	return obj
}

func (a responsesAPI) response(s *Server, req Request, r Reply) any {
	u := r.usage(s, req, s.openaiUsage)
	return a.object(s, req, s.id("resp_"), "completed", a.items(s, r), &u)
}

func (a responsesAPI) events(s *Server, req Request, r Reply) []event {
	u := r.usage(s, req, s.openaiUsage)
	id := s.id("resp_")
	seq := 0
	ev := func(typ string, data map[string]any) event {
		data["type"] = typ
		data["sequence_number"] = seq
		seq++
		return event{name: typ, data: data}
	}
	events := []event{
		ev("response.created", map[string]any{"response": a.object(s, req, id, "in_progress", nil, nil)}),
		ev("response.in_progress", map[string]any{"response": a.object(s, req, id, "in_progress", nil, nil)}),
	}
	items := a.items(s, r)
	calls := 0
	for i, item := range items {
		itemID := item["id"]
		switch item["type"] {
		case "reasoning":
			events = append(events, ev("response.output_item.added", map[string]any{"output_index": i, "item": map[string]any{"type": "reasoning", "id": itemID, "summary": []any{}}}))
			events = append(events, ev("response.reasoning_summary_part.added", map[string]any{"item_id": itemID, "output_index": i, "summary_index": 0, "part": map[string]any{"type": "summary_text", "text": ""}}))
			for _, piece := range split(r.Reasoning, r.Deltas) {
				e := ev("response.reasoning_summary_text.delta", map[string]any{"item_id": itemID, "output_index": i, "summary_index": 0, "delta": piece})
				e.content = true
				events = append(events, e)
			}
			events = append(events, ev("response.reasoning_summary_text.done", map[string]any{"item_id": itemID, "output_index": i, "summary_index": 0, "text": r.Reasoning}))
			events = append(events, ev("response.reasoning_summary_part.done", map[string]any{"item_id": itemID, "output_index": i, "summary_index": 0, "part": map[string]any{"type": "summary_text", "text": r.Reasoning}}))
		case "message":
			events = append(events, ev("response.output_item.added", map[string]any{"output_index": i, "item": map[string]any{"type": "message", "id": itemID, "status": "in_progress", "role": "assistant", "content": []any{}}}))
			part := map[string]any{"type": "output_text", "text": "", "annotations": []any{}}
			events = append(events, ev("response.content_part.added", map[string]any{"item_id": itemID, "output_index": i, "content_index": 0, "part": part}))
			for _, piece := range split(r.Text, r.Deltas) {
				e := ev("response.output_text.delta", map[string]any{"item_id": itemID, "output_index": i, "content_index": 0, "delta": piece, "logprobs": []any{}})
				e.content = true
				events = append(events, e)
			}
			events = append(events, ev("response.output_text.done", map[string]any{"item_id": itemID, "output_index": i, "content_index": 0, "text": r.Text, "logprobs": []any{}}))
			events = append(events, ev("response.content_part.done", map[string]any{"item_id": itemID, "output_index": i, "content_index": 0, "part": map[string]any{"type": "output_text", "text": r.Text, "annotations": []any{}}}))
		case "function_call":
			added := map[string]any{}
			for k, v := range item {
				added[k] = v
			}
			added["arguments"], added["status"] = "", "in_progress"
			events = append(events, ev("response.output_item.added", map[string]any{"output_index": i, "item": added}))
			// The raw input, so that a test can send invalid JSON.
			args := compact(r.ToolCalls[calls].input())
			calls++
			for _, piece := range halves(args) {
				e := ev("response.function_call_arguments.delta", map[string]any{"item_id": itemID, "output_index": i, "delta": piece})
				e.content = true
				events = append(events, e)
			}
			events = append(events, ev("response.function_call_arguments.done", map[string]any{"item_id": itemID, "output_index": i, "arguments": args}))
		}
		events = append(events, ev("response.output_item.done", map[string]any{"output_index": i, "item": item}))
	}
	done := ev("response.completed", map[string]any{"response": a.object(s, req, id, "completed", items, &u)})
	done.final = true
	return append(events, done)
}

// ResponsesInput is the input of a Responses API request, item by item,
// each item as its JSON object.
func (r Request) ResponsesInput() []map[string]any {
	var body struct {
		Input json.RawMessage `json:"input"`
	}
	if r.Decode(&body) != nil {
		return nil
	}
	var items []map[string]any
	if json.Unmarshal(body.Input, &items) != nil {
		var text string
		if json.Unmarshal(body.Input, &text) == nil {
			return []map[string]any{{"type": "message", "role": "user", "content": text}}
		}
	}
	return items
}
