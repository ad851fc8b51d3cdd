// Package events follows the store's change log and lets any number of
// readers wait for what changes: the terminal's live status, blocking
// task waits, the HTTP event stream. Every state change is written to the
// log by the store in the same transaction as the change itself, so the
// bus adds no second source of truth: it only reads, in order.
//
// Readers pull with a Cursor, each at its own pace. A slow reader never
// holds the others back and never loses a change: what the bus no longer
// keeps in memory it reads from the store.
package events

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	sa "github.com/superagents/superagents"
)

// Defaults.
const (
	// DefaultPollInterval is how often the bus looks for changes other
	// processes wrote (its own process's writes wake it at once).
	DefaultPollInterval = 500 * time.Millisecond
	// DefaultRingSize is how many recent changes the bus keeps in memory
	// at least (up to twice as many).
	DefaultRingSize = 4096
	fetchBatch      = 500
)

// ErrClosed is returned by Next once the bus is closed.
var ErrClosed = errors.New("event bus closed")

// Options adjust a Bus.
type Options struct {
	PollInterval time.Duration
	RingSize     int
}

// Bus follows a store's change log.
type Bus struct {
	store sa.ChangeLog
	poll  time.Duration
	size  int

	mu       sync.Mutex
	base     int64       // the ring holds every change after base...
	ring     []sa.Change // ...in ID order
	last     int64       // the newest change read
	advanced chan struct{}
	closed   bool
	err      error // the last read error, for Err

	stop chan struct{}
	done chan struct{}
}

// New starts following the store from its newest change: readers can
// still start further back (see From), which the bus serves from the
// store.
func New(ctx context.Context, store sa.ChangeLog, opts Options) (*Bus, error) {
	last, err := store.LastChangeID(ctx)
	if err != nil {
		return nil, fmt.Errorf("event bus: %w", err)
	}
	b := &Bus{
		store:    store,
		poll:     opts.PollInterval,
		size:     opts.RingSize,
		base:     last,
		last:     last,
		advanced: make(chan struct{}),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	if b.poll <= 0 {
		b.poll = DefaultPollInterval
	}
	if b.size <= 0 {
		b.size = DefaultRingSize
	}
	go b.follow()
	return b, nil
}

// Close stops following; waiting readers get ErrClosed.
func (b *Bus) Close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	close(b.advanced)
	b.mu.Unlock()
	close(b.stop)
	<-b.done
}

// LastID returns the newest change the bus has read.
func (b *Bus) LastID() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last
}

// Err returns the last error reading the store, if the latest read failed.
func (b *Bus) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// follow reads new changes whenever the store signals one, and at the
// poll interval for other processes' writes.
func (b *Bus) follow() {
	defer close(b.done)
	var signal <-chan struct{}
	if n, ok := b.store.(sa.ChangeNotifier); ok {
		signal = n.Changed()
	}
	tick := time.NewTicker(b.poll)
	defer tick.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-signal:
		case <-tick.C:
		}
		b.readNew()
	}
}

// Sync reads whatever the store has written since the last read, now.
// Writers in this process call it when they need their own change seen
// before they go on; normally the store's signal does it.
func (b *Bus) Sync() { b.readNew() }

// readNew reads all changes after the newest one read.
func (b *Bus) readNew() {
	for {
		b.mu.Lock()
		after := b.last
		b.mu.Unlock()
		batch, err := b.store.Changes(context.Background(), after, fetchBatch)
		b.mu.Lock()
		b.err = err
		if b.last != after && !b.closed {
			b.mu.Unlock()
			continue // another read got there first: go on from its end
		}
		if err != nil || len(batch) == 0 || b.closed {
			b.mu.Unlock()
			return
		}
		b.ring = append(b.ring, batch...)
		// Let the ring grow to twice its size, then keep the newest half:
		// the copy is amortized over many reads.
		if len(b.ring) > 2*b.size {
			excess := len(b.ring) - b.size
			b.base = b.ring[excess-1].ID
			b.ring = append(make([]sa.Change, 0, 2*b.size), b.ring[excess:]...)
		}
		b.last = batch[len(batch)-1].ID
		close(b.advanced)
		b.advanced = make(chan struct{})
		b.mu.Unlock()
		if len(batch) < fetchBatch {
			return
		}
	}
}

// Cursor reads changes in order from a starting point.
type Cursor struct {
	bus     *Bus
	after   int64
	backlog []sa.Change // read from the store when the ring did not reach back
}

// From returns a cursor that yields the changes after the change with ID
// after (0: from the oldest the store keeps).
func (b *Bus) From(after int64) *Cursor { return &Cursor{bus: b, after: after} }

// Now returns a cursor that yields only changes newer than the newest
// read so far.
func (b *Bus) Now() *Cursor { return b.From(b.LastID()) }

// After returns the ID of the last change the cursor yielded (or its
// starting point).
func (c *Cursor) After() int64 { return c.after }

// Next returns the next change, waiting for it until ctx is done.
func (c *Cursor) Next(ctx context.Context) (sa.Change, error) {
	for {
		if len(c.backlog) > 0 {
			ch := c.backlog[0]
			c.backlog = c.backlog[1:]
			c.after = ch.ID
			return ch, nil
		}
		b := c.bus
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return sa.Change{}, ErrClosed
		}
		if c.after < b.last {
			if c.after >= b.base {
				i := sort.Search(len(b.ring), func(i int) bool { return b.ring[i].ID > c.after })
				ch := b.ring[i]
				b.mu.Unlock()
				c.after = ch.ID
				return ch, nil
			}
			b.mu.Unlock()
			// Behind what the ring keeps: read from the store.
			batch, err := b.store.Changes(ctx, c.after, fetchBatch)
			if err != nil {
				return sa.Change{}, fmt.Errorf("read changes: %w", err)
			}
			if len(batch) == 0 {
				// Pruned from the store too; jump to what the ring has.
				b.mu.Lock()
				c.after = b.base
				b.mu.Unlock()
				continue
			}
			c.backlog = batch
			continue
		}
		wait := b.advanced
		b.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return sa.Change{}, ctx.Err()
		}
	}
}

// NextMatching returns the next change for which keep is true.
func (c *Cursor) NextMatching(ctx context.Context, keep func(sa.Change) bool) (sa.Change, error) {
	for {
		ch, err := c.Next(ctx)
		if err != nil || keep(ch) {
			return ch, err
		}
	}
}
