package forkctx

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// maxWorkers caps the goroutines of one build, so that several forks at
// once do not flood the scheduler.
const maxWorkers = 8

// parallel calls fn(i) for every i in [0, n) on up to GOMAXPROCS
// goroutines and returns when all calls have. Items are handed out one by
// one in order, so a few large ones do not leave a worker idle. fn must
// write only to data of item i: results then do not depend on scheduling.
func parallel(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), maxWorkers, n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
}
