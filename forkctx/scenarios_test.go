package forkctx_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/forkctx"
)

// One test per requirement of the fork pipeline this package carries
// (FORK-PIPE-* and FORK-PREAMBLE-1 in docs/requirements.md). Scenarios
// about launching tasks, rejecting fork with resume and listing belong to
// the task manager and are tested there.

// headOnly and headTail are what a cut result looks like, built here from
// the documented format so the tests do not call the code under test.
func headOnly(out string, keep int) string {
	return out[:keep] + fmt.Sprintf("\n[... truncated: kept the first %d of %d characters]", keep, len(out))
}

func headTail(out string, keep int) string {
	head := keep * 8 / 10
	tail := keep - head
	return out[:head] + fmt.Sprintf("\n[... %d of %d characters cut ...]\n", len(out)-keep, len(out)) + out[len(out)-tail:]
}

// FORK-PIPE-1: the history goes
// through the pipeline and the child gets a preamble, the digest, and the
// truncation metadata (after the digest, so that what later forks share
// comes first).
func TestLaunchForkedBackgroundTask(t *testing.T) {
	h := withIDs(concat(
		[]sa.Message{user("find the flaky test"), agent("Looking.")},
		toolRound("c1", "bash", `{"command":"go test ./..."}`, "ok  \tpkg/a\nFAIL\tpkg/b"),
		[]sa.Message{agent("pkg/b fails.")},
	))
	res := build(t, forkctx.DefaultConfig(), h)
	text := res.Text()
	intro, notes, _ := strings.Cut(res.Preamble, "\n\n")
	if !strings.HasPrefix(text, intro+"\n\n<parent_conversation>\n") || !strings.HasSuffix(text, "</parent_conversation>\n\n"+notes) {
		t.Fatalf("Text() is not the preamble's first paragraph, the digest, then how it was made:\n%s", text)
	}
	if !strings.Contains(text, res.Digest) {
		t.Fatalf("Text() does not contain the digest:\n%s", text)
	}
	for _, want := range []string{"User: find the flaky test", "[Tool: bash] {\"command\":\"go test ./...\"}", "FAIL\tpkg/b", "Agent: pkg/b fails."} {
		if !strings.Contains(res.Digest, want) {
			t.Errorf("digest lacks %q:\n%s", want, res.Digest)
		}
	}
	again := build(t, forkctx.DefaultConfig(), h)
	if again.Text() != text {
		t.Fatal("two builds of the same history differ")
	}
}

// FORK-PIPE-2: compaction boundary detection.
func TestCompactionBoundaryDetection(t *testing.T) {
	h := withIDs(concat(
		[]sa.Message{user("old question"), agent("old answer")},
		toolRound("c1", "read", `{"path":"old.go"}`, "OLD CONTENT"),
		[]sa.Message{compactionMarker(), summary("SUMMARY: we read old.go"), user("new question"), agent("new answer")},
	))
	res := build(t, forkctx.DefaultConfig(), h)
	if !strings.HasPrefix(res.Digest, "Agent: [Summary of the earlier conversation]\nSUMMARY: we read old.go") {
		t.Fatalf("digest does not start with the summary:\n%s", res.Digest)
	}
	for _, gone := range []string{"old question", "old answer", "OLD CONTENT", "old.go\"}"} {
		if strings.Contains(res.Digest, gone) {
			t.Errorf("digest keeps %q from before the boundary", gone)
		}
	}
	if !strings.Contains(res.Digest, "User: new question\n\nAgent: new answer") {
		t.Errorf("digest lacks the messages after the summary:\n%s", res.Digest)
	}
	cs := res.Stats.Compaction
	if !cs.Found || cs.SummaryMessageID != 6 || cs.SummaryIndex != 5 || cs.Boundaries != 1 || cs.Pending {
		t.Errorf("compaction stats = %+v", cs)
	}
	if res.Stats.DiscardedMessages != 5 {
		t.Errorf("DiscardedMessages = %d, want 5", res.Stats.DiscardedMessages)
	}
}

