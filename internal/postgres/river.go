package postgres

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// River, the job queue that runs tasks on any node, keeps its tables
// (river_job, river_leader...) in the store's schema. Its migrations are
// River's own; they are applied with ours, under the same lock.

func riverMigrator(pool *pgxpool.Pool, schema string) (*rivermigrate.Migrator[pgx.Tx], error) {
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{
		Schema: schema, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, fmt.Errorf("job queue migrations: %w", err)
	}
	return m, nil
}

// riverPending reports whether River's schema lacks migrations.
func riverPending(ctx context.Context, pool *pgxpool.Pool, schema string) (bool, error) {
	m, err := riverMigrator(pool, schema)
	if err != nil {
		return false, err
	}
	existing, err := m.ExistingVersions(ctx)
	if err != nil {
		return true, nil // no table yet, or unreadable: migrating says which
	}
	all := m.AllVersions()
	return len(existing) == 0 || existing[len(existing)-1].Version < all[len(all)-1].Version, nil
}

// migrateRiver brings River's schema up to date.
func migrateRiver(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	m, err := riverMigrator(pool, schema)
	if err != nil {
		return err
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate job queue schema: %w", err)
	}
	return nil
}

// RiverVersion is the version of River's schema in the store's schema.
func (s *Store) RiverVersion(ctx context.Context) (int, error) {
	m, err := riverMigrator(s.pool, s.schema)
	if err != nil {
		return 0, err
	}
	existing, err := m.ExistingVersions(ctx)
	if err != nil {
		return 0, fmt.Errorf("read job queue schema version: %w", err)
	}
	if len(existing) == 0 {
		return 0, nil
	}
	return existing[len(existing)-1].Version, nil
}
