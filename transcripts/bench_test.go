package transcripts_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/sqlite"
	"github.com/superagents/superagents/transcripts"
)

// claudeTurns writes Claude Code records for turns first..last-1 of a
// synthetic session: a prompt, a reply in three records (thinking, text,
// tool_use), the tool's result of about 2 KB, a final answer and the
// turn's system record. It returns the uuid of the last record.
func claudeTurns(b *strings.Builder, parent string, first, last int) string {
	line := func(v map[string]any) {
		raw, _ := json.Marshal(v)
		b.Write(raw)
		b.WriteByte('\n')
	}
	output := strings.Repeat("ok   github.com/example/pkg/sub 0.012s\n", 50)
	for i := first; i < last; i++ {
		id := func(k int) string { return fmt.Sprintf("%08d-0000-4000-8000-%012d", i, k) }
		rec := func(k int, typ string, msg map[string]any) {
			v := map[string]any{"type": typ, "uuid": id(k), "parentUuid": parent, "sessionId": "bench", "cwd": "/w", "isSidechain": false, "timestamp": "2026-11-20T10:00:00Z", "version": "2.0.14"}
			if msg != nil {
				v["message"] = msg
			}
			line(v)
			parent = id(k)
		}
		mid := fmt.Sprintf("msg_%d", i)
		rec(1, "user", map[string]any{"role": "user", "content": fmt.Sprintf("Step %d: run the tests of package %d and tell me what fails.", i, i)})
		rec(2, "assistant", map[string]any{"id": mid, "role": "assistant", "model": "claude-sonnet-4-5", "content": []any{map[string]any{"type": "thinking", "thinking": strings.Repeat("Considering which tests to run. ", 8), "signature": "sig"}}})
		rec(3, "assistant", map[string]any{"id": mid, "role": "assistant", "model": "claude-sonnet-4-5", "content": []any{map[string]any{"type": "text", "text": "Running the tests now."}}})
		rec(4, "assistant", map[string]any{"id": mid, "role": "assistant", "model": "claude-sonnet-4-5", "content": []any{map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d", i), "name": "Bash", "input": map[string]any{"command": fmt.Sprintf("go test ./pkg%d/...", i)}}}})
		rec(5, "user", map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": fmt.Sprintf("toolu_%d", i), "content": output}}})
		rec(6, "assistant", map[string]any{"id": mid + "b", "role": "assistant", "model": "claude-sonnet-4-5", "content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("All tests of package %d pass.", i)}}})
		rec(7, "system", nil)
	}
	return parent
}

// cpuTime is the CPU time the process has used, all threads together. The
// benchmarks report it per operation beside the wall time, which on a
// shared machine also counts the time spent waiting for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((cpuTime()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// benchTranscript writes a Claude Code transcript of at least size bytes
// and returns its path and how many turns it holds.
func benchTranscript(b *testing.B, size int) (string, int, string) {
	var sb strings.Builder
	turns, last := 0, ""
	for sb.Len() < size {
		last = claudeTurns(&sb, last, turns, turns+50)
		turns += 50
	}
	path := filepath.Join(b.TempDir(), "bench.jsonl")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return path, turns, last
}

// BenchmarkImportClaudeCode3MB reads a 3 MB Claude Code transcript and
// stores it as a new session in a SQLite store: a whole first import.
func BenchmarkImportClaudeCode3MB(b *testing.B) {
	ctx := context.Background()
	path, _, _ := benchTranscript(b, 3<<20)
	fi, _ := os.Stat(path)
	st, err := sqlite.OpenDir(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	tr := transcripts.Transcript{Host: transcripts.ClaudeCode, Path: path, SessionID: "bench"}
	b.SetBytes(fi.Size())
	start := cpuTime()
	for i := 0; b.Loop(); i++ {
		res, err := transcripts.Read(ctx, tr, transcripts.Position{})
		if err != nil {
			b.Fatal(err)
		}
		pos, _ := json.Marshal(res.Next)
		if _, _, err := st.CreateHostSession(ctx, sa.NewSession{Agent: "general", Messages: res.Messages},
			sa.HostLink{Host: "claude-code", HostSessionID: fmt.Sprint("bench-", i), Position: string(pos)}); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}

// BenchmarkReadClaudeCode3MB reads a 3 MB Claude Code transcript whole.
func BenchmarkReadClaudeCode3MB(b *testing.B) {
	ctx := context.Background()
	path, _, _ := benchTranscript(b, 3<<20)
	fi, _ := os.Stat(path)
	tr := transcripts.Transcript{Host: transcripts.ClaudeCode, Path: path, SessionID: "bench"}
	b.SetBytes(fi.Size())
	start := cpuTime()
	for b.Loop() {
		if _, err := transcripts.Read(ctx, tr, transcripts.Position{}); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}

// BenchmarkIncrementalClaudeCode reads what was appended to a 3 MB
// transcript since the last import: its cost follows the new lines, not
// the file's size.
func BenchmarkIncrementalClaudeCode(b *testing.B) {
	ctx := context.Background()
	for _, turns := range []int{1, 100} {
		b.Run(fmt.Sprintf("lines=%d", turns*7), func(b *testing.B) {
			path, done, last := benchTranscript(b, 3<<20)
			tr := transcripts.Transcript{Host: transcripts.ClaudeCode, Path: path, SessionID: "bench"}
			base, err := transcripts.Read(ctx, tr, transcripts.Position{})
			if err != nil {
				b.Fatal(err)
			}
			var sb strings.Builder
			claudeTurns(&sb, last, done, done+turns)
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				b.Fatal(err)
			}
			f.WriteString(sb.String())
			f.Close()
			b.SetBytes(int64(sb.Len()))
			start := cpuTime()
			for b.Loop() {
				res, err := transcripts.Read(ctx, tr, base.Next)
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Messages) != turns*4 {
					b.Fatalf("%d new messages, want %d", len(res.Messages), turns*4)
				}
			}
			reportCPU(b, start)
		})
	}
}