// FORK-PIPE-2: multiple compaction boundaries.
func TestMultipleCompactionBoundaries(t *testing.T) {
	h := withIDs([]sa.Message{
		user("q1"), compactionMarker(), summary("FIRST SUMMARY"),
		user("q2"), agent("a2"), compactionMarker(), summary("SECOND SUMMARY"),
		user("q3"),
	})
	res := build(t, forkctx.DefaultConfig(), h)
	if !strings.Contains(res.Digest, "SECOND SUMMARY") || !strings.Contains(res.Digest, "User: q3") {
		t.Fatalf("digest lacks the latest summary or what follows:\n%s", res.Digest)
	}
	for _, gone := range []string{"FIRST SUMMARY", "q1", "q2", "a2"} {
		if strings.Contains(res.Digest, gone) {
			t.Errorf("digest keeps %q from before the latest boundary", gone)
		}
	}
	if cs := res.Stats.Compaction; cs.Boundaries != 2 || cs.SummaryMessageID != 7 {
		t.Errorf("compaction stats = %+v, want 2 boundaries, summary 7", cs)
	}
}

// FORK-PIPE-2: no compaction boundary.
func TestNoCompactionBoundary(t *testing.T) {
	h := withIDs([]sa.Message{user("q1"), agent("a1"), user("q2"), agent("a2")})
	res := build(t, forkctx.DefaultConfig(), h)
	if want := "User: q1\n\nAgent: a1\n\nUser: q2\n\nAgent: a2"; res.Digest != want {
		t.Fatalf("digest = %q, want %q", res.Digest, want)
	}
	if res.Stats.Compaction.Found || res.Stats.DiscardedMessages != 0 || res.Stats.FinalMessages != 4 {
		t.Errorf("stats = %+v", res.Stats)
	}
}

// FORK-PIPE-2: a marker whose summary has not arrived (a compaction in progress) does not
// count: the previous complete boundary does. An assistant reply without
// the summary flag abandons a marker.
func TestCompactionInProgress(t *testing.T) {
	tests := []struct {
		name        string
		history     []sa.Message
		wantStart   string
		wantPending bool
		wantFound   bool
	}{
		{
			name:        "pending marker falls back to the previous boundary",
			history:     []sa.Message{user("q1"), compactionMarker(), summary("S1"), user("q2"), compactionMarker()},
			wantStart:   "Agent: [Summary of the earlier conversation]\nS1",
			wantPending: true, wantFound: true,
		},
		{
			name:        "pending marker and no earlier boundary keeps everything",
			history:     []sa.Message{user("q1"), agent("a1"), compactionMarker()},
			wantStart:   "User: q1",
			wantPending: true,
		},
		{
			name:      "a reply without the summary flag is no boundary",
			history:   []sa.Message{user("q1"), compactionMarker(), agent("not a summary"), user("q2")},
			wantStart: "User: q1",
		},
		{
			name:      "a summary without a marker is no boundary",
			history:   []sa.Message{user("q1"), summary("orphan summary"), user("q2")},
			wantStart: "User: q1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := build(t, forkctx.DefaultConfig(), withIDs(tt.history))
			if !strings.HasPrefix(res.Digest, tt.wantStart) {
				t.Fatalf("digest starts %q, want %q", res.Digest, tt.wantStart)
			}
			cs := res.Stats.Compaction
			if cs.Pending != tt.wantPending || cs.Found != tt.wantFound {
				t.Errorf("compaction stats = %+v, want pending %v found %v", cs, tt.wantPending, tt.wantFound)
			}
		})
	}
}

// FORK-PIPE-3: graduated 3-tier tool truncation.
func TestGraduated3TierToolTruncation(t *testing.T) {
	const results = 20
	outputs := make([]string, results)
	var h []sa.Message
	for i := range results {
		outputs[i] = numberedOutput(fmt.Sprintf("r%02d", i), 4000)
		h = append(h, toolRound(fmt.Sprintf("c%d", i), "read", fmt.Sprintf(`{"path":"f%d.go"}`, i), outputs[i])...)
	}
	res := build(t, forkctx.DefaultConfig(), withIDs(h))
	for i, out := range outputs {
		newer := results - 1 - i
		var want string
		var keep int
		switch {
		case newer < 5:
			want, keep = out, len(out)
		case newer < 15:
			want, keep = headOnly(out, 3000), 3000
		default:
			want, keep = headOnly(out, 500), 500
		}
		if !strings.Contains(res.Digest, "[Result]\n"+want) {
			t.Errorf("result %d (%d newer) is not kept to %d characters", i, newer, keep)
		}
		if keep < len(out) && strings.Contains(res.Digest, out[:keep+1]) {
			t.Errorf("result %d keeps more than %d characters", i, keep)
		}
	}
	ts := res.Stats.Tools
	if ts.Tiers != [3]int{5, 10, 5} || ts.Truncated != 15 || ts.TruncatedByTier != [3]int{0, 10, 5} || ts.HeadTail != 0 {
		t.Errorf("tool stats = %+v", ts)
	}
}

