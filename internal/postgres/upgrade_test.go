package postgres

import (
	"context"
	"database/sql"
	"io/fs"
	"testing"

	"github.com/pressly/goose/v3"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/postgres/pgtest"
)

// TestUpgradeFromFirstSchema opens a database written at schema version 1
// (before turn leases, origins and host links): the rows written then
// read as sessions without an origin, and the new features work on them.
func TestUpgradeFromFirstSchema(t *testing.T) {
	ctx := context.Background()
	url, db := databaseAt(t, 1)
	// A session as version 1 wrote it.
	if _, err := db.ExecContext(ctx, `INSERT INTO sessions (id, agent, model, title, created_at) VALUES ('old', '', '', 'before', 1)`); err != nil {
		t.Fatal(err)
	}

	st, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	old, err := st.Session(ctx, "old")
	if err != nil || old.Title != "before" || old.Origin != "" {
		t.Fatalf("session written at version 1 = %+v, %v", old, err)
	}
	if _, err := st.AcquireTurn(ctx, sa.TurnLease{SessionID: "old", RunnerID: "r", Holder: "cli"}); err != nil {
		t.Fatal(err)
	}
	child, err := st.Fork(ctx, "old", sa.ForkOptions{Messages: []sa.Message{{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("hi")}}}})
	if err != nil || child.Origin != sa.OriginFork {
		t.Fatalf("fork of the old session = %+v, %v", child, err)
	}
}

// databaseAt returns a fresh test database migrated only up to version,
// as an older superagents left it, and a connection to it.
func databaseAt(t *testing.T, version int64) (string, *sql.DB) {
	t.Helper()
	url := pgtest.URL(t)
	// The "pgx" driver is registered by pgx/v5/stdlib, which the store imports.
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	files, err := fs.Sub(migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, files,
		goose.WithDisableGlobalRegistry(true), goose.WithTableName(migrationTable))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(context.Background(), version); err != nil {
		t.Fatal(err)
	}
	return url, db
}
