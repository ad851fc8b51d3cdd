package postgres

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	sa "github.com/superagents/superagents"
)

// openUpgraded opens a database written at schema version with stmts, as
// an older superagents left it: Open migrates it.
func openUpgraded(t *testing.T, version int64, stmts ...string) *Store {
	t.Helper()
	ctx := context.Background()
	url, db := databaseAt(t, version)
	for _, stmt := range stmts {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	st, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestUsageSumsFilledOnUpgrade: a database written before session_usage
// existed gets the sums of the messages it already holds, and keeps them
// as messages are added.
func TestUsageSumsFilledOnUpgrade(t *testing.T) {
	ctx := context.Background()
	st := openUpgraded(t, 3,
		`INSERT INTO sessions (id, agent, model, title, created_at) VALUES ('s1', '', '', '', 1), ('s2', '', '', '', 1)`,
		`INSERT INTO messages (session_id, role, kind, parts, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, created_at) VALUES
			('s1', 'user', '', '[]', ''::bytea, 0, 0, 0, 0, 1),
			('s1', 'assistant', '', '[]', 'a/x'::bytea, 100, 10, 50, 5, 2),
			('s1', 'assistant', '', '[]', 'a/x'::bytea, 1, 2, 3, 4, 3),
			('s1', 'assistant', '', '[]', 'b/y'::bytea, 7, 0, 0, 0, 4),
			('s2', 'user', '', '[]', ''::bytea, 0, 0, 0, 0, 5)`)
	if _, err := st.Append(ctx, "s2", sa.Message{Role: sa.RoleAssistant, Model: "b/y", Usage: sa.Usage{OutputTokens: 3}, Parts: []sa.Part{sa.TextPart("ok")}}); err != nil {
		t.Fatal(err)
	}
	got, err := st.UsageByModelOf(ctx, []string{"s1", "s2"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]sa.Usage{
		"s1": {"a/x": {InputTokens: 101, OutputTokens: 12, CacheReadTokens: 53, CacheWriteTokens: 9}, "b/y": {InputTokens: 7}},
		"s2": {"b/y": {OutputTokens: 3}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("usage after the upgrade (-want +got):\n%s", d)
	}
}
