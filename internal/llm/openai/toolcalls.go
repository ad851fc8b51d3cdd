package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/superagents/superagents"
)

// toolCalls accumulates streamed tool call deltas into complete calls.
//
// A delta names its call by index. OpenAI gives each parallel call its own
// index, but Ollama (and others) give every call index 0, so the index
// alone cannot be trusted: a delta whose index belongs to a call with a
// different, non-empty id starts a new call. Deltas without an id continue
// the latest call at their index.
type toolCalls struct {
	calls []*toolCall
	// open maps a delta index to the call it currently continues.
	open map[int64]*toolCall
}

type toolCall struct {
	id, name string
	args     strings.Builder
}

func (a *toolCalls) add(index int64, id, name, args string) {
	c := a.open[index]
	if c == nil || id != "" && c.id != "" && c.id != id {
		c = &toolCall{}
		a.calls = append(a.calls, c)
		if a.open == nil {
			a.open = make(map[int64]*toolCall)
		}
		a.open[index] = c
	}
	if c.id == "" {
		c.id = id
	}
	if c.name == "" {
		c.name = name
	}
	c.args.WriteString(args)
}

// parts returns the calls in the order they began. A call without an id
// (some servers send none) gets a fresh one; empty arguments become {}.
func (a *toolCalls) parts() ([]superagents.Part, error) {
	parts := make([]superagents.Part, 0, len(a.calls))
	for i, c := range a.calls {
		if c.name == "" {
			return nil, fmt.Errorf("the model sent tool call %d without a tool name", i+1)
		}
		id := c.id
		if id == "" {
			id = "call_" + superagents.NewID()
		}
		args := strings.TrimSpace(c.args.String())
		if args == "" {
			args = "{}"
		}
		if !json.Valid([]byte(args)) {
			return nil, fmt.Errorf("the model sent invalid JSON arguments for tool %q (call %s)", c.name, id)
		}
		parts = append(parts, superagents.Part{Type: superagents.PartToolCall, CallID: id, Name: c.name, Input: json.RawMessage(args)})
	}
	return parts, nil
}
