package forkctx_test

import (
	"encoding/json"
	"fmt"
	"log"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/forkctx"
)

func Example() {
	// Build the pipeline once: it loads the tokenizer.
	p, err := forkctx.New(forkctx.DefaultConfig())
	if err != nil {
		log.Fatal(err)
	}
	history := []sa.Message{
		{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("Which Go version does go.mod ask for?")}},
		{Role: sa.RoleAssistant, Parts: []sa.Part{
			{Type: sa.PartReasoning, Text: "Read go.mod."},
			{Type: sa.PartToolCall, CallID: "c1", Name: "read", Input: json.RawMessage(`{"path": "go.mod"}`)},
		}},
		{Role: sa.RoleTool, Parts: []sa.Part{
			{Type: sa.PartToolResult, CallID: "c1", Name: "read", Output: "module example.com/m\n\ngo 1.26.0"},
		}},
		{Role: sa.RoleAssistant, Parts: []sa.Part{sa.TextPart("Go 1.26.0.")}},
	}
	res, err := p.Build(history)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Digest)
	fmt.Println(res.Stats.FinalMessages, res.Stats.Tools.Tiers, res.Stats.ReasoningOmitted)
	// Output:
	// User: Which Go version does go.mod ask for?
	//
	// Agent: [Tool: read] {"path":"go.mod"}
	// [Result]
	// module example.com/m
	//
	// go 1.26.0
	//
	// Agent: Go 1.26.0.
	// 4 [1 0 0] 1
}
