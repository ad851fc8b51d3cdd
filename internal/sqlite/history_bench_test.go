package sqlite_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/sqlite"
)

// fillTools appends rounds of a user request, an assistant message with a
// tool call and its result of about 4 KB (lines of code and log text):
// 3 messages per round, 22 MB for 5,000 rounds.
func fillTools(b *testing.B, st *sqlite.Store, id string, rounds int) {
	b.Helper()
	var line strings.Builder
	for i := 0; line.Len() < 4000; i++ {
		fmt.Fprintf(&line, "\tif err := step(%d); err != nil { return fmt.Errorf(\"step %%d: %%w\", %d, err) } // \"quoted\"\n", i, i)
	}
	output := line.String()
	const batch = 500
	for done := 0; done < rounds; done += batch {
		var msgs []sa.Message
		for i := done; i < min(done+batch, rounds); i++ {
			call := fmt.Sprintf("call_%d", i)
			msgs = append(msgs,
				sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart(fmt.Sprintf("Look at file %d and tell me what fails.", i))}},
				sa.Message{Role: sa.RoleAssistant, Parts: []sa.Part{
					sa.TextPart("Let me read it."),
					{Type: sa.PartToolCall, CallID: call, Name: "read", Input: json.RawMessage(fmt.Sprintf(`{"path":"src/file%d.go"}`, i))},
				}},
				sa.Message{Role: sa.RoleTool, Parts: []sa.Part{{Type: sa.PartToolResult, CallID: call, Name: "read", Output: output}}},
			)
		}
		if _, err := st.Append(context.Background(), id, msgs...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHistoryTools reads the history of a session of 15,000
// messages (5,000 tool calls with 4 KB results) and writes it as JSONL,
// as `superagents history ID --json` does.
func BenchmarkHistoryTools(b *testing.B) {
	ctx := context.Background()
	st := openBench(b)
	s, err := st.CreateSession(ctx, sa.NewSession{})
	if err != nil {
		b.Fatal(err)
	}
	fillTools(b, st.(*sqlite.Store), s.ID, 5000)
	b.Run("read", func(b *testing.B) {
		for b.Loop() {
			h, err := st.History(ctx, s.ID)
			if err != nil || len(h) != 15000 {
				b.Fatal(len(h), err)
			}
		}
	})
	b.Run("read+jsonl", func(b *testing.B) {
		for b.Loop() {
			h, err := st.History(ctx, s.ID)
			if err != nil {
				b.Fatal(err)
			}
			w := bufio.NewWriter(io.Discard)
			enc := json.NewEncoder(w)
			enc.SetEscapeHTML(false)
			for _, m := range h {
				if err := enc.Encode(m); err != nil {
					b.Fatal(err)
				}
			}
			w.Flush()
		}
	})
}