// FORK-PIPE-4: smart truncation method selection.
func TestSmartTruncationMethodSelection(t *testing.T) {
	plain := numberedOutput("out", 5000)
	withPattern := func(p string) string { return plain[:2000] + p + plain[2000+len(p):] }
	tests := []struct {
		name, tool, output string
		isError            bool
		wantHeadTail       bool
	}{
		{"bash tool", "bash", plain, false, true},
		{"pty tool", "pty_spawn", plain, false, true},
		{"exec tool", "remote_exec", plain, false, true},
		{"tool name in another case", "Bash", plain, false, true},
		{"error", "read", withPattern("error"), false, true},
		{"Error", "read", withPattern("Error"), false, true},
		{"ERROR", "read", withPattern("ERROR"), false, true},
		{"failed", "read", withPattern("failed"), false, true},
		{"FAILED", "read", withPattern("FAILED"), false, true},
		{"exception", "read", withPattern("exception"), false, true},
		{"Exception", "read", withPattern("Exception"), false, true},
		{"traceback", "read", withPattern("traceback"), false, true},
		{"Traceback", "read", withPattern("Traceback"), false, true},
		{"result flagged as an error", "read", plain, true, true},
		{"neither", "read", plain, false, false},
		{"pattern in another case is not one", "read", withPattern("FaIlEd"), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The result under test is the oldest of 16, so in tier 3 (500).
			r := result("target", tt.tool, tt.output)
			r.IsError = tt.isError
			h := []sa.Message{agentCalls("", call("target", tt.tool, `{}`)), toolMsg(r)}
			for i := range 15 {
				h = append(h, toolRound(fmt.Sprintf("c%d", i), "read", `{}`, "short")...)
			}
			res := build(t, forkctx.DefaultConfig(), withIDs(h))
			want := headOnly(tt.output, 500)
			if tt.wantHeadTail {
				want = headTail(tt.output, 500)
			}
			if !strings.Contains(res.Digest, want) {
				t.Fatalf("digest lacks the expected cut (head+tail %v):\n%s", tt.wantHeadTail, res.Digest[:min(len(res.Digest), 2000)])
			}
			if got := res.Stats.Tools.HeadTail; got != map[bool]int{true: 1, false: 0}[tt.wantHeadTail] {
				t.Errorf("HeadTail = %d", got)
			}
		})
	}
}

// FORK-PIPE-5: tool parameter truncation per tier (and the first rule's
// 200 characters, which is tier 2 here).
func TestToolParameterTruncationPerTier(t *testing.T) {
	const results = 16
	inputs := make([]string, results)
	var h []sa.Message
	for i := range results {
		inputs[i] = fmt.Sprintf(`{"path":"p%02d","content":%q}`, i, numberedOutput(fmt.Sprintf("x%02d", i), 1000))
		h = append(h, toolRound(fmt.Sprintf("c%d", i), "write", inputs[i], "done")...)
	}
	res := build(t, forkctx.DefaultConfig(), withIDs(h))
	for i, in := range inputs {
		newer := results - 1 - i
		limit := map[bool]int{true: 500, false: 200}[newer < 5]
		if newer >= 15 {
			limit = 100
		}
		if want := "[Tool: write] " + in[:limit] + "...\n[Result]"; !strings.Contains(res.Digest, want) {
			t.Errorf("call %d (%d newer): parameters not cut to %d characters with an ellipsis", i, newer, limit)
		}
	}
}

