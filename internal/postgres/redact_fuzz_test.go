package postgres_test

import (
	"net/url"
	"testing"

	"github.com/superagents/superagents/internal/postgres"
)

// FuzzRedact checks that whatever a database setting holds, its redacted
// form keeps no password: a URL's user password and password parameters
// read back as xxxxx, and a connection string that parses as a URL
// neither before nor after keeps none.
func FuzzRedact(f *testing.F) {
	for _, seed := range []string{
		"postgres://u:pw@h:5432/db", "postgresql://u@h/db?password=pw", "host=h password=pw",
		"host=h password='a b' user=u", "postgres://u:p%zz@h/db", "postgres://:@/", "password=",
		"postgres://u:pw@h/db?sslpassword=k&password=p2",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := postgres.Redact(s)
		if !postgres.IsURL(s) {
			return
		}
		u, err := url.Parse(out)
		if err != nil {
			if out != "(a postgres URL that does not parse)" {
				t.Fatalf("Redact(%q) = %q, which does not parse", s, out)
			}
			return
		}
		if pw, ok := u.User.Password(); ok && pw != "xxxxx" {
			t.Fatalf("Redact(%q) = %q keeps the password %q", s, out, pw)
		}
		for _, key := range []string{"password", "sslpassword"} {
			for _, v := range u.Query()[key] {
				if v != "xxxxx" {
					t.Fatalf("Redact(%q) = %q keeps %s=%q", s, out, key, v)
				}
			}
		}
	})
}
