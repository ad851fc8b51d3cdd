package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/superagents/superagents/internal/postgres"
	"github.com/superagents/superagents/internal/postgres/pgtest"
)

// TestDatabaseSelection checks that --database, SUPERAGENTS_DATABASE_URL
// and database.url in the user's config.toml each put a command's data in
// PostgreSQL, and that the SQLite file is then never created.
func TestDatabaseSelection(t *testing.T) {
	for _, how := range []string{"flag", "env", "config"} {
		t.Run(how, func(t *testing.T) {
			url := pgtest.URL(t)
			h := newHarness(t)
			var args []string
			switch how {
			case "flag":
				args = []string{"--database", url}
			case "env":
				h.env["SUPERAGENTS_DATABASE_URL"] = url
			case "config":
				dir := filepath.Join(h.env["HOME"], ".config", "superagents")
				if err := os.MkdirAll(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[database]\nurl = \""+url+"\"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			out := h.ok("", append(args, "migrate")...)
			if !strings.HasPrefix(out, "PostgreSQL database postgres://") || strings.Contains(out, passwordOf(url)) {
				t.Errorf("migrate says %q", out)
			}
			id := h.ok(seedParent, append(args, "import", "-")...)
			st, err := postgres.Open(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			hist, err := st.History(context.Background(), id)
			if err != nil || len(hist) != 4 {
				t.Fatalf("the session in PostgreSQL has %d messages (%v), want 4", len(hist), err)
			}
			if list := h.ok("", append(args, "sessions")...); !strings.Contains(list, id[:6]) {
				t.Errorf("sessions lists %q, without %s", list, id[:6])
			}
			if _, err := os.Stat(filepath.Join(h.dataDir, "superagents.db")); err == nil {
				t.Errorf("the SQLite file was created too")
			}
			if fi, err := os.Stat(h.dataDir); err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("the data directory, for local files, is %v (%v), want mode 0700", fi, err)
			}
		})
	}
}

// TestDatabaseErrors checks that a setting that is not a PostgreSQL URL
// is refused, and that a failing database's error hides the password.
func TestDatabaseErrors(t *testing.T) {
	const secret = "pw-never-shown"
	for _, tt := range []struct {
		name string
		args []string
		env  string
		want string
	}{
		{"flag not a URL", []string{"--database", "mysql://u@h/db", "sessions"}, "", "--database: want a postgres:// URL"},
		{"env not a URL", []string{"sessions"}, "/tmp/db.sqlite", "SUPERAGENTS_DATABASE_URL: want a postgres:// URL"},
		{"cannot connect", []string{"--database", "postgres://u:" + secret + "@127.0.0.1:1/db?connect_timeout=5", "sessions"}, "", "postgres://u@127.0.0.1:1/db"},
		{"bad URL", []string{"--database", "postgres://u:" + secret + "@h:port/db", "migrate"}, "", "invalid port"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			if tt.env != "" {
				h.env["SUPERAGENTS_DATABASE_URL"] = tt.env
			}
			r := h.run(tt.args...)
			if r.code == 0 {
				t.Fatalf("exit 0, stdout %q", r.stdout)
			}
			if !strings.Contains(r.stderr, tt.want) {
				t.Errorf("stderr %q does not say %q", r.stderr, tt.want)
			}
			if strings.Contains(r.stderr+r.stdout, secret) {
				t.Errorf("the password shows: %q", r.stderr)
			}
		})
	}
}

func passwordOf(url string) string {
	if _, rest, ok := strings.Cut(url, "://"); ok {
		if userinfo, _, ok := strings.Cut(rest, "@"); ok {
			if _, pw, ok := strings.Cut(userinfo, ":"); ok {
				return pw
			}
		}
	}
	return "\x00no password"
}

// TestMigrateSQLite checks that without a database URL, migrate brings
// the SQLite file in the data directory up to date.
func TestMigrateSQLite(t *testing.T) {
	h := newHarness(t)
	out := h.ok("", "migrate")
	file := filepath.Join(h.dataDir, "superagents.db")
	if out != "SQLite database "+file+": up to date" {
		t.Errorf("migrate says %q", out)
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("no database file: %v", err)
	}
}
