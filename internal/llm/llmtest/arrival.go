package llmtest

import (
	"sync"
	"time"
)

// Arrival tells when the first request a test waits for reached the
// server: Expect says which, and the server's handler passes every
// request to Saw. The zero value is ready to use.
type Arrival struct {
	mu    sync.Mutex
	match func(Request) bool
	at    chan time.Time
}

// Expect returns the channel that gets the time the first request that
// match accepts is received, from now on (an earlier wait is dropped).
func (a *Arrival) Expect(match func(Request) bool) <-chan time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.match, a.at = match, make(chan time.Time, 1)
	return a.at
}

// Saw looks at a request the server received.
func (a *Arrival) Saw(r Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.match != nil && a.match(r) {
		a.at <- r.Received
		a.match = nil
	}
}
