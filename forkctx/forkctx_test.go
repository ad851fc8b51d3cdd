package forkctx_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/pelletier/go-toml/v2"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/forkctx"
	"github.com/superagents/superagents/internal/tokens"
)

// wantInvalid fails unless err is ErrInvalid with text in its message.
func wantInvalid(t *testing.T, err error, text string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), text) || !errors.Is(err, sa.ErrInvalid) {
		t.Fatalf("error = %v, want ErrInvalid containing %q", err, text)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		change  func(*forkctx.Config)
		wantErr string
	}{
		{"defaults", func(*forkctx.Config) {}, ""},
		{"no untouched results", func(c *forkctx.Config) { c.Tier1Results = 0 }, ""},
		{"a smaller budget alone (the target follows it)", func(c *forkctx.Config) { c.MaxChars = 50_000 }, ""},
		{"negative tier 1 count", func(c *forkctx.Config) { c.Tier1Results = -1 }, "tier1_results is -1"},
		{"negative tier 2 count", func(c *forkctx.Config) { c.Tier2Results = -3 }, "tier2_results is -3"},
		{"zero tier 2 size", func(c *forkctx.Config) { c.Tier2Chars = 0 }, "tier2_chars is 0"},
		{"negative tier 3 size", func(c *forkctx.Config) { c.Tier3Chars = -5 }, "tier3_chars is -5"},
		{"tier 3 larger than tier 2", func(c *forkctx.Config) { c.Tier3Chars = 4000 }, "tier3_chars (4000) is larger than tier2_chars (3000)"},
		{"parameters growing with age", func(c *forkctx.Config) { c.Tier3ParamChars = 300 }, "must not grow with age"},
		{"zero parameter preview", func(c *forkctx.Config) { c.Tier1ParamChars = 0 }, "tier1_param_chars is 0"},
		{"head ratio 0", func(c *forkctx.Config) { c.HeadRatio = 0 }, "head_ratio is 0"},
		{"head ratio 1", func(c *forkctx.Config) { c.HeadRatio = 1 }, "head_ratio is 1"},
		{"head ratio NaN", func(c *forkctx.Config) { c.HeadRatio = math.NaN() }, "head_ratio is NaN"},
		{"target over max", func(c *forkctx.Config) { c.TargetChars = 300_000 }, "target_chars (300000) is larger than max_chars (200000)"},
		{"negative target", func(c *forkctx.Config) { c.TargetChars = -1 }, "target_chars is -1"},
		{"zero max chars", func(c *forkctx.Config) { c.MaxChars = 0 }, "max_chars is 0"},
		{"negative token cap", func(c *forkctx.Config) { c.MaxTokens = -1 }, "max_tokens is -1"},
		{"empty error pattern", func(c *forkctx.Config) { c.ErrorPatterns = append(c.ErrorPatterns, "") }, "error_patterns has an empty entry"},
		{"empty tool name", func(c *forkctx.Config) { c.HeadTailTools = []string{""} }, "head_tail_tools has an empty entry"},
		{"unknown encoding", func(c *forkctx.Config) { c.TokenEncoding = "claude" }, `token_encoding "claude" is unknown`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := forkctx.DefaultConfig()
			tt.change(&cfg)
			err := cfg.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			wantInvalid(t, err, tt.wantErr)
		})
	}
}

func TestConfigValidateReportsEverything(t *testing.T) {
	cfg := forkctx.DefaultConfig()
	cfg.Tier2Chars, cfg.HeadRatio, cfg.MaxTokens = -1, 2, 0
	err := cfg.Validate()
	for _, want := range []string{"tier2_chars", "head_ratio", "max_tokens"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %s", err, want)
		}
	}
}

