package llmtest

import (
	"net/http"
	"testing"
)

// NewAnthropic starts a fake Anthropic Messages API (POST /v1/messages),
// closed when the test ends. Point clients at srv.BaseURL().
func NewAnthropic(t testing.TB) *Server {
	t.Helper()
	return newServer(t, anthropicAPI{})
}

// BaseURL is the base URL to give an SDK client: the root for Anthropic,
// root + "/v1" for OpenAI.
func (s *Server) BaseURL() string {
	if _, ok := s.api.(openaiAPI); ok {
		return s.URL + "/v1"
	}
	return s.URL
}

type anthropicAPI struct{}

func (anthropicAPI) path() string { return "/v1/messages" }

func (anthropicAPI) authorized(h http.Header, key string) bool {
	return h.Get("X-Api-Key") == key || h.Get("Authorization") == "Bearer "+key
}

func (anthropicAPI) errorBody(status int, kind, message string) any {
	if kind == "" {
		kind = map[int]string{
			400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
			404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 529: "overloaded_error",
		}[status]
		if kind == "" {
			kind = "api_error"
		}
	}
	if message == "" {
		message = http.StatusText(status)
	}
	return map[string]any{"type": "error", "error": map[string]any{"type": kind, "message": message}}
}

func (anthropicAPI) errorEvent() event {
	return event{name: "error", data: map[string]any{"type": "error", "error": map[string]any{"type": "overloaded_error", "message": "Overloaded"}}}
}

func (anthropicAPI) stopReason(r Reply) string {
	switch {
	case r.StopReason != "":
		return r.StopReason
	case len(r.ToolCalls) > 0:
		return "tool_use"
	}
	return "end_turn"
}

// blocks returns the reply's content blocks as the non-streaming API
// returns them, with the tool call ids filled in.
func (a anthropicAPI) blocks(s *Server, r Reply) []map[string]any {
	var blocks []map[string]any
	if r.Reasoning != "" {
		blocks = append(blocks, map[string]any{"type": "thinking", "thinking": r.Reasoning, "signature": r.Signature})
	}
	if r.Text != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": r.Text})
	}
	for _, c := range r.ToolCalls {
		id := c.ID
		if id == "" {
			id = s.id("toolu_")
		}
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": id, "name": c.Name, "input": rawJSON(c.input())})
	}
	return blocks
}

func (a anthropicAPI) message(s *Server, req Request, content []map[string]any, stop any, u Usage) map[string]any {
	if content == nil {
		content = []map[string]any{}
	}
	return map[string]any{
		"id": s.id("msg_"), "type": "message", "role": "assistant", "model": model(req),
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{
			"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens,
			"cache_read_input_tokens": u.CacheReadTokens, "cache_creation_input_tokens": u.CacheWriteTokens,
		},
	}
}

func (a anthropicAPI) response(s *Server, req Request, r Reply) any {
	return a.message(s, req, a.blocks(s, r), a.stopReason(r), r.usage(s, req, s.anthropicUsage))
}

func (a anthropicAPI) events(s *Server, req Request, r Reply) []event {
	u := r.usage(s, req, s.anthropicUsage)
	start := a.message(s, req, nil, nil, Usage{InputTokens: u.InputTokens, OutputTokens: 1, CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens})
	events := []event{
		{name: "message_start", data: map[string]any{"type": "message_start", "message": start}},
		{name: "ping", data: map[string]any{"type": "ping"}},
	}
	calls := 0
	for i, b := range a.blocks(s, r) {
		startBlock := map[string]any{"type": b["type"]}
		var deltas []map[string]any
		switch b["type"] {
		case "thinking":
			startBlock["thinking"], startBlock["signature"] = "", ""
			for _, piece := range split(r.Reasoning, r.Deltas) {
				deltas = append(deltas, map[string]any{"type": "thinking_delta", "thinking": piece})
			}
			if r.Signature != "" {
				deltas = append(deltas, map[string]any{"type": "signature_delta", "signature": r.Signature})
			}
		case "text":
			startBlock["text"] = ""
			for _, piece := range split(r.Text, r.Deltas) {
				deltas = append(deltas, map[string]any{"type": "text_delta", "text": piece})
			}
		case "tool_use":
			startBlock["id"], startBlock["name"], startBlock["input"] = b["id"], b["name"], map[string]any{}
			// The raw input, so that a test can send invalid JSON.
			for _, piece := range halves(compact(r.ToolCalls[calls].input())) {
				deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": piece})
			}
			calls++
		}
		events = append(events, event{name: "content_block_start", data: map[string]any{"type": "content_block_start", "index": i, "content_block": startBlock}})
		for _, d := range deltas {
			events = append(events, event{name: "content_block_delta", data: map[string]any{"type": "content_block_delta", "index": i, "delta": d}, content: true})
		}
		events = append(events, event{name: "content_block_stop", data: map[string]any{"type": "content_block_stop", "index": i}})
	}
	return append(events,
		event{name: "message_delta", final: true, data: map[string]any{
			"type":  "message_delta",
			"delta": map[string]any{"stop_reason": a.stopReason(r), "stop_sequence": nil},
			"usage": map[string]any{
				"output_tokens": u.OutputTokens, "input_tokens": u.InputTokens,
				"cache_read_input_tokens": u.CacheReadTokens, "cache_creation_input_tokens": u.CacheWriteTokens,
			},
		}},
		event{name: "message_stop", final: true, data: map[string]any{"type": "message_stop"}},
	)
}
