package runtime_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/sqlite"
	"github.com/superagents/superagents/transcripts"
)

// TestImportHostRead imports what the caller read when it was read from
// where the import stands, and reads the transcript itself otherwise.
func TestImportHostRead(t *testing.T) {
	ctx := context.Background()
	raw, err := os.ReadFile("../../transcripts/testdata/claudecode.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "5f0c6a1e-2b7d-4c1a-9e3f-0a1b2c3d4e5f.jsonl")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := transcripts.Inspect(transcripts.ClaudeCode, path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.OpenDir(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rt := runtime.NewImports(st)

	whole, err := transcripts.Read(ctx, tr, transcripts.Position{})
	if err != nil || len(whole.Messages) == 0 {
		t.Fatalf("Read = %d messages, %v", len(whole.Messages), err)
	}
	// The file is emptied: only the read given can be imported.
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	first, err := rt.ImportHostRead(ctx, tr, &whole, sa.NewSession{})
	if err != nil || !first.Created || first.Imported != len(whole.Messages) {
		t.Fatalf("ImportHostRead = %+v, %v; want %d messages imported from the read given", first, err, len(whole.Messages))
	}

	// The import stands past the start now: a whole read is not where it
	// goes on from, so the transcript is read from the link's position.
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := rt.ImportHostRead(ctx, tr, &whole, sa.NewSession{})
	if err != nil || again.Created || again.Imported != 0 || again.ID != first.ID {
		t.Fatalf("ImportHostRead again = %+v, %v; want nothing new in session %s", again, err, first.ID)
	}
	h, err := st.History(ctx, first.ID)
	if err != nil || len(h) != len(whole.Messages) {
		t.Fatalf("history = %d messages, %v; want %d", len(h), err, len(whole.Messages))
	}

	// A read from where the import stands is taken as it is.
	var from transcripts.Position
	link, err := st.HostLink(ctx, string(transcripts.ClaudeCode), tr.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(link.Position), &from); err != nil {
		t.Fatal(err)
	}
	next, err := transcripts.Read(ctx, tr, from)
	if err != nil {
		t.Fatal(err)
	}
	next.Messages = []sa.Message{{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("given")}}}
	given, err := rt.ImportHostRead(ctx, tr, &next, sa.NewSession{})
	if err != nil || given.Imported != 1 {
		t.Fatalf("ImportHostRead from the link's position = %+v, %v; want the 1 message given", given, err)
	}
}
