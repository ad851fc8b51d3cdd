package offline

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/llm/internal/wire"
)

// recallQuestion recognises "What was my first question?", "What was the
// first question?", "... my last/previous question?".
var recallQuestion = regexp.MustCompile(`(?i)^\s*what\s+(?:was|is)\s+(?:my|the)\s+(first|last|previous)\s+question\s*\??\s*$`)

// digestLabel starts a user line in the digest of a parent's history that
// a forked child receives as its first message.
const digestLabel = "User: "

// recall answers a question about the earlier questions. It reports false
// when text is not such a question.
func recall(text string, history []superagents.Message) (string, bool) {
	m := recallQuestion.FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	which := strings.ToLower(m[1])
	qs := questions(history)
	if len(qs) == 0 {
		return "You have not asked anything before this question.", true
	}
	q := qs[len(qs)-1]
	if which == "first" {
		q = qs[0]
	}
	return fmt.Sprintf("Your %s question was \"%s\"", which, q), true
}

// questions returns what the user asked before the latest user message,
// oldest first. A digest of a parent's history at the start of the
// conversation (messages before the first assistant answer with lines
// that start with "User: ") contributes those lines; other user messages
// contribute their text. Notifications, commands and fork records are not
// questions.
func questions(history []superagents.Message) []string {
	last := -1
	for i, m := range history {
		if m.Role == superagents.RoleUser && ordinary(m) {
			last = i
		}
	}
	var qs []string
	answered := false
	for i, m := range history {
		if i >= last {
			break
		}
		answered = answered || m.Role == superagents.RoleAssistant
		if m.Role != superagents.RoleUser && m.Role != superagents.RoleSystem || !ordinary(m) {
			continue
		}
		text := strings.TrimSpace(wire.Text(m))
		if !answered {
			if lines := digestQuestions(text); len(lines) > 0 {
				qs = append(qs, lines...)
				continue
			}
		}
		if m.Role == superagents.RoleUser && text != "" {
			qs = append(qs, text)
		}
	}
	return qs
}

// digestQuestions returns the user lines of a digest.
func digestQuestions(text string) []string {
	var qs []string
	for line := range strings.Lines(text) {
		if q, ok := strings.CutPrefix(line, digestLabel); ok {
			if q = strings.TrimSpace(q); q != "" {
				qs = append(qs, q)
			}
		}
	}
	return qs
}

// ordinary reports whether a message is a conversational turn.
func ordinary(m superagents.Message) bool {
	return m.Kind == "" || m.Kind == superagents.KindMessage
}
