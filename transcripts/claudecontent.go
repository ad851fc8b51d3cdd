package transcripts

import (
	"encoding/json"
	"strings"

	sa "github.com/superagents/superagents"
)

// The messages of Claude Code's records: the content blocks of user and
// assistant records, tool results, and what Claude Code writes into user
// records for itself.

type ccBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	ToolName  string          `json:"tool_name"` // tool_reference
}

// claudeRecord adds one conversation record to the messages. An error means
// the record's message could not be read.
func claudeRecord(b *builder, rec ccRecord) error {
	switch rec.Type {
	case "system":
		if rec.Subtype == "compact_boundary" {
			b.compaction(rec.at)
		}
		return nil
	case "user", "assistant":
	default:
		return nil
	}
	if rec.IsMeta || rec.Message == nil {
		return nil
	}
	msg := rec.Message
	text, blocks, err := ccContent(msg.Content)
	if err != nil {
		return err
	}
	if rec.Type == "assistant" {
		parts := make([]sa.Part, 0, len(blocks)+1)
		if text != "" {
			parts = append(parts, sa.TextPart(text))
		}
		for _, bl := range blocks {
			switch bl.Type {
			case "text":
				if strings.TrimSpace(bl.Text) != "" {
					parts = append(parts, sa.TextPart(bl.Text))
				}
			case "thinking":
				if strings.TrimSpace(bl.Thinking) != "" {
					parts = append(parts, sa.Part{Type: sa.PartReasoning, Text: bl.Thinking, Signature: bl.Signature})
				}
			case "tool_use", "server_tool_use":
				if bl.ID != "" && bl.Name != "" {
					parts = append(parts, sa.Part{Type: sa.PartToolCall, CallID: bl.ID, Name: bl.Name, Input: toolInput(bl.Input)})
				}
			}
		}
		model := msg.Model
		if model == "<synthetic>" {
			model = ""
		}
		b.assistant(msg.ID, model, parts, rec.at)
		return nil
	}
	if rec.IsCompactSummary {
		b.summary(joinTexts(text, blocks), rec.at)
		return nil
	}
	var texts []string
	if t := userText(text); t != "" {
		texts = append(texts, t)
	}
	for _, bl := range blocks {
		switch bl.Type {
		case "tool_result":
			b.result(bl.ToolUseID, ccResultText(bl.Content), bl.IsError, rec.at)
		case "text":
			if t := userText(bl.Text); t != "" {
				texts = append(texts, t)
			}
		case "image", "document":
			texts = append(texts, "["+bl.Type+"]")
		}
	}
	b.user(strings.Join(texts, "\n\n"), rec.at)
	return nil
}

// ccContent reads message content: a string, or an array of blocks.
func ccContent(raw json.RawMessage) (string, []ccBlock, error) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, nil, err
	}
	var blocks []ccBlock
	err := json.Unmarshal(raw, &blocks)
	return "", blocks, err
}

func joinTexts(text string, blocks []ccBlock) string {
	out := []string{}
	if text != "" {
		out = append(out, text)
	}
	for _, bl := range blocks {
		if bl.Type == "text" && bl.Text != "" {
			out = append(out, bl.Text)
		}
	}
	return strings.Join(out, "\n\n")
}

// ccResultText reads a tool result's content: a string or text blocks.
func ccResultText(raw json.RawMessage) string {
	text, blocks, err := ccContent(raw)
	if err != nil {
		return string(raw)
	}
	var loaded []string
	for _, bl := range blocks {
		switch bl.Type {
		case "tool_reference":
			loaded = append(loaded, bl.ToolName)
		case "text":
			if text != "" {
				text += "\n"
			}
			text += bl.Text
		case "image", "document":
			if text != "" {
				text += "\n"
			}
			text += "[" + bl.Type + "]"
		}
	}
	// Claude Code defers MCP tools: its model loads them with ToolSearch,
	// whose result is tool_reference blocks and no text. The call stays,
	// saying what it loaded, rather than being left out: it explains the
	// calls to those tools that follow, and a call without its result
	// would look unanswered.
	if len(loaded) > 0 && strings.TrimSpace(text) == "" {
		text = "loaded tools: " + strings.Join(loaded, ", ")
	}
	return text
}

// userText drops what Claude Code writes into user records for its own
// bookkeeping: slash-command echoes and local command output.
func userText(s string) string {
	t := strings.TrimSpace(s)
	for _, p := range []string{"<command-name>", "<command-message>", "<command-args>", "<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>"} {
		if strings.HasPrefix(t, p) {
			return ""
		}
	}
	return t
}
