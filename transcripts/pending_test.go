package transcripts_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/transcripts"
)

// writeOpenCodeStorage writes an OpenCode session in OpenCode's JSON
// storage: turns of a request and a reply that reads a file, then
// trailing user messages, the reply before them calling
// superagents_task with args (still running) when args is not nil.
func writeOpenCodeStorage(t testing.TB, storage, dir string, turns, trailing int, args map[string]any) string {
	t.Helper()
	const sid = "ses_0b3c5d7e9ffePendingSession1"
	write := func(path string, v any) {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(storage, "session", "proj", sid+".json"), map[string]any{"id": sid, "projectID": "proj", "directory": dir,
		"title": "pending", "version": "1.18.33", "time": map[string]any{"created": 1, "updated": 2}})
	n := 0
	msg := func(role string, completed bool, parts ...map[string]any) {
		n++
		id := fmt.Sprintf("msg_%06dpending", n)
		info := map[string]any{"id": id, "sessionID": sid, "role": role, "time": map[string]any{"created": n}, "modelID": "gpt-5"}
		if completed {
			info["time"] = map[string]any{"created": n, "completed": n}
		}
		write(filepath.Join(storage, "message", sid, id+".json"), info)
		for i, p := range parts {
			p["id"], p["messageID"], p["sessionID"] = fmt.Sprintf("prt_%06d%02dpending", n, i), id, sid
			write(filepath.Join(storage, "part", id, p["id"].(string)+".json"), p)
		}
	}
	for i := range turns {
		msg("user", false, map[string]any{"type": "text", "text": fmt.Sprintf("Read file %d.", i)})
		msg("assistant", true, map[string]any{"type": "step-start"},
			map[string]any{"type": "tool", "tool": "read", "callID": fmt.Sprintf("call_%d", i),
				"state": map[string]any{"status": "completed", "input": map[string]any{"filePath": "f.go"}, "output": "package f"}})
	}
	if args != nil {
		msg("user", false, map[string]any{"type": "text", "text": "Fork a reviewer."})
		msg("assistant", false, map[string]any{"type": "step-start"},
			map[string]any{"type": "tool", "tool": "superagents_superagents_task", "callID": "call_fork",
				"state": map[string]any{"status": "running", "input": args}})
	}
	for i := range trailing {
		msg("user", false, map[string]any{"type": "text", "text": fmt.Sprintf("Queued message %d.", i)})
	}
	return sid
}

// TestFindPendingCallOpenCode finds the call in long OpenCode sessions,
// in the JSON storage and in the database, whether the newest messages
// hold the reply or only messages queued after it, and finds nothing
// where the newest reply holds no such call.
func TestFindPendingCallOpenCode(t *testing.T) {
	ctx := context.Background()
	args := map[string]any{"fork": true, "prompt": "Review the parser"}
	want, _ := json.Marshal(args)
	for _, c := range []struct {
		name            string
		turns, trailing int
		args            map[string]any
		found           bool
	}{
		{"short", 1, 0, args, true},
		{"long", 150, 0, args, true},
		{"queued after it", 150, 3, args, true},
		{"many queued after it", 150, 100, args, true},
		{"no call", 150, 0, nil, false},
		{"no call, many queued", 150, 100, nil, false},
	} {
		for _, db := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/db=%v", c.name, db), func(t *testing.T) {
				home, dir := t.TempDir(), t.TempDir()
				storage := filepath.Join(opencodeData(home), "storage")
				if db {
					storage = filepath.Join(t.TempDir(), "storage")
				}
				sid := writeOpenCodeStorage(t, storage, dir, c.turns, c.trailing, c.args)
				if db {
					opencodeDB(t, storage, opencodeData(home))
				}
				tr, res, err := transcripts.FindPendingCall(ctx, transcripts.OpenCode, dir, env(home), "superagents_task", want)
				if !c.found {
					if !errors.Is(err, sa.ErrNotFound) {
						t.Fatalf("FindPendingCall = %+v, %v; want not found", tr, err)
					}
					return
				}
				if err != nil || tr.SessionID != sid {
					t.Fatalf("FindPendingCall = %+v, %v; want session %s", tr, err, sid)
				}
				if c.trailing == 0 && len(res.Pending) == 0 {
					t.Fatalf("FindPendingCall read no pending message")
				}
				// A differing argument is another call.
				other, _ := json.Marshal(map[string]any{"fork": true, "prompt": "Review the lexer"})
				if _, _, err := transcripts.FindPendingCall(ctx, transcripts.OpenCode, dir, env(home), "superagents_task", other); !errors.Is(err, sa.ErrNotFound) {
					t.Fatalf("FindPendingCall with other arguments = %v, want not found", err)
				}
			})
		}
	}
}

// BenchmarkFindPendingCallOpenCode finds the pending call of an OpenCode
// session of 5,000 messages in OpenCode's database: it reads the newest
// messages, not the session.
func BenchmarkFindPendingCallOpenCode(b *testing.B) {
	ctx := context.Background()
	home, dir := b.TempDir(), b.TempDir()
	storage := filepath.Join(b.TempDir(), "storage")
	args := map[string]any{"fork": true, "prompt": "Review the parser"}
	writeOpenCodeStorage(b, storage, dir, 2499, 0, args)
	opencodeDB(b, storage, opencodeData(home))
	want, _ := json.Marshal(args)
	for b.Loop() {
		if _, _, err := transcripts.FindPendingCall(ctx, transcripts.OpenCode, dir, env(home), "superagents_task", want); err != nil {
			b.Fatal(err)
		}
	}
}
