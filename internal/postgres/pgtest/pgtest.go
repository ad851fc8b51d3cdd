// Package pgtest gives tests a PostgreSQL database of their own: a fresh
// schema on the server that SUPERAGENTS_TEST_DATABASE_URL names, dropped
// when the test ends, so tests and packages can run in parallel on one
// server. scripts/with-postgres (run by scripts/test) starts a throwaway
// server and sets the variable.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Environment variables the tests read.
const (
	// URLVar names the server tests may use (they create and drop schemas).
	URLVar = "SUPERAGENTS_TEST_DATABASE_URL"
	// RequireVar, set to 1, makes a missing URL fail the tests instead of
	// skipping them.
	RequireVar = "SUPERAGENTS_REQUIRE_POSTGRES"
)

// ServerURL returns the test server's URL, or skips the test (fails it
// when SUPERAGENTS_REQUIRE_POSTGRES=1) when none is given.
func ServerURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(URLVar)
	if u == "" {
		if os.Getenv(RequireVar) == "1" {
			t.Fatalf("%s=1 but %s is not set", RequireVar, URLVar)
		}
		t.Skipf("no PostgreSQL to test against: set %s (scripts/test starts a throwaway server)", URLVar)
	}
	return u
}

// URL creates an empty schema for the test and returns a URL whose
// connections use it (search_path). The schema is dropped when the test
// ends.
func URL(t testing.TB) string {
	t.Helper()
	server := ServerURL(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "test_" + hex.EncodeToString(b[:])
	exec(t, server, `CREATE SCHEMA `+schema)
	t.Cleanup(func() { exec(t, server, `DROP SCHEMA `+schema+` CASCADE`) })
	return WithSearchPath(t, server, schema)
}

// WithSearchPath returns server's URL with its search_path set to schema.
func WithSearchPath(t testing.TB, server, schema string) string {
	t.Helper()
	u, err := url.Parse(server)
	if err != nil || !strings.HasPrefix(u.Scheme, "postgres") {
		t.Fatalf("%s must be a postgres:// URL", URLVar)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func exec(t testing.TB, server, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatalf("connect to the test server: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
