package cli_test

import (
	"strings"
	"testing"
)

// TestChatIsTheDefaultCommand: superagents alone opens the chat; on piped
// input it prints the plain transcript.
func TestChatIsTheDefaultCommand(t *testing.T) {
	h := newHarness(t)
	r := h.runIn("What is 2+2?\n/fork\nWhat was my first question?\n")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"─ agent [", "> What is 2+2?\n\n2+2 equals 4.\n\n", "Forked from ", `Your first question was "What is 2+2?"`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	r = h.runIn("/agents\n", "chat", "--continue")
	if r.code != 0 || strings.Count(r.stdout, "agent [") != 3 || !strings.Contains(r.stdout, "← current") {
		t.Fatalf("chat --continue: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := h.run("--help"); r.code != 0 || !strings.Contains(r.stdout, "Without a command, superagents opens a chat") {
		t.Fatalf("--help: %d %q", r.code, r.stdout)
	}
}

func TestChatUsageErrors(t *testing.T) {
	h := newHarness(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--session", "abcd", "--continue"}, "--session and --continue together"},
		{[]string{"chat", "--continue", "--agent", "general"}, "--agent starts a new chat"},
		{[]string{"chat", "--continue"}, "there is no session yet"},
		{[]string{"stray"}, "unknown command"},
	} {
		r := h.run(tt.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("superagents %s: exit %d, stderr %q; want 2 and %q", strings.Join(tt.args, " "), r.code, r.stderr, tt.want)
		}
	}
}