// FORK-PIPE-6: already-compacted tool results pass through
// unchanged and take no tier slot.
func TestAlreadyCompactedToolResults(t *testing.T) {
	big := numberedOutput("big", 4000)
	flagged := result("c2", "read", "some content kept after clearing")
	flagged.Compacted = true
	h := concat(
		toolRound("c0", "read", `{}`, big),
		toolRound("c1", "read", `{}`, forkctx.CompactedMarker),
		[]sa.Message{agentCalls("", call("c2", "read", `{}`)), toolMsg(flagged)},
		toolRound("c3", "bash", `{}`, "log line\n"+forkctx.CompactedMarker+"\n"+numberedOutput("tail", 5000)),
	)
	for i := range 4 {
		h = append(h, toolRound(fmt.Sprintf("n%d", i), "read", `{}`, "fresh")...)
	}
	res := build(t, forkctx.DefaultConfig(), withIDs(h))
	for _, want := range []string{"[Result]\n" + forkctx.CompactedMarker + "\n\n", "[Result]\nsome content kept after clearing", "log line\n" + forkctx.CompactedMarker + "\n" + numberedOutput("tail", 5000)} {
		if !strings.Contains(res.Digest, want) {
			t.Errorf("compacted result changed; digest lacks %.60q", want)
		}
	}
	// With the three compacted results taking no slot, the big one is the
	// fifth newest tiered result: tier 1, whole.
	if !strings.Contains(res.Digest, big+"\n\n") {
		t.Errorf("the big result was cut: compacted results took tier slots")
	}
	if ts := res.Stats.Tools; ts.Compacted != 3 || ts.Tiers != [3]int{5, 0, 0} || ts.Truncated != 0 {
		t.Errorf("tool stats = %+v", ts)
	}
}

// userMessages returns n user messages whose blocks ("User: " + text) are
// each size characters long.
func userMessages(tag string, n, size int) []sa.Message {
	msgs := make([]sa.Message, n)
	for i := range msgs {
		msgs[i] = user(numberedOutput(fmt.Sprintf("%s%05d", tag, i), size-len("User: ")))
	}
	return msgs
}

// FORK-PIPE-7: a digest of at most
// MaxChars (200,000) is left whole; a longer one loses its oldest messages
// until it fits within TargetChars (by default the same 200,000): a child
// just over the limit keeps nearly all it could inherit.
func TestCharacterBudgetEnforcement(t *testing.T) {
	tests := []struct {
		name        string
		history     []sa.Message
		wantRemoved bool
	}{
		// 100 blocks of 1,998 characters and 99 separators of 2: 199,998.
		{"199,998 characters: nothing removed", userMessages("a", 100, 1998), false},
		{"exactly 200,000: nothing removed", append(userMessages("a", 99, 1998), userMessages("b", 1, 2000)...), false},
		{"200,001: trimmed to fit 200,000", append(userMessages("a", 99, 1998), userMessages("b", 1, 2001)...), true},
		{"between the limits (150,000) with many messages: nothing removed", userMessages("a", 5000, 28), false},
		{"at most 120,000 with 10,000 messages: nothing removed", userMessages("a", 10_000, 10), false},
		{"far over (400,000): trimmed", userMessages("a", 200, 1998), true},
	}
	cfg := forkctx.DefaultConfig()
	if cfg.Target() != cfg.MaxChars {
		t.Fatalf("default target %d, want the budget %d", cfg.Target(), cfg.MaxChars)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := withIDs(tt.history)
			res := build(t, cfg, h)
			st := res.Stats
			if removed := st.Removed.ForChars > 0; removed != tt.wantRemoved {
				t.Fatalf("formatted %d characters: removed %d messages, want removal %v", st.FormattedChars, st.Removed.ForChars, tt.wantRemoved)
			}
			last := h[len(h)-1].Parts[0].Text
			if !strings.HasSuffix(res.Digest, last) {
				t.Error("the most recent message is not kept")
			}
			if !tt.wantRemoved {
				if st.FinalChars != st.FormattedChars || st.FinalMessages != len(h) {
					t.Errorf("final %d characters, %d messages; want all %d, %d", st.FinalChars, st.FinalMessages, st.FormattedChars, len(h))
				}
				return
			}
			if st.FinalChars > cfg.Target() {
				t.Errorf("FinalChars = %d > target %d", st.FinalChars, cfg.Target())
			}
			// Removal stops at the first whole step past what the digest
			// needs to fit: one more message back would pass it.
			if st.FinalChars+cfg.DropStep()+2000+2 <= cfg.Target() {
				t.Errorf("FinalChars = %d: removed more than needed", st.FinalChars)
			}
			if first := h[0].Parts[0].Text; strings.Contains(res.Digest, first) {
				t.Error("the oldest message is kept")
			}
			if !strings.Contains(res.Preamble, fmt.Sprintf("%d of the oldest", st.Removed.Messages)) {
				t.Errorf("preamble does not report the removal:\n%s", res.Preamble)
			}
		})
	}
}

