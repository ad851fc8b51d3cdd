package postgres_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/superagents/superagents/internal/postgres"
	"github.com/superagents/superagents/internal/postgres/pgtest"
)

// TestOpenTogether opens several stores at once on an empty schema: the
// migration lock lets one migrate while the others wait, and each
// migration is applied once.
func TestOpenTogether(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	const nodes = 5
	var wg sync.WaitGroup
	errs := make([]error, nodes)
	stores := make([]*postgres.Store, nodes)
	for i := range nodes {
		wg.Go(func() { stores[i], errs[i] = postgres.Open(ctx, url) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	var applied, distinct int
	err := stores[0].Pool().QueryRow(ctx, `SELECT COUNT(*), COUNT(DISTINCT version_id) FROM superagents_migrations
		WHERE version_id > 0`).Scan(&applied, &distinct)
	if err != nil {
		t.Fatal(err)
	}
	if applied == 0 || applied != distinct {
		t.Fatalf("%d migrations recorded, %d distinct", applied, distinct)
	}
	version, err := postgres.Migrate(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if version != int64(distinct) {
		t.Fatalf("Migrate says version %d, want %d", version, distinct)
	}
}

// TestOpenErrors checks that a bad URL or database is reported clearly,
// and that no password ever shows in the error.
func TestOpenErrors(t *testing.T) {
	server := pgtest.ServerURL(t)
	const secret = "s3cret-pw"
	for _, tt := range []struct {
		name, url, want string
	}{
		{"bad port", "postgres://user:" + secret + "@127.0.0.1:notaport/db", "open store"},
		{"bad option", "postgres://user:" + secret + "@127.0.0.1/db?connect_timeout=soon", "connect_timeout"},
		{"bad key=value", "host=127.0.0.1 password=" + secret + " port=x", "open store"},
		{"no such schema", pgtest.WithSearchPath(t, server, "no_such_schema_here"), "no schema"},
		{"wrong password", withPassword(t, server, secret), "open store postgres://"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, err := postgres.Open(context.Background(), tt.url)
			if err == nil {
				st.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			if testing.Verbose() {
				t.Log(err)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}

func withPassword(t *testing.T, server, password string) string {
	t.Helper()
	i := strings.Index(server, "://")
	at := strings.LastIndex(server, "@")
	if i < 0 || at < 0 {
		t.Skip("the test server's URL has no user part")
	}
	user, _, _ := strings.Cut(server[i+3:at], ":")
	return server[:i+3] + user + ":" + password + server[at:]
}

func TestRedact(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"postgres://u:pw@h:5432/db", "postgres://u:xxxxx@h:5432/db"},
		{"postgresql://u@h/db?sslmode=disable", "postgresql://u@h/db?sslmode=disable"},
		{"postgres://u@h/db?password=pw&sslpassword=k", "postgres://u@h/db?password=xxxxx&sslpassword=xxxxx"},
		{"host=h password=pw user=u", "host=h password=xxxxx user=u"},
		{"host=h password='p w' user=u", "host=h password=xxxxx user=u"},
		{"postgres://u:p%zz@h/db", "(a postgres URL that does not parse)"},
	} {
		if got := postgres.Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
