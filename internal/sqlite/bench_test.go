package sqlite_test

import (
	"context"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/sqlite"
	"github.com/superagents/superagents/internal/storetest"
)

func openBench(b *testing.B) sa.Store {
	b.Helper()
	st, err := sqlite.OpenDir(context.Background(), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

func BenchmarkFork(b *testing.B) { storetest.BenchFork(b, openBench) }

// BenchmarkForkBytes measures the database's growth after a checkpoint
// folds the write-ahead log into the main file.
func BenchmarkForkBytes(b *testing.B) {
	storetest.BenchForkBytes(b, openBench, func(b *testing.B, st sa.Store) int64 {
		db := st.(*sqlite.Store).DB()
		if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			b.Fatal(err)
		}
		var pages, pageSize, free int64
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
	})
}

func BenchmarkReplayChain(b *testing.B) { storetest.BenchReplayChain(b, openBench) }

func BenchmarkLatestMessage(b *testing.B) { storetest.BenchLatestMessage(b, openBench, nil) }

func BenchmarkAppend(b *testing.B) { storetest.BenchAppend(b, openBench) }

func BenchmarkParallelAppend(b *testing.B) { storetest.BenchParallelAppend(b, openBench) }

func BenchmarkTurnLease(b *testing.B) { storetest.BenchTurnLease(b, openBench) }

func BenchmarkTaskLife(b *testing.B) { storetest.BenchTaskLife(b, openBench) }

func BenchmarkWaitingTaskMessages(b *testing.B) { storetest.BenchWaitingTaskMessages(b, openBench) }