func TestConfigFromTOML(t *testing.T) {
	const file = `
tier1_results = 3
tier2_results = 7
tier2_chars = 2000
tier3_chars = 250
tier1_param_chars = 400
tier2_param_chars = 150
tier3_param_chars = 50
head_ratio = 0.75
head_tail_tools = ["shell"]
error_patterns = ["panic:"]
no_truncate_tools = ["ask_user_questions", "todo_read"]
max_chars = 100000
target_chars = 80000
drop_step_chars = 5000
max_tokens = 50000
token_encoding = "cl100k_base"
`
	cfg := forkctx.DefaultConfig()
	if err := toml.Unmarshal([]byte(file), &cfg); err != nil {
		t.Fatal(err)
	}
	want := forkctx.Config{
		Tier1Results: 3, Tier2Results: 7, Tier2Chars: 2000, Tier3Chars: 250,
		Tier1ParamChars: 400, Tier2ParamChars: 150, Tier3ParamChars: 50, HeadRatio: 0.75,
		HeadTailTools: []string{"shell"}, ErrorPatterns: []string{"panic:"},
		NoTruncateTools: []string{"ask_user_questions", "todo_read"},
		MaxChars:        100000, TargetChars: 80000, DropStepChars: 5000, MaxTokens: 50000, TokenEncoding: "cl100k_base",
	}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Fatalf("decoded config (-want +got):\n%s", diff)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	// A file that sets a few keys keeps the defaults of the others.
	partial := forkctx.DefaultConfig()
	if err := toml.Unmarshal([]byte("max_tokens = 20000\n"), &partial); err != nil {
		t.Fatal(err)
	}
	if partial.MaxTokens != 20000 || partial.MaxChars != 200_000 || partial.Tier2Chars != 3000 {
		t.Fatalf("partial config = %+v", partial)
	}
}

func TestNewRejectsBadSetup(t *testing.T) {
	bad := forkctx.DefaultConfig()
	bad.HeadRatio = 0
	if _, err := forkctx.New(bad); !errors.Is(err, sa.ErrInvalid) {
		t.Errorf("New(bad config) = %v, want ErrInvalid", err)
	}
	counter, err := sharedCounter()
	if err != nil {
		t.Fatal(err)
	}
	mismatch := forkctx.DefaultConfig()
	mismatch.TokenEncoding = tokens.CL100KBase
	if _, err := forkctx.NewWithCounter(mismatch, counter); err == nil || !strings.Contains(err.Error(), "counter uses") {
		t.Errorf("NewWithCounter(encoding mismatch) = %v", err)
	}
	if _, err := forkctx.NewWithCounter(forkctx.DefaultConfig(), nil); !errors.Is(err, sa.ErrInvalid) {
		t.Errorf("NewWithCounter(nil) = %v, want ErrInvalid", err)
	}
}

func TestNewBuildsItsOwnTokenizer(t *testing.T) {
	cfg := forkctx.DefaultConfig()
	cfg.TokenEncoding = ""
	p, err := forkctx.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Config().TokenEncoding; got != tokens.DefaultEncoding {
		t.Errorf("TokenEncoding = %q, want the default %q", got, tokens.DefaultEncoding)
	}
	res, err := p.Build([]sa.Message{user("hello there")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.FinalTokens == 0 || res.Stats.TokenEncoding != tokens.DefaultEncoding {
		t.Errorf("stats = %+v", res.Stats)
	}
}

func TestConfigIsCopied(t *testing.T) {
	cfg := forkctx.DefaultConfig()
	p := newPipeline(t, cfg)
	cfg.ErrorPatterns[0] = "changed"
	got := p.Config()
	got.NoTruncateTools[0] = "changed too"
	if p.Config().ErrorPatterns[0] != "error" || p.Config().NoTruncateTools[0] != "ask_user_questions" {
		t.Fatal("the pipeline shares slices with its callers")
	}
}

func TestBuildRejectsMalformedMessages(t *testing.T) {
	tests := []struct {
		name    string
		msg     sa.Message
		wantErr string
	}{
		{"unknown role", sa.Message{ID: 7, Role: "robot", Parts: []sa.Part{sa.TextPart("x")}}, `message 2 (id 7): invalid input: unknown role "robot"`},
		{"call without id", sa.Message{Role: sa.RoleAssistant, Parts: []sa.Part{{Type: sa.PartToolCall, Name: "read"}}}, "needs call_id"},
		{"call with broken JSON", sa.Message{Role: sa.RoleAssistant, Parts: []sa.Part{call("c", "read", "{")}}, "not valid JSON"},
		{"no parts", sa.Message{Role: sa.RoleUser}, "at least one part"},
	}
	p := newPipeline(t, forkctx.DefaultConfig())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := p.Build([]sa.Message{user("fine"), tt.msg})
			wantInvalid(t, err, tt.wantErr)
		})
	}
}

func TestEmptyHistory(t *testing.T) {
	for _, h := range [][]sa.Message{nil, {}} {
		res := build(t, forkctx.DefaultConfig(), h)
		if res.Digest != "" || res.Stats.OriginalMessages != 0 || res.Stats.FinalTokens != 0 {
			t.Fatalf("empty history gave %+v", res)
		}
		if !strings.Contains(res.Preamble, "Tool results: there were none") {
			t.Errorf("preamble:\n%s", res.Preamble)
		}
	}
}