// TestJustOverTheBudgetKeepsNearlyAll (FORK-PIPE-7): a 210,000-character digest keeps
// at least 190,000 characters (trimming to a lower target would lose 40%).
func TestJustOverTheBudgetKeepsNearlyAll(t *testing.T) {
	// 104 × 1,998 + 1 × 2,000 characters, 104 separators of 2: 210,000.
	h := withIDs(append(userMessages("a", 104, 1998), userMessages("b", 1, 2000)...))
	res := build(t, forkctx.DefaultConfig(), h)
	st := res.Stats
	if st.FormattedChars != 210_000 {
		t.Fatalf("formatted %d characters, want 210,000", st.FormattedChars)
	}
	if st.FinalChars < 190_000 || st.FinalChars > 200_000 {
		t.Fatalf("kept %d characters, want between 190,000 and 200,000", st.FinalChars)
	}
}

// FORK-PREAMBLE-1: dynamic preamble content.
func TestDynamicPreambleContent(t *testing.T) {
	cfg := forkctx.DefaultConfig()
	cfg.Tier2Chars = 2500
	cfg.Tier3Chars = 400
	cfg.MaxChars, cfg.TargetChars = 60_000, 50_000
	h := []sa.Message{user("start"), compactionMarker(), summary("what happened so far")}
	for i := range 17 {
		h = append(h, toolRound(fmt.Sprintf("c%d", i), "read", `{}`, numberedOutput("o", 3000+i))...)
	}
	h = append(h, userMessages("a", 40, 1500)...)
	res := build(t, cfg, withIDs(h))
	st := res.Stats
	if st.Removed.Messages == 0 {
		t.Fatalf("the scenario should remove messages; stats %+v", st)
	}
	for _, want := range []string{
		"the digest starts from the latest compaction summary, and the 2 messages before it are left out",
		"5 in tier 1 (kept whole), 10 in tier 2 (cut to 2500 characters: 10 were cut), 2 in tier 3 (cut to 400 characters: 2 were cut)",
		fmt.Sprintf("Removed messages: %d of the oldest, %d because the digest exceeded 60000 characters (it was trimmed to fit within 50000, in steps of 5000 characters", st.Removed.Messages, st.Removed.ForChars),
		"read the file or run the command again",
	} {
		if !strings.Contains(res.Preamble, want) {
			t.Errorf("preamble lacks %q:\n%s", want, res.Preamble)
		}
	}

	quiet := build(t, forkctx.DefaultConfig(), withIDs([]sa.Message{user("hi"), agent("hello")}))
	for _, want := range []string{"no compaction summary was found", "Tool results: there were none", "Removed messages: none", "read the file"} {
		if !strings.Contains(quiet.Preamble, want) {
			t.Errorf("preamble lacks %q:\n%s", want, quiet.Preamble)
		}
	}
}

// FORK-PIPE-3, as first written: long results are cut,
// the call keeps its name and arguments and sits right above its result,
// and the cut says how long the original was.
func TestForkWithContextTruncation(t *testing.T) {
	long := numberedOutput("long", 9000)
	h := concat(toolRound("call_A", "grep", `{"pattern": "func Test", "path": "./..."}`, long))
	for i := range 15 {
		h = append(h, toolRound(fmt.Sprintf("c%d", i), "read", `{}`, "x")...)
	}
	res := build(t, forkctx.DefaultConfig(), withIDs(h))
	want := "Agent: [Tool: grep] {\"pattern\":\"func Test\",\"path\":\"./...\"}\n[Result]\n" + headOnly(long, 500)
	if !strings.Contains(res.Digest, want) {
		t.Fatalf("digest lacks the call with its cut result:\n%s", res.Digest[:1200])
	}
	if !strings.Contains(res.Digest, "of 9000 characters]") {
		t.Error("the cut does not give the original length")
	}
}

