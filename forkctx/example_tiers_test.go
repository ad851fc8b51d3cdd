package forkctx_test

import (
	"encoding/json"
	"fmt"
	"log"
	"strings"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/forkctx"
)

// Tool results are kept whole only while they are recent: older ones are
// cut, the oldest the most, so that a long parent session leaves room for
// what matters now.
func ExamplePipeline_Build() {
	cfg := forkctx.DefaultConfig()
	cfg.Tier1Results, cfg.Tier2Results = 1, 1 // the newest result whole, the next one cut a little
	cfg.Tier2Chars, cfg.Tier3Chars = 36, 20
	p, err := forkctx.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	var history []sa.Message
	for i, file := range []string{"a.go", "b.go", "c.go"} {
		id := fmt.Sprintf("c%d", i+1)
		input, _ := json.Marshal(map[string]string{"path": file})
		body := strings.TrimSpace(strings.Repeat(fmt.Sprintf("// line of %s\n", file), 4))
		history = append(history,
			sa.Message{Role: sa.RoleAssistant, Parts: []sa.Part{{Type: sa.PartToolCall, CallID: id, Name: "read", Input: input}}},
			sa.Message{Role: sa.RoleTool, Parts: []sa.Part{{Type: sa.PartToolResult, CallID: id, Name: "read", Output: body}}},
		)
	}
	res, err := p.Build(history)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Digest)
	fmt.Println(res.Stats.Tools.Tiers, res.Stats.Tools.Truncated)
	// Output:
	// Agent: [Tool: read] {"path":"a.go"}
	// [Result]
	// // line of a.go
	// // l
	// [... truncated: kept the first 20 of 63 characters]
	//
	// Agent: [Tool: read] {"path":"b.go"}
	// [Result]
	// // line of b.go
	// // line of b.go
	// // l
	// [... truncated: kept the first 36 of 63 characters]
	//
	// Agent: [Tool: read] {"path":"c.go"}
	// [Result]
	// // line of c.go
	// // line of c.go
	// // line of c.go
	// // line of c.go
	// [1 1 1] 2
}

// Validate reports every setting that makes no sense at once.
func ExampleConfig_Validate() {
	cfg := forkctx.DefaultConfig()
	fmt.Println(cfg.Validate())
	cfg.Tier3Chars = 5000
	cfg.HeadRatio = 1.5
	fmt.Println(cfg.Validate())
	// Output:
	// <nil>
	// invalid input: fork context configuration: tier3_chars (5000) is larger than tier2_chars (3000): older results cannot keep more than newer ones
	// head_ratio is 1.5: it must be between 0 and 1, exclusive
}
