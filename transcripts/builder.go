package transcripts

import (
	"encoding/json"
	"strings"

	sa "github.com/superagents/superagents"
)

// builder assembles messages from a host's records in order, remembers
// after which host record each message ends, and splits off at the end the
// messages that may still grow.
type builder struct {
	msgs     []sa.Message
	keys     []string          // host id of each assistant reply, to merge its pieces
	marks    []Position        // the position after each message's last record
	names    map[string]string // tool name by call id
	answered map[string]bool
	title    string
	model    string
	// openFrom, when 0 or more, is the first message the host has not
	// finished writing.
	openFrom int
}

func newBuilder() *builder {
	return &builder{names: map[string]string{}, answered: map[string]bool{}, openFrom: -1}
}

func (b *builder) push(m sa.Message, key string, at Position) {
	b.msgs = append(b.msgs, m)
	b.keys = append(b.keys, key)
	b.marks = append(b.marks, at)
}

func (b *builder) last() *sa.Message {
	if len(b.msgs) == 0 {
		return nil
	}
	return &b.msgs[len(b.msgs)-1]
}

// assistant adds the parts of one assistant reply; pieces that share a
// non-empty key with the reply just before are merged into it.
func (b *builder) assistant(key, model string, parts []sa.Part, at Position) {
	if len(parts) == 0 {
		return
	}
	for _, p := range parts {
		if p.Type == sa.PartToolCall {
			b.names[p.CallID] = p.Name
		}
	}
	if model != "" {
		b.model = model
	}
	if n := len(b.msgs); n > 0 && key != "" && b.keys[n-1] == key && b.msgs[n-1].Role == sa.RoleAssistant && !b.msgs[n-1].Summary {
		b.msgs[n-1].Parts = append(b.msgs[n-1].Parts, parts...)
		b.marks[n-1] = at
		return
	}
	b.push(sa.Message{Role: sa.RoleAssistant, Parts: parts, Model: model}, key, at)
}

// result adds one tool result; results that follow each other share one
// tool message, as the agent loop writes them.
func (b *builder) result(callID, output string, isError bool, at Position) {
	name, called := b.names[callID]
	if !called || b.answered[callID] {
		return // a result must answer a call made before it, once
	}
	b.answered[callID] = true
	p := sa.Part{Type: sa.PartToolResult, CallID: callID, Name: name, Output: output, IsError: isError}
	if m := b.last(); m != nil && m.Role == sa.RoleTool {
		m.Parts = append(m.Parts, p)
		b.marks[len(b.marks)-1] = at
		return
	}
	b.push(sa.Message{Role: sa.RoleTool, Parts: []sa.Part{p}}, "", at)
}

// user adds a user message of text.
func (b *builder) user(text string, at Position) {
	if strings.TrimSpace(text) == "" {
		return
	}
	if b.title == "" {
		b.title = titleFrom(text)
	}
	b.push(sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart(text)}}, "", at)
}

// compaction adds the marker that the conversation before was compacted.
func (b *builder) compaction(at Position) {
	if m := b.last(); m != nil && m.Role == sa.RoleUser && len(m.Parts) == 1 && m.Parts[0].Type == sa.PartCompaction {
		b.marks[len(b.marks)-1] = at
		return
	}
	b.push(sa.Message{Role: sa.RoleUser, Parts: []sa.Part{{Type: sa.PartCompaction}}}, "", at)
}

// summary adds a compaction's summary, after its marker (added here when
// the host wrote none).
func (b *builder) summary(text string, at Position) {
	if strings.TrimSpace(text) == "" {
		return
	}
	if m := b.last(); m == nil || m.Role != sa.RoleUser || len(m.Parts) != 1 || m.Parts[0].Type != sa.PartCompaction {
		b.compaction(at)
	}
	b.push(sa.Message{Role: sa.RoleAssistant, Summary: true, Parts: []sa.Part{sa.TextPart(text)}}, "", at)
}

// finish splits the messages into the complete ones and the pending tail,
// and returns them with the position after the complete ones.
func (b *builder) finish(start Position, mal Malformed) Result {
	k := b.settled()
	if b.openFrom >= 0 && b.openFrom < k {
		k = b.openFrom
	}
	r := Result{Messages: b.msgs[:k:k], Pending: b.msgs[k:], Next: start, Title: b.title, Model: b.model, Malformed: mal}
	if k > 0 {
		r.Next = b.marks[k-1]
	}
	if len(r.Pending) == 0 {
		r.Pending = nil
	}
	return r
}

// settled returns how many leading messages are complete. Only the tail can
// still grow: a reply with tool calls whose results are not all written, a
// reply of nothing but reasoning so far, or a compaction marker still
// waiting for its summary.
func (b *builder) settled() int {
	n := len(b.msgs)
	if n == 0 {
		return 0
	}
	lastMsg := b.msgs[n-1]
	switch lastMsg.Role {
	case sa.RoleUser:
		if len(lastMsg.Parts) == 1 && lastMsg.Parts[0].Type == sa.PartCompaction {
			return n - 1
		}
		return n
	case sa.RoleAssistant:
		if lastMsg.Summary {
			return n
		}
		onlyReasoning := true
		for _, p := range lastMsg.Parts {
			if p.Type == sa.PartToolCall {
				return n - 1
			}
			if p.Type != sa.PartReasoning {
				onlyReasoning = false
			}
		}
		if onlyReasoning {
			return n - 1
		}
		return n
	case sa.RoleTool:
		// Find the reply the results answer and check that every call has
		// its result.
		i := n - 1
		answered := map[string]bool{}
		for ; i >= 0 && b.msgs[i].Role == sa.RoleTool; i-- {
			for _, p := range b.msgs[i].Parts {
				answered[p.CallID] = true
			}
		}
		if i < 0 || b.msgs[i].Role != sa.RoleAssistant {
			return n
		}
		for _, p := range b.msgs[i].Parts {
			if p.Type == sa.PartToolCall && !answered[p.CallID] {
				return i
			}
		}
		return n
	}
	return n
}

// toolInput returns a tool call's arguments as a JSON object: hosts that
// keep them as a string of JSON are decoded, anything else is wrapped.
func toolInput(raw json.RawMessage) json.RawMessage {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return wrapInput(string(raw))
		}
		return stringInput(s)
	}
	if !json.Valid(raw) {
		return wrapInput(string(raw))
	}
	return raw
}

// stringInput decodes arguments kept as a string holding JSON; other text
// is wrapped as {"input": text}.
func stringInput(s string) json.RawMessage {
	t := strings.TrimSpace(s)
	if t == "" {
		return nil
	}
	if strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	return wrapInput(s)
}

func wrapInput(s string) json.RawMessage {
	out, _ := json.Marshal(map[string]string{"input": s})
	return out
}
