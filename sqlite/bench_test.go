package sqlite_test

import (
	"context"
	"fmt"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/sqlite"
)

func openBench(b *testing.B) *sqlite.Store {
	b.Helper()
	st, err := sqlite.OpenDir(context.Background(), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// fill appends n short user/assistant messages to a session, in batches.
func fill(b *testing.B, st *sqlite.Store, id string, n int) {
	b.Helper()
	const batch = 1000
	for done := 0; done < n; done += batch {
		msgs := make([]sa.Message, min(batch, n-done))
		for i := range msgs {
			role := sa.RoleUser
			if i%2 == 1 {
				role = sa.RoleAssistant
			}
			msgs[i] = sa.Message{Role: role, Parts: []sa.Part{sa.TextPart(fmt.Sprintf("message %d with some ordinary text in it", done+i))}}
		}
		if _, err := st.Append(context.Background(), id, msgs...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFork measures one fork at growing parent histories: it must
// stay flat, since a fork writes one row whatever the history.
func BenchmarkFork(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("parent=%d", n), func(b *testing.B) {
			st := openBench(b)
			parent, err := st.CreateSession(context.Background(), sa.NewSession{})
			if err != nil {
				b.Fatal(err)
			}
			fill(b, st, parent.ID, n)
			b.ResetTimer()
			for b.Loop() {
				if _, err := st.Fork(context.Background(), parent.ID, sa.ForkOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkForkBytes reports how much the database grows per fork, after
// a checkpoint folds the write-ahead log into the main file.
func BenchmarkForkBytes(b *testing.B) {
	ctx := context.Background()
	st := openBench(b)
	parent, err := st.CreateSession(ctx, sa.NewSession{})
	if err != nil {
		b.Fatal(err)
	}
	fill(b, st, parent.ID, 10_000)
	size := func() int64 {
		if _, err := st.DB().Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			b.Fatal(err)
		}
		var pages, pageSize, free int64
		db := st.DB()
		if err := db.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
			b.Fatal(err)
		}
		if err := db.QueryRow(`PRAGMA page_size`).Scan(&pageSize); err != nil {
			b.Fatal(err)
		}
		if err := db.QueryRow(`PRAGMA freelist_count`).Scan(&free); err != nil {
			b.Fatal(err)
		}
		return (pages - free) * pageSize
	}
	const forks = 2000
	before := size()
	b.ResetTimer()
	for b.Loop() {
		for range forks {
			if _, err := st.Fork(ctx, parent.ID, sa.ForkOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(size()-before)/float64(forks*b.N), "bytes/fork")
}

// BenchmarkReplayChain reads the history of the last session of a chain
// of 100 forks holding 100,000 messages in all.
func BenchmarkReplayChain(b *testing.B) {
	ctx := context.Background()
	st := openBench(b)
	const depth, total = 100, 100_000
	s, err := st.CreateSession(ctx, sa.NewSession{})
	if err != nil {
		b.Fatal(err)
	}
	for level := range depth {
		fill(b, st, s.ID, total/depth)
		if level < depth-1 {
			if s, err = st.Fork(ctx, s.ID, sa.ForkOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for b.Loop() {
		hist, err := st.History(ctx, s.ID)
		if err != nil {
			b.Fatal(err)
		}
		if len(hist) != total {
			b.Fatalf("history has %d messages, want %d", len(hist), total)
		}
	}
	b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkAppend measures appending one message per transaction, and
// batches of 100 in one transaction.
func BenchmarkAppend(b *testing.B) {
	for _, batch := range []int{1, 100} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			ctx := context.Background()
			st := openBench(b)
			s, err := st.CreateSession(ctx, sa.NewSession{})
			if err != nil {
				b.Fatal(err)
			}
			msgs := make([]sa.Message, batch)
			for i := range msgs {
				msgs[i] = sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("a message of ordinary length for a chat turn")}}
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := st.Append(ctx, s.ID, msgs...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(batch)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}
