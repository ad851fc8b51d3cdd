package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/sqlite"
	"github.com/superagents/superagents/internal/storetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, opts storetest.Options) func() sa.Store {
		dir := t.TempDir()
		var options []sqlite.Option
		if opts.NewID != nil {
			options = append(options, sqlite.WithIDGenerator(opts.NewID))
		}
		return func() sa.Store {
			st, err := sqlite.OpenDir(context.Background(), dir, options...)
			if err != nil {
				t.Fatalf("open store: %v", err)
			}
			return st
		}
	})
}

func openTemp(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.OpenDir(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func user(text string) sa.Message {
	return sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart(text)}}
}

func count(t *testing.T, st *sqlite.Store, query string, args ...any) int {
	t.Helper()
	var n int
	if err := st.DB().QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// corrupt runs raw SQL with foreign keys off, to build states the Store
// never creates.
func corrupt(t *testing.T, st *sqlite.Store, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	conn, err := st.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, `PRAGMA foreign_keys = ON`) //nolint:errcheck
	for _, s := range stmts {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func TestCorruptLineageIsAnErrorNotAHang(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		setup func(t *testing.T, st *sqlite.Store, a, b string)
	}{
		{"parent cycle", func(t *testing.T, st *sqlite.Store, a, b string) {
			corrupt(t, st, `UPDATE sessions SET parent_id = '`+b+`', fork_message_id = 1 WHERE id = '`+a+`'`)
		}},
		{"missing parent", func(t *testing.T, st *sqlite.Store, a, b string) {
			corrupt(t, st, `DELETE FROM messages WHERE session_id = '`+a+`'`, `DELETE FROM sessions WHERE id = '`+a+`'`)
		}},
		{"unreadable parts", func(t *testing.T, st *sqlite.Store, a, b string) {
			corrupt(t, st, `UPDATE messages SET parts = '{not json' WHERE session_id = '`+a+`'`)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := openTemp(t)
			a, err := st.CreateSession(ctx, sa.NewSession{Messages: []sa.Message{user("Q1")}})
			if err != nil {
				t.Fatal(err)
			}
			b, err := st.Fork(ctx, a.ID, sa.ForkOptions{})
			if err != nil {
				t.Fatal(err)
			}
			tt.setup(t, st, a.ID, b.ID)
			done := make(chan error, 1)
			go func() {
				_, err := st.History(ctx, b.ID)
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, sa.ErrCorrupt) {
					t.Fatalf("History = %v, want ErrCorrupt", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("History did not return on corrupt lineage")
			}
		})
	}
}

func TestDeleteReclaimsRowsNoDescendantNeeds(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	a, _ := st.CreateSession(ctx, sa.NewSession{Messages: []sa.Message{user("A1"), user("A2")}})
	b, _ := st.Fork(ctx, a.ID, sa.ForkOptions{})
	if _, err := st.Append(ctx, a.ID, user("A3 after the fork")); err != nil {
		t.Fatal(err)
	}

	// A has a child: it is hidden, only its post-fork message is freed.
	if err := st.DeleteSession(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if n := count(t, st, `SELECT COUNT(*) FROM sessions WHERE id = ?`, a.ID); n != 1 {
		t.Fatal("a deleted parent with a child must keep its row")
	}
	if n := count(t, st, `SELECT COUNT(*) FROM messages WHERE session_id = ?`, a.ID); n != 2 {
		t.Fatalf("deleted parent keeps %d messages, want the 2 its child inherits", n)
	}
	// The last descendant goes: everything is reclaimed, up the chain.
	if err := st.DeleteSession(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if n := count(t, st, `SELECT COUNT(*) FROM sessions`); n != 0 {
		t.Fatalf("%d session rows left after deleting everything", n)
	}
	if n := count(t, st, `SELECT COUNT(*) FROM messages`); n != 0 {
		t.Fatalf("%d message rows left after deleting everything", n)
	}
	// Ids are never reused after reclaiming the newest rows.
	c, _ := st.CreateSession(ctx, sa.NewSession{Messages: []sa.Message{user("C1")}})
	hist, err := st.History(ctx, c.ID)
	if err != nil || hist[0].ID <= 3 {
		t.Fatalf("new message id %d after reclaiming ids 1..3: ids must never be reused (%v)", hist[0].ID, err)
	}
}

func TestForkWritesOneRow(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	msgs := make([]sa.Message, 1000)
	for i := range msgs {
		msgs[i] = user("some text")
	}
	a, err := st.CreateSession(ctx, sa.NewSession{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	sessions, messages := count(t, st, `SELECT COUNT(*) FROM sessions`), count(t, st, `SELECT COUNT(*) FROM messages`)
	if _, err := st.Fork(ctx, a.ID, sa.ForkOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := count(t, st, `SELECT COUNT(*) FROM sessions`); got != sessions+1 {
		t.Fatalf("fork added %d session rows, want 1", got-sessions)
	}
	if got := count(t, st, `SELECT COUNT(*) FROM messages`); got != messages {
		t.Fatalf("fork added %d message rows, want 0", got-messages)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("missing directory", func(t *testing.T) {
		_, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "no", "such", "dir", "x.db"))
		if err == nil || !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("Open in a missing directory = %v, want a not-exist error", err)
		}
	})
	t.Run("data dir is a file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := sqlite.OpenDir(ctx, file); err == nil {
			t.Fatal("OpenDir on a regular file succeeded")
		}
	})
	t.Run("not a database", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, sqlite.FileName), []byte("this is not sqlite, just text padding the header out"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := sqlite.OpenDir(ctx, dir); err == nil {
			t.Fatal("opening a file that is not a database succeeded")
		}
	})
}

// The data directory and the database files are private to their owner
// when the store makes them; what exists already keeps its mode.
func TestFileModes(t *testing.T) {
	ctx := context.Background()
	mode := func(path string) os.FileMode {
		t.Helper()
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return info.Mode().Perm()
	}
	open := func(dir string) {
		t.Helper()
		st, err := sqlite.OpenDir(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.CreateSession(ctx, sa.NewSession{Agent: "general"}); err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("made by the store", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		open(dir)
		if got := mode(dir); got != 0o700 {
			t.Errorf("data directory mode %v, want 0700", got)
		}
		if got := mode(filepath.Join(dir, sqlite.FileName)); got != 0o600 {
			t.Errorf("database mode %v, want 0600", got)
		}
	})
	t.Run("an existing directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "shared")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o755); err != nil { // whatever the umask
			t.Fatal(err)
		}
		open(dir)
		if got := mode(dir); got != 0o755 {
			t.Errorf("the existing directory's mode became %v, want it kept at 0755", got)
		}
		if got := mode(filepath.Join(dir, sqlite.FileName)); got != 0o600 {
			t.Errorf("database mode %v, want 0600", got)
		}
	})
	t.Run("an existing database", func(t *testing.T) {
		dir := t.TempDir()
		db := filepath.Join(dir, sqlite.FileName)
		open(dir)
		if err := os.Chmod(db, 0o640); err != nil {
			t.Fatal(err)
		}
		open(dir)
		if got := mode(db); got != 0o640 {
			t.Errorf("the existing database's mode became %v, want it kept at 0640", got)
		}
	})
}
