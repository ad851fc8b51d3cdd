package postgres_test

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/postgres"
	"github.com/superagents/superagents/internal/postgres/pgtest"
	"github.com/superagents/superagents/internal/storetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, opts storetest.Options) func() sa.Store {
		url := pgtest.URL(t)
		var options []postgres.Option
		if opts.NewID != nil {
			options = append(options, postgres.WithIDGenerator(opts.NewID))
		}
		return func() sa.Store {
			st, err := postgres.Open(context.Background(), url, options...)
			if err != nil {
				t.Fatalf("open store: %v", err)
			}
			return st
		}
	})
}

// openTemp opens a store on a schema of its own, closed when the test ends.
func openTemp(t testing.TB) *postgres.Store {
	t.Helper()
	st, err := postgres.Open(context.Background(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
