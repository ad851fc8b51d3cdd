package repl

import (
	"context"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
)

// TestCompactCommand (COMPACT-1): /compact stores a compaction (the marker,
// then the summary) in the background; the agent's next turn starts from
// the summary.
func TestCompactCommand(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	e := collect(c)
	ask(t, c, e, "What is 2+2?")
	r := mustSubmit(t, c, "/compact keep the arithmetic")
	if got := blockText(r); !strings.Contains(got, "Compacting") || r.Turn() == nil {
		t.Fatalf("/compact said %q", got)
	}
	<-r.Turn().Start()
	evs := e.until(t, func(ev Event) bool { return ev.Kind == TaskOutput })
	if out := evs[len(evs)-1]; out.Err != nil || !strings.Contains(out.Text, "Compacted 2 messages") {
		t.Fatalf("the compaction ended with %+v", out)
	}
	hist, err := eng.Store.History(context.Background(), c.Current().ID)
	if err != nil {
		t.Fatal(err)
	}
	n := len(hist)
	if n < 4 || hist[n-2].Parts[0].Type != sa.PartCompaction || hist[n-2].Parts[0].Text != "keep the arithmetic" || !hist[n-1].Summary {
		t.Fatalf("history ends with %+v, %+v; want the marker with the instructions, then the summary", hist[n-2], hist[n-1])
	}
	if got := ask(t, c, e, "What is 3+3?"); !strings.Contains(got, "6") {
		t.Fatalf("the turn after the compaction answered %q", got)
	}
}
