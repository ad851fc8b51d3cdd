package main

import (
	"bytes"
	"regexp"
	"testing"
	"time"

	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/stacktest"
)

// askingModel is a fake Anthropic server: the task prompted "pick a
// colour" asks which colour, then says what it was answered; anything
// else (the chat's agent, woken) is noted.
func askingModel(t *testing.T) *llmtest.Server {
	t.Helper()
	srv := llmtest.NewAnthropic(t)
	srv.Handle(stacktest.SteerAndAskModel("", "pick a colour"))
	return srv
}

// TestTerminalTaskQuestion: a task launched from the chat asks a
// question; it shows on the screen with how to answer it, the user types
// /send ID blue, and the task's next model request carries the answer.
func TestTerminalTaskQuestion(t *testing.T) {
	srv := askingModel(t)
	h := newHome(t)
	h.env = append(h.env, "ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+srv.BaseURL(), "SUPERAGENTS_MODEL=anthropic/claude-test")
	term := h.terminal(t)
	term.Wait("the header", func(s string) bool { return len(headers(s)) == 1 })
	term.Type("/task --desc colour general pick a colour")
	screen := term.WaitText(`? Agent "colour" asks: Which colour?`, 1)
	m := regexp.MustCompile(`\(in the chat: /send ([0-9a-z]{6}\.\.\.) <answer>\)`).FindStringSubmatch(screen)
	if m == nil {
		t.Fatalf("the question shows no way to answer it:\n%s", screen)
	}
	term.Type("/send " + m[1] + " blue")
	term.WaitText(`was waiting for an answer to "Which colour?": your answer "blue"`, 1)
	term.WaitText(`✓ Agent "colour" finished in`, 1)
	deadline := time.Now().Add(time.Minute)
	for !answered(srv) {
		if time.Now().After(deadline) {
			t.Fatal("no model request of the task carries the answer")
		}
		time.Sleep(20 * time.Millisecond)
	}
	term.Type("/exit!")
	if code := term.WaitExit(); code != 0 {
		t.Fatalf("exit status %d", code)
	}
}

// answered reports whether a model request of the task carries the
// user's answer.
func answered(srv *llmtest.Server) bool {
	for _, req := range srv.Requests() {
		if req.FirstText() == "pick a colour" && bytes.Contains(req.Body, []byte("The user answered: blue")) {
			return true
		}
	}
	return false
}
