package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/postgres"
	"github.com/superagents/superagents/internal/postgres/pgtest"
	"github.com/superagents/superagents/internal/storetest"
)

// opener opens stores on a schema of their own, with options.
func opener(opts ...postgres.Option) storetest.Opener {
	return openerWith("", opts...)
}

// openerWith adds URL parameters (such as pool_max_conns=20) to the
// store's URL.
func openerWith(params string, opts ...postgres.Option) storetest.Opener {
	return func(b *testing.B) sa.Store {
		b.Helper()
		url := pgtest.URL(b)
		if params != "" {
			url += "&" + params
		}
		st, err := postgres.Open(context.Background(), url, opts...)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		return st
	}
}

func BenchmarkFork(b *testing.B) { storetest.BenchFork(b, opener()) }

// BenchmarkForkBytes measures the tables and indexes of the store's
// schema, vacuumed first so that only live rows count.
func BenchmarkForkBytes(b *testing.B) {
	storetest.BenchForkBytes(b, opener(), func(b *testing.B, st sa.Store) int64 {
		pool := st.(*postgres.Store).Pool()
		ctx := context.Background()
		if _, err := pool.Exec(ctx, `VACUUM`); err != nil {
			b.Fatal(err)
		}
		var size int64
		err := pool.QueryRow(ctx, `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'`).Scan(&size)
		if err != nil {
			b.Fatal(err)
		}
		return size
	})
}

func BenchmarkReplayChain(b *testing.B) { storetest.BenchReplayChain(b, opener()) }

// BenchmarkLatestMessage analyzes the messages table once the history is
// written, as autovacuum does a little later: with the statistics of an
// empty table the planner expects a session to hold two messages, and
// reads them all.
func BenchmarkLatestMessage(b *testing.B) {
	var url string
	open := func(b *testing.B) sa.Store {
		url = pgtest.URL(b)
		st, err := postgres.Open(context.Background(), url)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		return st
	}
	storetest.BenchLatestMessage(b, open, func(b *testing.B) {
		conn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), `ANALYZE messages`); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkAppend(b *testing.B) { storetest.BenchAppend(b, opener()) }

func BenchmarkTaskLife(b *testing.B) { storetest.BenchTaskLife(b, opener()) }

func BenchmarkWaitingTaskMessages(b *testing.B) { storetest.BenchWaitingTaskMessages(b, opener()) }

// BenchmarkParallelAppend measures what the id lock costs concurrent
// writers: with it, the tail of every write transaction (from its first
// id to its commit) runs one at a time. The pool has a connection for
// every writer.
func BenchmarkParallelAppend(b *testing.B) {
	const pool = "pool_max_conns=32"
	b.Run("idlock", func(b *testing.B) { storetest.BenchParallelAppend(b, openerWith(pool)) })
	b.Run("nolock", func(b *testing.B) { storetest.BenchParallelAppend(b, openerWith(pool, postgres.WithoutIDLock())) })
}

// BenchmarkWakeAcrossStores measures, per op, a write through one store
// and the wake-up of another store's followers on the same database (two
// nodes): from the start of the write to the signal through LISTEN/NOTIFY.
func BenchmarkWakeAcrossStores(b *testing.B) {
	ctx := context.Background()
	stores := openStores(b, 2)
	writer, follower := stores[0], stores[1]
	<-follower.Changed() // its listener is up
	s, err := writer.CreateSession(ctx, sa.NewSession{})
	if err != nil {
		b.Fatal(err)
	}
	<-follower.Changed()
	msg := sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("ping")}}
	b.ResetTimer()
	for b.Loop() {
		if _, err := writer.Append(ctx, s.ID, msg); err != nil {
			b.Fatal(err)
		}
		<-follower.Changed()
	}
}