// FORK-PIPE-8: fork with token limit enforcement.
func TestForkWithTokenLimitEnforcement(t *testing.T) {
	cfg := forkctx.DefaultConfig()
	cfg.MaxChars, cfg.TargetChars = 10_000_000, 10_000_000 // only the token cap acts
	counter, err := sharedCounter()
	if err != nil {
		t.Fatal(err)
	}
	var h []sa.Message
	for i := range 80 {
		var b strings.Builder
		for j := 0; b.Len() < 8000; j++ {
			fmt.Fprintf(&b, "msg%d word%d ", i, j*7919%10007)
		}
		h = append(h, user(b.String()))
	}
	h = withIDs(h)
	res := build(t, cfg, h)
	st := res.Stats
	if st.Removed.ForTokens == 0 {
		t.Fatalf("nothing removed for tokens; stats %+v", st)
	}
	if st.FinalTokens > 100_000 {
		t.Fatalf("FinalTokens = %d > 100000", st.FinalTokens)
	}
	// The estimate (per message, plus one per separator) is close to the
	// count of the whole digest.
	whole := counter.Count(res.Digest)
	if diff := whole - st.FinalTokens; diff > st.FinalTokens/100 || -diff > st.FinalTokens/100 {
		t.Errorf("estimated %d tokens, the digest has %d", st.FinalTokens, whole)
	}
	if !strings.HasSuffix(res.Digest, h[len(h)-1].Parts[0].Text) {
		t.Error("the most recent message is not kept")
	}
	if strings.Contains(res.Digest, h[0].Parts[0].Text) {
		t.Error("the oldest message is kept")
	}
	// Removal stops as soon as the cap holds: one more message back would
	// break it.
	firstKept := st.Removed.ForTokens
	if st.FinalTokens+counter.Count("User: "+h[firstKept-1].Parts[0].Text)+1 <= 100_000 {
		t.Errorf("removed %d messages, more than needed", st.Removed.ForTokens)
	}
}

// FORK-PIPE-9: fork context role label format.
func TestForkContextRoleLabelFormat(t *testing.T) {
	h := withIDs([]sa.Message{
		{Role: sa.RoleSystem, Parts: []sa.Part{sa.TextPart("be brief")}},
		user("What is 2+2?"), agent("2+2 equals 4."),
	})
	res := build(t, forkctx.DefaultConfig(), h)
	if want := "System: be brief\n\nUser: What is 2+2?\n\nAgent: 2+2 equals 4."; res.Digest != want {
		t.Fatalf("digest = %q, want %q", res.Digest, want)
	}
}

// FORK-PIPE-5: fork context tool call display.
func TestForkContextToolCallDisplay(t *testing.T) {
	longInput, _ := json.Marshal(map[string]string{"content": numberedOutput("param", 900)})
	h := concat(
		toolRound("old", "write", string(longInput), "written"), // tier 2: 200 characters
		[]sa.Message{agentCalls("Reading it.", call("c1", "read", "{\n  \"path\": \"main.go\"\n}"))},
		[]sa.Message{toolMsg(result("c1", "read", "package main"))},
	)
	for i := range 4 {
		h = append(h, toolRound(fmt.Sprintf("n%d", i), "glob", `{"pattern":"*.go"}`, "a.go")...)
	}
	res := build(t, forkctx.DefaultConfig(), withIDs(h))
	for _, want := range []string{
		"Agent: Reading it.\n[Tool: read] {\"path\":\"main.go\"}\n[Result]\npackage main",
		"Agent: [Tool: write] " + string(longInput[:200]) + "...\n[Result]\nwritten",
	} {
		if !strings.Contains(res.Digest, want) {
			t.Errorf("digest lacks %q:\n%s", want, res.Digest)
		}
	}
}

// FORK-PIPE-10: thinking is omitted.
func TestThinkingOmitted(t *testing.T) {
	m := sa.Message{Role: sa.RoleAssistant, Parts: []sa.Part{
		{Type: sa.PartReasoning, Text: "SECRET CHAIN OF THOUGHT", Signature: "sig"},
		sa.TextPart("The answer is 4."),
	}}
	onlyThinking := sa.Message{Role: sa.RoleAssistant, Parts: []sa.Part{{Type: sa.PartReasoning, Text: "MORE THOUGHT"}}}
	res := build(t, forkctx.DefaultConfig(), withIDs([]sa.Message{user("2+2?"), m, onlyThinking, user("thanks")}))
	if strings.Contains(res.Digest, "THOUGHT") {
		t.Fatalf("digest keeps reasoning:\n%s", res.Digest)
	}
	if want := "User: 2+2?\n\nAgent: The answer is 4.\n\nUser: thanks"; res.Digest != want {
		t.Fatalf("digest = %q, want %q", res.Digest, want)
	}
	if res.Stats.ReasoningOmitted != 2 || res.Stats.FinalMessages != 4 {
		t.Errorf("stats = %+v", res.Stats)
	}
}