// Results are matched to calls by id, wherever they are and in whatever
// order, not by position.
func TestResultsMatchCallsByID(t *testing.T) {
	h := withIDs([]sa.Message{
		agentCalls("Two at once.", call("a", "read", `{"path":"a.go"}`), call("b", "read", `{"path":"b.go"}`)),
		toolMsg(result("b", "read", "content of b"), result("a", "read", "content of a")),
		user("and?"),
		agentCalls("", call("late", "bash", `{"command":"sleep 1"}`)),
		agent("waiting"),
		toolMsg(result("late", "bash", "slept")),
	})
	res := build(t, forkctx.DefaultConfig(), h)
	want := `Agent: Two at once.
[Tool: read] {"path":"a.go"}
[Result]
content of a
[Tool: read] {"path":"b.go"}
[Result]
content of b

User: and?

Agent: [Tool: bash] {"command":"sleep 1"}
[Result]
slept

Agent: waiting`
	if diff := cmp.Diff(want, res.Digest); diff != "" {
		t.Fatalf("digest (-want +got):\n%s", diff)
	}
	if res.Stats.FinalMessages != 6 {
		t.Errorf("FinalMessages = %d, want 6", res.Stats.FinalMessages)
	}
}

func TestCallsAndResultsWithoutPartner(t *testing.T) {
	orphan := result("gone", "", "result of a call from before the boundary")
	orphan.IsError = true
	h := withIDs([]sa.Message{
		toolMsg(orphan, result("gone2", "read", "another")),
		agentCalls("Starting.", call("pending", "bash", `{"command":"make"}`)),
	})
	res := build(t, forkctx.DefaultConfig(), h)
	want := "Tool: [Result: unknown tool, call gone (error)]\nresult of a call from before the boundary\n[Result: read, call gone2]\nanother\n\n" +
		"Agent: Starting.\n[Tool: bash] {\"command\":\"make\"}"
	if diff := cmp.Diff(want, res.Digest); diff != "" {
		t.Fatalf("digest (-want +got):\n%s", diff)
	}
}

func TestResultTakesTheNameOfItsCall(t *testing.T) {
	// The result has no name; its call says bash, so it is cut head+tail.
	out := numberedOutput("o", 4000)
	h := []sa.Message{agentCalls("", call("x", "bash", `{}`)), toolMsg(result("x", "", out))}
	for i := range 15 {
		h = append(h, toolRound(fmt.Sprintf("c%d", i), "read", `{}`, "ok")...)
	}
	res := build(t, forkctx.DefaultConfig(), withIDs(h))
	if !strings.Contains(res.Digest, headTail(out, 500)) {
		t.Fatal("a nameless result of a bash call was not cut head+tail")
	}
}

func TestNoTruncateTools(t *testing.T) {
	answers := numberedOutput("answer", 6000)
	h := concat(toolRound("q", "ask_user_questions", `{}`, answers))
	for i := range 16 {
		h = append(h, toolRound(fmt.Sprintf("c%d", i), "read", `{}`, "ok")...)
	}
	res := build(t, forkctx.DefaultConfig(), withIDs(h))
	if !strings.Contains(res.Digest, answers) {
		t.Fatal("the answers were cut")
	}
	if ts := res.Stats.Tools; ts.Exempt != 1 || ts.Tiers != [3]int{5, 10, 1} {
		t.Errorf("tool stats = %+v", ts)
	}
}

func TestEmptyResultsTakeNoSlot(t *testing.T) {
	big := numberedOutput("big", 4000)
	h := toolRound("b", "read", `{}`, big)
	for i := range 3 {
		h = append(h, toolRound(fmt.Sprintf("e%d", i), "read", `{}`, "")...)
	}
	for i := range 4 {
		h = append(h, toolRound(fmt.Sprintf("c%d", i), "read", `{}`, "ok")...)
	}
	res := build(t, forkctx.DefaultConfig(), withIDs(h))
	if !strings.Contains(res.Digest, big) || !strings.Contains(res.Digest, "[Result]\n(empty)") {
		t.Fatalf("digest:\n%s", res.Digest)
	}
	if ts := res.Stats.Tools; ts.Empty != 3 || ts.Tiers != [3]int{5, 0, 0} {
		t.Errorf("tool stats = %+v", ts)
	}
}

