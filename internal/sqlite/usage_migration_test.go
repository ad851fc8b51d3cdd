package sqlite

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pressly/goose/v3"

	sa "github.com/superagents/superagents"
)

// migrationsOf opens the database at path without migrating it, with
// the schema's migrations, for a test to move it to a given version.
func migrationsOf(t *testing.T, path string) (*sql.DB, *goose.Provider) {
	t.Helper()
	db, err := sql.Open("sqlite", dsn(path, "immediate", false))
	if err != nil {
		t.Fatal(err)
	}
	files, err := fs.Sub(migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, files, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	return db, p
}

// openUpgraded opens a store written at schema version with stmts, as an
// older superagents left it: Open migrates it.
func openUpgraded(t *testing.T, version int64, stmts ...string) *Store {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	db, p := migrationsOf(t, path)
	if _, err := p.UpTo(ctx, version); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range stmts {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestUsageSumsFilledOnUpgrade: a store written before session_usage
// existed gets the sums of the messages it already holds.
func TestUsageSumsFilledOnUpgrade(t *testing.T) {
	st := openUpgraded(t, 5,
		`INSERT INTO sessions (id, created_at) VALUES ('s1', 1), ('s2', 1)`,
		`INSERT INTO messages (session_id, role, kind, parts, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, created_at) VALUES
			('s1', 'user', '', '[]', '', 0, 0, 0, 0, 1),
			('s1', 'assistant', '', '[]', 'a/x', 100, 10, 50, 5, 2),
			('s1', 'assistant', '', '[]', 'a/x', 1, 2, 3, 4, 3),
			('s1', 'assistant', '', '[]', 'b/y', 7, 0, 0, 0, 4),
			('s2', 'user', '', '[]', '', 0, 0, 0, 0, 5)`)
	got, err := st.UsageByModelOf(context.Background(), []string{"s1", "s2"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]sa.Usage{"s1": {
		"a/x": {InputTokens: 101, OutputTokens: 12, CacheReadTokens: 53, CacheWriteTokens: 9},
		"b/y": {InputTokens: 7},
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("usage after the upgrade (-want +got):\n%s", d)
	}
}
