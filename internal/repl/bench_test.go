package repl

import (
	"context"
	"io"
	"strings"
	"testing"
)

// BenchmarkAgentsCommand: /agents on a tree of 100 agents (a chain of 10
// forks, each with 9 more children) reads the tree from the store.
func BenchmarkAgentsCommand(b *testing.B) {
	c := openChat(b, testEngine(b, b.TempDir()), "")
	for range 10 {
		for range 9 {
			mustSubmit(b, c, "/fork")
			mustSubmit(b, c, "/parent")
		}
		mustSubmit(b, c, "/fork")
	}
	b.ResetTimer()
	for b.Loop() {
		if r := c.Submit(context.Background(), "/agents"); r.Failed {
			b.Fatal(blockText(r))
		}
	}
}

// BenchmarkPlainExchange: one message and its answer through the piped
// chat, offline model included. The session grows by one exchange per
// iteration, as a real chat does.
func BenchmarkPlainExchange(b *testing.B) {
	c := openChat(b, testEngine(b, b.TempDir()), "")
	for b.Loop() {
		if err := RunPlain(context.Background(), c, strings.NewReader("What is 2+2?\n"), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderAnswer: rendering a 2 KB Markdown answer for the
// terminal, as it is done once per answer.
func BenchmarkRenderAnswer(b *testing.B) {
	answer := strings.Repeat("## A heading\n\nSome *emphasis*, `code` and a [link](https://example.com).\n\n- one\n- two\n\n```go\nfunc main() {}\n```\n\n", 14)
	md := newMarkdown()
	b.SetBytes(int64(len(answer)))
	for b.Loop() {
		if md.render(answer) == answer {
			b.Fatal("not rendered")
		}
	}
}

// BenchmarkTaskRoundTrip: /task launches a background task (offline
// model) for the agent in view; the chat shows its notification, wakes
// the agent and shows its answer. The agent's session grows by a task's
// messages each iteration.
func BenchmarkTaskRoundTrip(b *testing.B) {
	c := openChat(b, testEngine(b, b.TempDir()), "")
	e := collect(c)
	for b.Loop() {
		if r := c.Submit(context.Background(), "/task general What is 1+1?"); r.Failed {
			b.Fatal(blockText(r))
		}
		e.until(b, func(ev Event) bool { return ev.Kind == TurnEnd && ev.Wake })
	}
}
