package forkctx_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/forkctx"
	"github.com/superagents/superagents/internal/tokens"
)

// The tokenizer takes a fraction of a second to build: tests share one.
var sharedCounter = sync.OnceValues(func() (*tokens.Counter, error) {
	return tokens.NewCounter(tokens.DefaultEncoding)
})

// fataler is what the helpers need of a *testing.T, *testing.B or *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// newPipeline builds a pipeline with cfg and the shared tokenizer.
func newPipeline(t fataler, cfg forkctx.Config) *forkctx.Pipeline {
	t.Helper()
	counter, err := sharedCounter()
	if err != nil {
		t.Fatalf("tokenizer: %v", err)
	}
	p, err := forkctx.NewWithCounter(cfg, counter)
	if err != nil {
		t.Fatalf("NewWithCounter: %v", err)
	}
	return p
}

// build runs the pipeline and checks the invariants every result must hold.
func build(t testing.TB, cfg forkctx.Config, history []sa.Message) forkctx.Result {
	t.Helper()
	res, err := newPipeline(t, cfg).Build(history)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	checkInvariants(t, cfg, res)
	return res
}

func checkInvariants(t testing.TB, cfg forkctx.Config, res forkctx.Result) {
	t.Helper()
	st := res.Stats
	for name, s := range map[string]string{"digest": res.Digest, "preamble": res.Preamble, "text": res.Text()} {
		if !utf8.ValidString(s) {
			t.Fatalf("%s is not valid UTF-8", name)
		}
	}
	parts := res.Parts()
	if strings.Join(parts, "\n\n") != res.Text() || len(parts) != st.StableChunks+1 || slices.Contains(parts, "") {
		t.Fatalf("%d parts (an empty one: %v) for %d stable chunks, or not the text joined", len(parts), slices.Contains(parts, ""), st.StableChunks)
	}
	if got := utf8.RuneCountInString(res.Digest); got != st.FinalChars {
		t.Fatalf("FinalChars = %d, digest has %d characters", st.FinalChars, got)
	}
	if st.FormattedChars > cfg.MaxChars && st.FinalChars > cfg.Target() {
		t.Fatalf("formatted %d > max %d but final %d > target %d", st.FormattedChars, cfg.MaxChars, st.FinalChars, cfg.TargetChars)
	}
	if st.FormattedChars <= cfg.MaxChars && st.Removed.ForChars > 0 {
		t.Fatalf("formatted %d <= max %d but %d messages removed for characters", st.FormattedChars, cfg.MaxChars, st.Removed.ForChars)
	}
	if st.FinalChars > max(cfg.MaxChars, st.FormattedChars) {
		t.Fatalf("final %d grew past formatted %d", st.FinalChars, st.FormattedChars)
	}
	if st.FinalTokens > cfg.MaxTokens {
		t.Fatalf("FinalTokens = %d > MaxTokens %d", st.FinalTokens, cfg.MaxTokens)
	}
	if st.FinalMessages+st.Removed.Messages+st.DiscardedMessages != st.OriginalMessages {
		t.Fatalf("messages do not add up: final %d + removed %d + discarded %d != original %d",
			st.FinalMessages, st.Removed.Messages, st.DiscardedMessages, st.OriginalMessages)
	}
}

// Message builders.

func user(text string) sa.Message {
	return sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart(text)}}
}

func agent(text string) sa.Message {
	return sa.Message{Role: sa.RoleAssistant, Parts: []sa.Part{sa.TextPart(text)}}
}

func call(id, name, input string) sa.Part {
	return sa.Part{Type: sa.PartToolCall, CallID: id, Name: name, Input: json.RawMessage(input)}
}

func result(id, name, output string) sa.Part {
	return sa.Part{Type: sa.PartToolResult, CallID: id, Name: name, Output: output}
}

// agentCalls is an assistant message that makes calls.
func agentCalls(text string, calls ...sa.Part) sa.Message {
	m := sa.Message{Role: sa.RoleAssistant}
	if text != "" {
		m.Parts = append(m.Parts, sa.TextPart(text))
	}
	m.Parts = append(m.Parts, calls...)
	return m
}

// toolMsg is the tool message that carries results.
func toolMsg(results ...sa.Part) sa.Message {
	return sa.Message{Role: sa.RoleTool, Parts: results}
}

// compactionMarker is the user message that asks for a compaction.
func compactionMarker() sa.Message {
	return sa.Message{Role: sa.RoleUser, Parts: []sa.Part{{Type: sa.PartCompaction}}}
}

// summary is the assistant message that completes a compaction.
func summary(text string) sa.Message {
	m := agent(text)
	m.Summary = true
	return m
}

// toolRound is a call and its result, as two messages.
func toolRound(id, name, input, output string) []sa.Message {
	return []sa.Message{agentCalls("", call(id, name, input)), toolMsg(result(id, name, output))}
}

// withIDs numbers messages 1, 2, 3... as a store would.
func withIDs(msgs []sa.Message) []sa.Message {
	for i := range msgs {
		msgs[i].ID = int64(i + 1)
	}
	return msgs
}

// concat joins message lists.
func concat(lists ...[]sa.Message) []sa.Message {
	var out []sa.Message
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// numberedOutput is n characters that say where they are, so a test can
// tell which part of a cut output survived.
func numberedOutput(tag string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%s-%06d ", tag, i)
	}
	return b.String()[:n]
}