func TestHiddenPartsAndRecordsAreLeftOut(t *testing.T) {
	notification := sa.Message{Role: sa.RoleUser, Kind: sa.KindNotification, Parts: []sa.Part{
		sa.TextPart("Task abc123... completed"),
		{Type: sa.PartText, Text: "HIDDEN HINT: call superagents_output", Hidden: true},
	}}
	h := withIDs([]sa.Message{
		user("go"),
		{Role: sa.RoleSystem, Kind: sa.KindFork, Parts: []sa.Part{sa.TextPart("forked from xyz")}},
		{Role: sa.RoleUser, Kind: sa.KindCommand, Parts: []sa.Part{sa.TextPart("/fork")}},
		notification,
	})
	res := build(t, forkctx.DefaultConfig(), h)
	if want := "User: go\n\nNotification: Task abc123... completed"; res.Digest != want {
		t.Fatalf("digest = %q, want %q", res.Digest, want)
	}
	if res.Stats.FinalMessages != 4 {
		t.Errorf("FinalMessages = %d, want 4", res.Stats.FinalMessages)
	}
}

// A clear should not reach the pipeline (replay cuts there), but if one
// does it is honoured the same way.
func TestClearStartsTheContext(t *testing.T) {
	h := withIDs([]sa.Message{user("before"), sa.ClearMessage(), user("after")})
	res := build(t, forkctx.DefaultConfig(), h)
	if res.Digest != "User: after" || res.Stats.DiscardedMessages != 2 {
		t.Fatalf("digest %q, stats %+v", res.Digest, res.Stats)
	}
}

// Characters are code points: a multi-byte character is never split, and
// invalid bytes come out as U+FFFD, each counted as one character.
func TestCutsCountCodePoints(t *testing.T) {
	cfg := forkctx.DefaultConfig()
	cfg.Tier1Results = 0 // every result in tier 2 or 3
	emoji := strings.Repeat("😀", 4000)
	invalid := strings.Repeat("ab\xff\xfe", 1000) // 4,000 bytes, 4,000 characters
	h := concat(toolRound("e", "read", `{"q":"日本語"}`, emoji), toolRound("i", "read", `{}`, invalid))
	res := build(t, cfg, withIDs(h))
	wantEmoji := strings.Repeat("😀", 3000) + "\n[... truncated: kept the first 3000 of 4000 characters]"
	if !strings.Contains(res.Digest, wantEmoji) {
		t.Error("emoji output not cut at 3000 characters")
	}
	wantInvalid := strings.Repeat("ab\uFFFD\uFFFD", 750) + "\n[... truncated: kept the first 3000 of 4000 characters]"
	if !strings.Contains(res.Digest, wantInvalid) {
		t.Error("invalid output not cut at 3000 characters with U+FFFD")
	}
	if !strings.Contains(res.Digest, `{"q":"日本語"}`) {
		t.Error("parameters with multi-byte characters changed")
	}
}

func TestInvalidUTF8Everywhere(t *testing.T) {
	bad := "bad \xc3\x28 \xe2\x82 \xf0\x28\x8c\xbc end"
	m := agentCalls(bad, call("c", bad, `{"k":"v"}`))
	h := withIDs([]sa.Message{user(bad), m, toolMsg(result("c", bad, bad+strings.Repeat("\xff", 5000)))})
	cfg := forkctx.DefaultConfig()
	cfg.Tier1Results = 0
	res := build(t, cfg, h)
	if !strings.Contains(res.Digest, "User: bad \uFFFD( \uFFFD\uFFFD \uFFFD(\uFFFD\uFFFD end") {
		t.Fatalf("digest:\n%q", res.Digest[:200])
	}
}

