package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/postgres"
	"github.com/superagents/superagents/internal/sqlite"
)

// EnvDatabaseURL names the PostgreSQL database to use instead of the
// SQLite file, unless --database is given.
const EnvDatabaseURL = "SUPERAGENTS_DATABASE_URL"

// databaseURL applies the precedence --database → SUPERAGENTS_DATABASE_URL
// → database.url in the configuration; "" means the SQLite file in the
// data directory.
func (a *app) databaseURL() (string, error) {
	check := func(url, origin string) (string, error) {
		if !postgres.IsURL(url) {
			return "", usagef("%s: want a postgres:// URL", origin)
		}
		return url, nil
	}
	if a.database != "" {
		return check(a.database, "--database")
	}
	if url := a.env.Getenv(EnvDatabaseURL); url != "" {
		return check(url, EnvDatabaseURL)
	}
	cfg, err := a.loadConfig("")
	if err != nil {
		return "", err
	}
	return cfg.Database.URL, nil
}

// openConfiguredStore opens the store the settings choose: PostgreSQL when
// a database URL is set, the SQLite file in the data directory otherwise.
// Either is migrated to the current schema on open.
func (a *app) openConfiguredStore(ctx context.Context) (sa.Store, error) {
	url, err := a.databaseURL()
	if err != nil {
		return nil, err
	}
	dir, dirErr := a.resolveDataDir()
	if url != "" {
		// Local files (the API token, logs, notices shown once) still
		// live in the data directory, which SQLite would have created.
		if dirErr == nil {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, fmt.Errorf("create data directory: %w", err)
			}
		}
		return postgres.Open(ctx, url) // its errors never show the password
	}
	if dirErr != nil {
		return nil, dirErr
	}
	st, err := sqlite.OpenDir(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	return st, nil
}

func (a *app) migrateCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Bring the database's schema up to date",
		Long: `Applies the schema migrations the database lacks and says where it stands.

Every command migrates the database when it opens it; run this to do it
ahead of time, for example before starting several servers on one
PostgreSQL database (--database, SUPERAGENTS_DATABASE_URL or database.url
in config.toml). Nodes that migrate at once wait for each other.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			url, err := a.databaseURL()
			if err != nil {
				return err
			}
			if url != "" {
				version, err := postgres.Migrate(cmd.Context(), url)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(a.env.Stdout, "PostgreSQL database %s: schema version %d\n", postgres.Redact(url), version)
				return err
			}
			if _, err := a.openStore(cmd.Context()); err != nil {
				return err
			}
			dir, err := a.resolveDataDir()
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(a.env.Stdout, "SQLite database %s/%s: up to date\n", dir, sqlite.FileName)
			return err
		},
	}
}
