package postgres_test

import (
	"context"
	"sync"
	"testing"

	"github.com/superagents/superagents/internal/postgres"
	"github.com/superagents/superagents/internal/postgres/pgtest"
)

// TestRiverSchemaTogether opens several stores at once on an empty schema:
// River's tables are created once, under the migration lock, next to
// ours, and a store opened later finds nothing to do.
func TestRiverSchemaTogether(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	const nodes = 4
	var wg sync.WaitGroup
	errs := make([]error, nodes)
	for i := range nodes {
		wg.Go(func() {
			s, err := postgres.Open(ctx, url)
			if err == nil {
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
	}
	s, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	version, err := s.RiverVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if version < 6 { // river_job as River 0.51 works it
		t.Fatalf("River schema at version %d", version)
	}
	var jobs int
	if err := s.Pool().QueryRow(ctx, `SELECT COUNT(*) FROM river_job`).Scan(&jobs); err != nil {
		t.Fatalf("river_job: %v", err)
	}
	var applied, distinct int
	err = s.Pool().QueryRow(ctx, `SELECT COUNT(*), COUNT(DISTINCT version) FROM river_migration`).Scan(&applied, &distinct)
	if err != nil {
		t.Fatal(err)
	}
	if applied != distinct || applied != version {
		t.Fatalf("River migrations: %d rows, %d distinct, version %d", applied, distinct, version)
	}
}
