package llmtest

import "encoding/json"

// FirstText returns the first text of an Anthropic request's first
// message (its content a string or blocks): the prompt of the task or
// turn that made it; "" when there is none.
func (r Request) FirstText() string {
	var body struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if r.Decode(&body) != nil || len(body.Messages) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(body.Messages[0].Content, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(body.Messages[0].Content, &blocks) != nil {
		return ""
	}
	for _, b := range blocks {
		if b.Text != "" {
			return b.Text
		}
	}
	return ""
}
