package hosttest

import (
	"encoding/json"
	"strings"

	"github.com/superagents/superagents/internal/llm/llmtest"
)

// Wire is a model API a host speaks.
type Wire string

// The wires of the hosts.
const (
	// Messages is Anthropic's Messages API (Claude Code).
	Messages Wire = "messages"
	// Responses is OpenAI's Responses API (Codex).
	Responses Wire = "responses"
	// ChatCompletions is OpenAI's Chat Completions API (OpenCode).
	ChatCompletions Wire = "chat"
)

// NamespaceSep joins, in a Responses API tool's name, the namespace it is
// offered in and its own name: "mcp__superagents/superagents_task".
const NamespaceSep = "/"

// Kinds of Item.
const (
	User       = "user"      // a user message's text
	Assistant  = "assistant" // a model reply's text
	Call       = "call"      // a tool call by the model
	ToolResult = "result"    // a tool's result sent back to the model
)

// Item is one piece of the conversation a host sent its model, in any
// wire: a user message, a reply's text, a tool call or a tool result.
type Item struct {
	Kind string
	// Text is a message's text, a call's arguments or a result's text.
	Text string
	// Name is a call's or a result's tool name.
	Name   string
	CallID string
}

// Conv is one request a host sent its model, read as a conversation.
type Conv struct {
	Wire  Wire
	Items []Item
	// Tools are the names of the tools the request offers the model.
	Tools []string
	Req   llmtest.Request
}

// Last returns the newest item (zero when there is none).
func (c Conv) Last() Item {
	if len(c.Items) == 0 {
		return Item{}
	}
	return c.Items[len(c.Items)-1]
}

// LastUser returns the text of the newest user message.
func (c Conv) LastUser() string {
	for i := len(c.Items) - 1; i >= 0; i-- {
		if c.Items[i].Kind == User {
			return c.Items[i].Text
		}
	}
	return ""
}

// Tool returns the offered tool whose name ends with suffix (hosts prefix
// MCP tools: mcp__superagents__superagents_task,
// superagents_superagents_task), or "".
func (c Conv) Tool(suffix string) string {
	for _, name := range c.Tools {
		if strings.HasSuffix(name, suffix) {
			return name
		}
	}
	return ""
}

// Results returns the results of the tool whose name ends with suffix,
// oldest first.
func (c Conv) Results(suffix string) []Item {
	var out []Item
	for _, it := range c.Items {
		if it.Kind == ToolResult && strings.HasSuffix(it.Name, suffix) {
			out = append(out, it)
		}
	}
	return out
}

// ParseConv reads a request in the wire's format.
func ParseConv(w Wire, req llmtest.Request) Conv {
	c := Conv{Wire: w, Req: req}
	switch w {
	case Messages:
		c.parseMessages()
	case Responses:
		c.parseResponses()
	case ChatCompletions:
		c.parseChat()
	}
	names := map[string]string{}
	for i, it := range c.Items {
		switch it.Kind {
		case Call:
			names[it.CallID] = it.Name
		case ToolResult:
			if c.Items[i].Name == "" {
				c.Items[i].Name = names[it.CallID]
			}
		}
	}
	return c
}

// textOf reads a content that is a string, or a list of parts whose text
// is in "text" (Anthropic text blocks, OpenAI text parts).
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		if p.Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

func (c *Conv) parseMessages() {
	var body struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = c.Req.Decode(&body)
	for _, t := range body.Tools {
		c.Tools = append(c.Tools, t.Name)
	}
	for _, m := range body.Messages {
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			c.Items = append(c.Items, Item{Kind: m.Role, Text: s})
			continue
		}
		var blocks []struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
		}
		_ = json.Unmarshal(m.Content, &blocks)
		var text []string
		flush := func() {
			if len(text) > 0 {
				c.Items = append(c.Items, Item{Kind: m.Role, Text: strings.Join(text, "\n")})
				text = nil
			}
		}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				text = append(text, b.Text)
			case "tool_use":
				flush()
				c.Items = append(c.Items, Item{Kind: Call, Name: b.Name, CallID: b.ID, Text: string(b.Input)})
			case "tool_result":
				flush()
				c.Items = append(c.Items, Item{Kind: ToolResult, CallID: b.ToolUseID, Text: textOf(b.Content)})
			}
		}
		flush()
	}
}

func (c *Conv) parseChat() {
	var body struct {
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	_ = c.Req.Decode(&body)
	for _, t := range body.Tools {
		c.Tools = append(c.Tools, t.Function.Name)
	}
	for _, m := range body.Messages {
		switch m.Role {
		case "tool":
			c.Items = append(c.Items, Item{Kind: ToolResult, CallID: m.ToolCallID, Text: textOf(m.Content)})
		case "user", "assistant":
			if t := textOf(m.Content); t != "" {
				c.Items = append(c.Items, Item{Kind: m.Role, Text: t})
			}
			for _, tc := range m.ToolCalls {
				c.Items = append(c.Items, Item{Kind: Call, Name: tc.Function.Name, CallID: tc.ID, Text: tc.Function.Arguments})
			}
		}
	}
}

func (c *Conv) parseResponses() {
	var body struct {
		Tools []struct {
			Type  string `json:"type"`
			Name  string `json:"name"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"tools"`
	}
	_ = c.Req.Decode(&body)
	for _, t := range body.Tools {
		if t.Name != "" {
			c.Tools = append(c.Tools, t.Name)
		}
		for _, sub := range t.Tools { // a namespace of tools (Codex's MCP servers)
			c.Tools = append(c.Tools, t.Name+NamespaceSep+sub.Name)
		}
	}
	for _, raw := range c.Req.ResponsesInput() {
		b, _ := json.Marshal(raw)
		var it struct {
			Type      string          `json:"type"`
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			Name      string          `json:"name"`
			Namespace string          `json:"namespace"`
			Arguments string          `json:"arguments"`
			CallID    string          `json:"call_id"`
			Output    json.RawMessage `json:"output"`
		}
		_ = json.Unmarshal(b, &it)
		switch it.Type {
		case "message", "":
			if it.Role == "user" || it.Role == "assistant" {
				c.Items = append(c.Items, Item{Kind: it.Role, Text: textOf(it.Content)})
			}
		case "function_call":
			name := it.Name
			if it.Namespace != "" {
				name = it.Namespace + NamespaceSep + it.Name
			}
			c.Items = append(c.Items, Item{Kind: Call, Name: name, CallID: it.CallID, Text: it.Arguments})
		case "function_call_output":
			c.Items = append(c.Items, Item{Kind: ToolResult, CallID: it.CallID, Text: textOf(it.Output)})
		}
	}
}
