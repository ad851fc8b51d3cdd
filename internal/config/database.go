package config

import "strings"

// Database chooses the store. Empty URL: the embedded SQLite file in the
// data directory. A postgres:// URL: a PostgreSQL database several
// processes and machines can share.
type Database struct {
	// URL is the PostgreSQL connection URL. Its password may be given
	// here, but the environment (SUPERAGENTS_DATABASE_URL, or PGPASSWORD
	// with a URL that has none) keeps it out of files.
	URL string `toml:"url"`
}

// Validate reports whether the database setting can be used.
func (d Database) Validate() error {
	if d.URL == "" || strings.HasPrefix(d.URL, "postgres://") || strings.HasPrefix(d.URL, "postgresql://") {
		return nil
	}
	return &Error{Key: "database.url", Msg: "want a postgres:// URL (or nothing, for the SQLite file in the data directory)"}
}
