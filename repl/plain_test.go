package repl

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/superagents/superagents/internal/golden"
	"github.com/superagents/superagents/internal/termtest"
)

// runPlain runs a piped chat and returns its transcript.
func runPlain(t *testing.T, c *Chat, input string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := RunPlain(context.Background(), c, strings.NewReader(input), &out)
	return out.String(), err
}

func TestPlainSeed004(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	out, err := runPlain(t, openChat(t, eng, ""), termtest.Seed004Script)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"> What is 2+2?\n\n2+2 equals 4.\n\n",
		"> What is 3+3?\n\n3+3 equals 6.\n\n",
		"> /fork\n\n─",
		"> What was my first question?\n\nYour first question was \"What is 2+2?\"\n\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("transcript lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, `Your first question was "What is 2+2?"`); n != 2 {
		t.Errorf("the child and the grandchild should both recall Q1; %d did:\n%s", n, out)
	}
	golden.Check(t, "seed004.golden", []byte(termtest.NormalizeIDs(out)))
}

// TestPlainRestart: a new chat on the latest session restores the tree and
// the history of every agent.
func TestPlainRestart(t *testing.T) {
	dataDir := t.TempDir()
	eng := testEngine(t, dataDir)
	first := openChat(t, eng, "")
	if _, err := runPlain(t, first, termtest.Seed004Script); err != nil {
		t.Fatal(err)
	}
	before := blockText(first.Submit(context.Background(), "/agents"))

	latest, err := LatestSession(context.Background(), eng.Store)
	if err != nil {
		t.Fatal(err)
	}
	if latest.ID != first.Current().ID {
		t.Fatalf("latest session = %s, want the grandchild %s the chat ended on", latest.ID, first.Current().ID)
	}
	second := openChat(t, testEngine(t, dataDir), latest.ID)
	out, err := runPlain(t, second, "/agents\nWhat was my first question?\n/parent\nWhat was my last question?\n")
	if err != nil {
		t.Fatal(err)
	}
	if after := blockText(second.Submit(context.Background(), "/switch "+latest.ID)); !strings.Contains(after, "header") {
		t.Fatalf("switch back: %s", after)
	}
	if got := blockText(second.Submit(context.Background(), "/agents")); got != before {
		t.Errorf("tree after the restart:\n%s\nwant\n%s", got, before)
	}
	golden.Check(t, "restart.golden", []byte(termtest.NormalizeIDs(out)))
}

func TestPlainFailuresSetTheResult(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	out, err := runPlain(t, openChat(t, eng, ""), "/bogus\n\nWhat is 1+1?\n/kill\n")
	if err == nil || !strings.Contains(err.Error(), "2 lines of the chat failed") {
		t.Fatalf("err = %v, want 2 failed lines", err)
	}
	for _, want := range []string{"> /bogus\n\nerror: unknown command /bogus", "1+1 equals 2.", "error: /kill needs an argument"} {
		if !strings.Contains(out, want) {
			t.Errorf("transcript lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("piped output has escape codes:\n%q", out)
	}
}

func TestPlainExitStopsReading(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	out, err := runPlain(t, openChat(t, eng, ""), "What is 1+1?\n/exit\nWhat is 2+2?\n")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "2+2") {
		t.Fatalf("a line after /exit was read:\n%s", out)
	}
}

func TestPlainInterrupted(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() { done <- RunPlain(ctx, c, r, &out) }()
	w.Write([]byte("What is 1+1?\n"))
	cancel()
	if err := <-done; !errors.Is(err, ErrInterrupted) {
		t.Fatalf("RunPlain after cancel = %v, want ErrInterrupted", err)
	}
	w.Close()
}
