package transcripts_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/transcripts"
)

// shape is a message's role and the types of its parts.
func shape(m sa.Message) string {
	types := make([]string, len(m.Parts))
	for i, p := range m.Parts {
		types[i] = string(p.Type)
	}
	return fmt.Sprintf("%s [%s]", m.Role, strings.Join(types, " "))
}

// Inspect names a Codex rollout; Read turns it into messages. A second
// read from where the first ended finds nothing new until Codex writes
// more.
func ExampleRead() {
	ctx := context.Background()
	t, err := transcripts.Inspect(transcripts.Codex, "testdata/codex.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(t.Host.Label(), t.SessionID, t.Dir)

	res, err := transcripts.Read(ctx, t, transcripts.Position{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q, %s, %s\n", res.Title, res.Model, res.Malformed)
	for _, m := range res.Messages {
		fmt.Println(shape(m))
	}

	again, err := transcripts.Read(ctx, t, res.Next)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(again.All()), "new messages")
	// Output:
	// Codex 019a2d7a-41c4-78b1-b7cc-a45d62a89cd5 /home/dev/projects/heron
	// "Why does `make build` fail?", gpt-5-codex, skipped 1 malformed line (line 15)
	// user [text]
	// assistant [reasoning text tool_call tool_call]
	// tool [tool_result tool_result]
	// assistant [text]
	// user [compaction]
	// assistant [text]
	// user [text]
	// assistant [tool_call]
	// tool [tool_result]
	// assistant [tool_call]
	// tool [tool_result]
	// assistant [text]
	// 0 new messages
}

// A reply whose parallel tool calls are not all answered yet may still
// grow: it is returned as Pending, and the next read returns it again.
func ExampleResult_All() {
	t, err := transcripts.Inspect(transcripts.ClaudeCode, "testdata/claudecode-parallel.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	res, err := transcripts.Read(ctx, t, transcripts.Position{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(t.SessionID, len(res.Messages), "complete,", len(res.Pending), "pending")
	for _, m := range res.Pending {
		fmt.Println(shape(m))
	}
	fmt.Println(len(res.All()), "in all")

	again, err := transcripts.Read(ctx, t, res.Next)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(again.Messages), "complete,", len(again.Pending), "pending")
	// Output:
	// claudecode-parallel 5 complete, 2 pending
	// assistant [tool_call tool_call]
	// tool [tool_result]
	// 7 in all
	// 0 complete, 2 pending
}

// ParseHost checks a host name as a person gives it.
func ExampleParseHost() {
	for _, name := range []string{"claude-code", "opencode", "cursor"} {
		h, err := transcripts.ParseHost(name)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(h, "is", h.Label())
	}
	// Output:
	// claude-code is Claude Code
	// opencode is OpenCode
	// invalid input: unknown host "cursor" (want claude-code, codex or opencode)
}
