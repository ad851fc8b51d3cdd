package postgres

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// IsURL reports whether a database setting names a PostgreSQL database (a
// postgres:// or postgresql:// URL).
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

var (
	kvPassword     = regexp.MustCompile(`((?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|\S*)`)
	hiddenPassword = "xxxxx"
)

// Redact returns a database URL or connection string fit for errors and
// logs: every password in it is replaced by xxxxx. A URL that does not
// parse is not shown at all.
func Redact(s string) string {
	if !IsURL(s) {
		return kvPassword.ReplaceAllString(s, "${1}"+hiddenPassword)
	}
	u, err := url.Parse(s)
	if err != nil {
		return "(a postgres URL that does not parse)"
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), hiddenPassword)
		}
	}
	q := u.Query()
	for _, key := range []string{"password", "sslpassword"} {
		if q.Has(key) {
			q.Set(key, hiddenPassword)
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// redactedParseError is pgx's complaint about a connection string without
// the connection string, and with any password it still holds masked.
func redactedParseError(err error, conn string) string {
	msg := err.Error()
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		if _, rest, ok := strings.Cut(msg, "`: "); ok {
			msg = rest
		} else {
			msg = "cannot parse the connection string"
		}
	}
	for _, pw := range passwords(conn) {
		msg = strings.ReplaceAll(msg, pw, hiddenPassword)
	}
	return msg
}

// passwords lists the passwords a connection string seems to hold, for
// masking.
func passwords(conn string) []string {
	var out []string
	if u, err := url.Parse(conn); err == nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			out = append(out, pw)
		}
		for _, key := range []string{"password", "sslpassword"} {
			if v := u.Query().Get(key); v != "" {
				out = append(out, v)
			}
		}
	}
	for _, m := range kvPassword.FindAllStringSubmatch(conn, -1) {
		if v := strings.Trim(m[2], "'"); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// describe names the database a configuration reaches, without secrets.
func describe(c *pgx.ConnConfig) string {
	return fmt.Sprintf("postgres://%s@%s/%s", url.PathEscape(c.User), hostPort(c.Host, c.Port), url.PathEscape(c.Database))
}

func hostPort(host string, port uint16) string {
	if strings.HasPrefix(host, "/") { // a socket directory
		return fmt.Sprintf("[%s]:%d", host, port)
	}
	if strings.Contains(host, ":") {
		return fmt.Sprintf("[%s]:%d", host, port)
	}
	return fmt.Sprintf("%s:%d", host, port)
}
