package llmtest

import "encoding/json"

// LastToolResult returns the text of the newest tool result the request
// carries, in either wire format: an OpenAI "tool" message, or an Anthropic
// user message holding tool_result blocks (content as a string or as text
// blocks). ok is false when there is none.
func (r Request) LastToolResult() (text string, ok bool) {
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if r.Decode(&body) != nil {
		return "", false
	}
	for i := len(body.Messages) - 1; i >= 0; i-- {
		m := body.Messages[i]
		if m.Role == "tool" {
			var s string
			_ = json.Unmarshal(m.Content, &s)
			return s, true
		}
		var blocks []struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for j := len(blocks) - 1; j >= 0; j-- {
			if blocks[j].Type != "tool_result" {
				continue
			}
			var s string
			if json.Unmarshal(blocks[j].Content, &s) == nil {
				return s, true
			}
			var parts []struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(blocks[j].Content, &parts)
			for _, p := range parts {
				text += p.Text
			}
			return text, true
		}
	}
	return "", false
}
