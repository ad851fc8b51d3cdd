package transcripts_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/superagents/superagents/transcripts"
)

// fuzzRead reads data as the host's transcript from the start and from the
// middle: it must not panic, and what it returns must be valid messages
// whose tool results answer earlier calls.
func fuzzRead(t *testing.T, host transcripts.Host, data []byte) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	tr := transcripts.Transcript{Host: host, Path: path}
	res, err := transcripts.Read(context.Background(), tr, transcripts.Position{})
	if err != nil {
		return
	}
	checkValid(t, res.All())
	if res.Next.Offset > int64(len(data)) {
		t.Fatalf("Next offset %d beyond the file's %d bytes", res.Next.Offset, len(data))
	}
	more, err := transcripts.Read(context.Background(), tr, res.Next)
	if err != nil {
		return
	}
	checkValid(t, more.All())
}

func seed(f *testing.F, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)/2])
}

func FuzzClaudeCode(f *testing.F) {
	seed(f, "testdata/claudecode.jsonl")
	seed(f, "testdata/claudecode-preserved.jsonl")
	seed(f, "testdata/claudecode-dangling.jsonl")
	seed(f, "testdata/claudecode-parallel.jsonl")
	f.Add([]byte(`{"type":"assistant","uuid":"a","parentUuid":"a","message":{"id":"m","content":[{"type":"tool_use","id":"t","name":"x","input":"{"}]}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, transcripts.ClaudeCode, data) })
}

func FuzzCodex(f *testing.F) {
	seed(f, "testdata/codex.jsonl")
	seed(f, "testdata/codex-current.jsonl")
	f.Add([]byte(`{"type":"session_meta","payload":{"id":"x"}}` + "\n" + `{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":{"content":1}}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, transcripts.Codex, data) })
}

// FuzzOpenCode writes one message and one part into OpenCode's JSON
// storage and reads the session.
func FuzzOpenCode(f *testing.F) {
	f.Add([]byte(`{"role":"assistant","time":{"completed":1}}`), []byte(`{"type":"tool","callID":"c","tool":"bash","state":{"status":"completed","input":{"a":1},"output":"ok"}}`))
	f.Add([]byte(`{"role":"user"}`), []byte(`{"type":"compaction"}`))
	f.Add([]byte(`{"role":"assistant","summary":true}`), []byte(`{"type":"text","text":"sum"}`))
	f.Fuzz(func(t *testing.T, msg, part []byte) {
		storage := filepath.Join(t.TempDir(), "storage")
		write := func(rel string, data []byte) {
			p := filepath.Join(storage, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("session/p/ses_1.json", []byte(`{"id":"ses_1","directory":"/x"}`))
		write("message/ses_1/msg_1.json", msg)
		write("part/msg_1/prt_1.json", part)
		write("part/msg_1/prt_2.json", part)
		tr, err := transcripts.Inspect(transcripts.OpenCode, filepath.Join(storage, "session/p/ses_1.json"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := transcripts.Read(context.Background(), tr, transcripts.Position{})
		if err != nil {
			return
		}
		checkValid(t, res.All())
	})
}
