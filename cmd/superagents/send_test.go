package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/superagents/superagents/internal/llm/llmtest"
)

// askingModel is a fake Anthropic server: the task prompted "pick a
// colour" asks which colour, then says what it was answered; anything
// else (the chat's agent, woken) is noted.
func askingModel(t *testing.T) *llmtest.Server {
	t.Helper()
	srv := llmtest.NewAnthropic(t)
	var asked atomic.Int32
	srv.Handle(func(req llmtest.Request) llmtest.Reply {
		if promptOf(req) != "pick a colour" {
			return llmtest.Reply{Text: "Noted."}
		}
		if asked.Add(1) == 1 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "superagents_ask", Input: `{"question": "Which colour?", "choices": ["red", "blue"]}`}}}
		}
		if bytes.Contains(req.Body, []byte("The user answered: blue")) {
			return llmtest.Reply{Text: "Blue it is."}
		}
		return llmtest.Reply{Text: "No answer came."}
	})
	return srv
}

// promptOf is the first user text of an Anthropic request.
func promptOf(req llmtest.Request) string {
	var body struct {
		Messages []struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(req.Body, &body) != nil || len(body.Messages) == 0 || len(body.Messages[0].Content) == 0 {
		return ""
	}
	return body.Messages[0].Content[0].Text
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
		if promptOf(req) == "pick a colour" && bytes.Contains(req.Body, []byte("The user answered: blue")) {
			return true
		}
	}
	return false
}
