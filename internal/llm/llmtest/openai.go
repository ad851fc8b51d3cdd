package llmtest

import (
	"encoding/json"
	"net/http"
	"testing"
)

// NewOpenAI starts a fake OpenAI Chat Completions API
// (POST /v1/chat/completions), closed when the test ends. Point clients at
// srv.BaseURL(). Usage is streamed only when the request asks for it with
// stream_options.include_usage, as the real API does.
func NewOpenAI(t testing.TB) *Server {
	t.Helper()
	return newServer(t, openaiAPI{})
}

type openaiAPI struct{}

func (openaiAPI) path() string { return "/v1/chat/completions" }

func (openaiAPI) authorized(h http.Header, key string) bool {
	return h.Get("Authorization") == "Bearer "+key
}

func (openaiAPI) errorBody(status int, kind, message string) any {
	if kind == "" {
		kind = map[int]string{400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error", 429: "rate_limit_exceeded"}[status]
		if kind == "" {
			kind = "server_error"
		}
	}
	if message == "" {
		message = http.StatusText(status)
	}
	return map[string]any{"error": map[string]any{"message": message, "type": kind, "param": nil, "code": nil}}
}

func (openaiAPI) invalid([]byte) string { return "" }

func (openaiAPI) errorEvent() event {
	return event{data: map[string]any{"error": map[string]any{"message": "Overloaded", "type": "server_error"}}}
}

func (openaiAPI) finishReason(r Reply) string {
	switch {
	case r.StopReason != "":
		return r.StopReason
	case len(r.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func (openaiAPI) usage(u Usage) map[string]any {
	return map[string]any{
		"prompt_tokens": u.InputTokens, "completion_tokens": u.OutputTokens, "total_tokens": u.InputTokens + u.OutputTokens,
		"prompt_tokens_details": map[string]any{"cached_tokens": u.CacheReadTokens},
	}
}

// calls returns the reply's tool calls with their ids filled in.
func (openaiAPI) calls(s *Server, r Reply) []ToolCall {
	calls := append([]ToolCall(nil), r.ToolCalls...)
	for i := range calls {
		if calls[i].ID == "" {
			calls[i].ID = s.id("call_")
		}
	}
	return calls
}

func (a openaiAPI) response(s *Server, req Request, r Reply) any {
	msg := map[string]any{"role": "assistant", "content": r.Text}
	if r.Reasoning != "" {
		msg["reasoning_content"] = r.Reasoning
	}
	if len(r.ToolCalls) > 0 {
		var calls []map[string]any
		for _, c := range a.calls(s, r) {
			calls = append(calls, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.input()}})
		}
		msg["tool_calls"] = calls
	}
	return map[string]any{
		"id": s.id("chatcmpl-"), "object": "chat.completion", "created": 1700000000, "model": model(req),
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": a.finishReason(r)}},
		"usage":   a.usage(r.usage(s, req, s.openaiUsage)),
	}
}

func (a openaiAPI) events(s *Server, req Request, r Reply) []event {
	id := s.id("chatcmpl-")
	usage := r.usage(s, req, s.openaiUsage)
	chunk := func(delta map[string]any, finish any) event {
		return event{data: map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 1700000000, "model": model(req),
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}, content: finish == nil && len(delta) > 0, final: finish != nil}
	}
	events := []event{chunk(map[string]any{"role": "assistant", "content": ""}, nil)}
	events[0].content = false
	for _, piece := range split(r.Reasoning, r.Deltas) {
		events = append(events, chunk(map[string]any{"reasoning_content": piece}, nil))
	}
	for _, piece := range split(r.Text, r.Deltas) {
		events = append(events, chunk(map[string]any{"content": piece}, nil))
	}
	for i, c := range a.calls(s, r) {
		index := i
		if r.SharedIndex {
			index = 0
		}
		for j, piece := range halves(compact(c.input())) {
			call := map[string]any{"index": index, "function": map[string]any{"arguments": piece}}
			if j == 0 {
				call["id"], call["type"] = c.ID, "function"
				call["function"].(map[string]any)["name"] = c.Name
			}
			events = append(events, chunk(map[string]any{"tool_calls": []any{call}}, nil))
		}
	}
	events = append(events, chunk(map[string]any{}, a.finishReason(r)))
	if wantsUsage(req) {
		events = append(events, event{final: true, data: map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 1700000000, "model": model(req),
			"choices": []any{}, "usage": a.usage(usage),
		}})
	}
	return append(events, event{data: "[DONE]", final: true})
}

// wantsUsage reports whether the request asked for usage in the stream.
func wantsUsage(req Request) bool {
	var body struct {
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	_ = json.Unmarshal(req.Body, &body)
	return body.StreamOptions.IncludeUsage
}
