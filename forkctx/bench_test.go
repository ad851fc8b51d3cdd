package forkctx_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/forkctx"
)

// Tool output is made of words that look like code and logs, so the
// tokenizer sees realistic text; one word in nonASCIIEvery is not ASCII.
var (
	asciiWords = strings.Fields(`func main return if err != nil { } fmt.Println("hello") package import
		the quick brown fox jumps over lazy dog 42 3.14 /usr/local/bin go test ./... PASS ok
		internal/server/handler.go:118 := struct map[string]int []byte ctx context.Context`)
	otherWords = strings.Fields(`résumé naïve 東京 データ λ → ✓`)
)

// benchHistory returns a session of n messages holding about outputBytes
// of tool output: rounds of a user request, calls and results, and replies.
func benchHistory(n, outputBytes, nonASCIIEvery int) (history []sa.Message, inputBytes int) {
	rng := rand.New(rand.NewPCG(1, 2))
	rounds := n / 4 // user, assistant call, tool result, assistant reply
	perResult := outputBytes / max(rounds, 1)
	tools := []string{"read", "bash", "grep", "glob", "edit"}
	text := func(size int) string {
		var b strings.Builder
		for b.Len() < size {
			if rng.IntN(nonASCIIEvery) == 0 {
				b.WriteString(otherWords[rng.IntN(len(otherWords))])
			} else {
				b.WriteString(asciiWords[rng.IntN(len(asciiWords))])
			}
			if rng.IntN(8) == 0 {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		}
		return b.String()
	}
	for i := range rounds {
		id := fmt.Sprintf("call_%d", i)
		name := tools[i%len(tools)]
		out := text(perResult)
		if i%17 == 0 {
			out += "\nError: exit status 1"
		}
		history = append(history,
			user(text(80)),
			agentCalls(text(40), call(id, name, fmt.Sprintf(`{"path":"internal/pkg%d/file.go","pattern":%q}`, i, text(60)))),
			toolMsg(result(id, name, out)),
			agent(text(120)),
		)
	}
	for len(history) < n {
		history = append(history, user(text(40)))
	}
	for i := range history {
		history[i].ID = int64(i + 1)
		inputBytes += len(history[i].Parts[0].Text) + len(history[i].Parts[0].Output)
		for _, p := range history[i].Parts[1:] {
			inputBytes += len(p.Text) + len(p.Input) + len(p.Output)
		}
	}
	return withIDs(history), inputBytes
}

func benchmarkBuild(b *testing.B, messages, outputBytes, nonASCIIEvery int) {
	history, inputBytes := benchHistory(messages, outputBytes, nonASCIIEvery)
	p := newPipeline(b, forkctx.DefaultConfig())
	b.SetBytes(int64(inputBytes))
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var res forkctx.Result
	builds := 0
	for b.Loop() {
		var err error
		if res, err = p.Build(history); err != nil {
			b.Fatal(err)
		}
		builds++
	}
	runtime.ReadMemStats(&after)
	// A build can add to the heap at most what it allocates, so the peak
	// while it runs is at most the input (already live) plus that:
	// peak/input <= 1 + allocated/input.
	allocated := float64(after.TotalAlloc-before.TotalAlloc) / float64(builds)
	b.ReportMetric(1+allocated/float64(inputBytes), "peak/input")
	b.ReportMetric(float64(inputBytes), "input-bytes")
	b.ReportMetric(float64(res.Stats.FinalChars), "digest-chars")
	b.ReportMetric(float64(res.Stats.FinalTokens), "digest-tokens")
}

// BenchmarkBuild is the target case: 10,000 messages with 20 MB of tool
// output, mostly ASCII as code and logs are (one word in 200 is not).
func BenchmarkBuild(b *testing.B) { benchmarkBuild(b, 10_000, 20<<20, 200) }

// BenchmarkBuildNonASCII is the same session with one word in 8 not ASCII,
// the slow case for validating and counting characters.
func BenchmarkBuildNonASCII(b *testing.B) { benchmarkBuild(b, 10_000, 20<<20, 8) }

// BenchmarkBuildScaling grows the session tenfold twice at a constant 2 KB
// of output per tool result: time and memory per message should stay flat.
func BenchmarkBuildScaling(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			benchmarkBuild(b, n, n/4*2048, 200)
		})
	}
}
