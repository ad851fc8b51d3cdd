package transcripts_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/superagents/superagents/transcripts"
)

// TestFindThroughSymlink: the hosts record their working directory as the
// system resolves it (getcwd), while ours may be named through a symbolic
// link (a shell's $PWD, --workspace); a transcript of the directory is
// found either way.
func TestFindThroughSymlink(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	real := filepath.Join(base, "real")
	link := filepath.Join(base, "link")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	// The records name the resolved directory.
	real, err := filepath.EvalSymlinks(real)
	if err != nil {
		t.Fatal(err)
	}
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		host  transcripts.Host
		write func(home string) string // returns the transcript's path
	}{
		{transcripts.ClaudeCode, func(home string) string {
			p := filepath.Join(home, ".claude", "projects", transcripts.ClaudeProjectDir(real), claudeSession+".jsonl")
			write(p, fmt.Sprintf(`{"type":"user","uuid":"u1","parentUuid":null,"cwd":%q,"sessionId":%q,"message":{"role":"user","content":"hello"}}`+"\n", real, claudeSession))
			return p
		}},
		{transcripts.Codex, func(home string) string {
			p := filepath.Join(home, ".codex", "sessions", "2026", "11", "25", "rollout-2026-11-25T09-00-00-"+codexSession+".jsonl")
			write(p, fmt.Sprintf(`{"timestamp":"2026-11-25T09:00:00.000Z","type":"session_meta","payload":{"id":%q,"cwd":%q}}`+"\n", codexSession, real))
			return p
		}},
		{transcripts.OpenCode, func(home string) string {
			p := filepath.Join(opencodeData(home), "storage", "session", "proj", openSession+".json")
			write(p, fmt.Sprintf(`{"id":%q,"directory":%q,"time":{"created":1,"updated":2}}`, openSession, real))
			return p
		}},
	}
	for _, tc := range cases {
		t.Run(string(tc.host), func(t *testing.T) {
			home := t.TempDir()
			path := tc.write(home)
			for _, dir := range []string{real, link} {
				got, err := transcripts.Find(ctx, tc.host, dir, env(home))
				if err != nil || len(got) != 1 || got[0].Path != path {
					t.Errorf("Find(%s) = %+v, %v; want %s once", dir, got, err, path)
				}
			}
		})
	}
}