// When the newest message alone is over a budget it is cut (head and tail),
// so the budgets are hard caps.
func TestNewestMessageIsCutToFit(t *testing.T) {
	t.Run("characters", func(t *testing.T) {
		cfg := forkctx.DefaultConfig()
		huge := numberedOutput("huge", 500_000)
		res := build(t, cfg, withIDs([]sa.Message{user("small"), agent(huge)}))
		st := res.Stats
		if !st.Removed.NewestCut || st.Removed.ForChars != 1 || st.FinalChars > cfg.Target() || st.FinalChars < cfg.Target()-10 {
			t.Fatalf("stats = %+v", st)
		}
		if !strings.HasPrefix(res.Digest, "Agent: "+huge[:1000]) || !strings.HasSuffix(res.Digest, huge[len(huge)-1000:]) {
			t.Error("the cut message lost its head or its tail")
		}
		if !strings.Contains(res.Digest, " characters cut ...]") || !strings.Contains(res.Preamble, "cut in the middle") {
			t.Error("the cut is not reported")
		}
	})
	t.Run("tokens", func(t *testing.T) {
		cfg := forkctx.DefaultConfig()
		cfg.MaxTokens = 1000
		var b strings.Builder
		for i := range 3000 {
			fmt.Fprintf(&b, "w%d ", i*7919%10007)
		}
		res := build(t, cfg, withIDs([]sa.Message{agent(b.String())}))
		st := res.Stats
		if !st.Removed.NewestCut || st.FinalTokens > 1000 || st.FinalTokens < 800 {
			t.Fatalf("stats = %+v", st)
		}
		counter, _ := sharedCounter()
		if got := counter.Count(res.Digest); got != st.FinalTokens {
			t.Errorf("digest has %d tokens, stats say %d", got, st.FinalTokens)
		}
	})
	t.Run("tiny budget", func(t *testing.T) {
		cfg := forkctx.DefaultConfig()
		cfg.MaxChars, cfg.TargetChars = 10, 10
		res := build(t, cfg, withIDs([]sa.Message{user("ünïcödé text that is long")}))
		if res.Digest != "User: ünïc" {
			t.Fatalf("digest = %q", res.Digest)
		}
	})
}

// The compaction summary is the last message given up: newer messages go
// first, and the newest is cut rather than dropped.
func TestSummaryIsGivenUpLast(t *testing.T) {
	cfg := forkctx.DefaultConfig()
	cfg.MaxChars, cfg.TargetChars, cfg.DropStepChars = 5000, 5000, 0 // only what the budget needs
	h := concat([]sa.Message{compactionMarker(), summary("THE SUMMARY")}, userMessages("a", 10, 1000))
	res := build(t, cfg, withIDs(h))
	if !strings.HasPrefix(res.Digest, "Agent: [Summary of the earlier conversation]\nTHE SUMMARY") {
		t.Fatalf("the summary was dropped before older messages:\n%.200s", res.Digest)
	}
	// 56 + 10 × 1,000 characters and 10 separators: 10,076; six messages
	// (1,002 with a separator) must go.
	if st := res.Stats; st.Removed.ForChars != 6 || st.Removed.SummaryRemoved {
		t.Errorf("stats = %+v", st)
	}

	// Summary and newest alone are 1,058: over 1,020, so the summary goes.
	cfg.MaxChars, cfg.TargetChars = 1020, 1020
	res = build(t, cfg, withIDs(h))
	if strings.Contains(res.Digest, "THE SUMMARY") || !res.Stats.Removed.SummaryRemoved || res.Stats.Removed.NewestCut {
		t.Fatalf("digest %.100q, stats %+v", res.Digest, res.Stats)
	}
	if !strings.Contains(res.Preamble, "Even the compaction summary had to be removed") {
		t.Errorf("preamble:\n%s", res.Preamble)
	}
}

// Builds are deterministic, also when several run at once on one pipeline.
func TestConcurrentBuildsAreIdentical(t *testing.T) {
	history, _ := benchHistory(2000, 2<<20, 50)
	p := newPipeline(t, forkctx.DefaultConfig())
	first, err := p.Build(history)
	if err != nil {
		t.Fatal(err)
	}
	want, err := first.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			res, err := p.Build(history)
			if err != nil {
				errs <- err
				return
			}
			got, _ := res.JSON()
			if string(got) != string(want) {
				errs <- errors.New("a concurrent build differs")
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestStatsJSONNames(t *testing.T) {
	res := build(t, forkctx.DefaultConfig(), withIDs([]sa.Message{user("hi")}))
	raw, err := res.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var decoded map[string]any
	if err := json.Unmarshal(raw, &decoded); err != nil {
		t.Fatal(err)
	}
	stats, _ := decoded["stats"].(map[string]any)
	for _, key := range []string{"original_messages", "final_messages", "formatted_chars", "final_chars", "final_tokens", "token_encoding", "compaction", "tools", "removed"} {
		if _, ok := stats[key]; !ok {
			t.Errorf("stats JSON lacks %q: %s", key, raw)
		}
	}
	if decoded["preamble"] != res.Preamble || decoded["digest"] != "User: hi" {
		t.Errorf("JSON = %s", raw)
	}
	if !utf8.Valid(raw) {
		t.Error("JSON is not valid UTF-8")
	}
}
