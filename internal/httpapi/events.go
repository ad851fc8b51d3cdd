package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/tasktools"
)

// Event stream limits.
const (
	// snapshotTasks caps the ended tasks a snapshot carries (the active
	// ones are always all there); snapshotSessions caps its sessions.
	snapshotTasks    = 200
	snapshotSessions = 100
	// streamWriteTimeout drops a client that stops reading.
	streamWriteTimeout = 30 * time.Second
	// retryMillis tells clients how soon to reconnect.
	retryMillis = 2000
)

// snapshot is the first event of a stream that does not resume: where
// things stand. Its event id is the change it reflects, so a client that
// reconnects with it as Last-Event-ID gets every change after it.
type snapshot struct {
	// Reason is "connect", or "reset" when the Last-Event-ID sent could
	// not be resumed from (Note says why): the client should drop what it
	// had and start again from this snapshot.
	Reason      string                `json:"reason"`
	Note        string                `json:"note,omitempty"`
	LastEventID int64                 `json:"last_event_id"`
	Tasks       []tasktools.View      `json:"tasks"`
	Counts      map[sa.TaskStatus]int `json:"counts"`
	Sessions    []sa.SessionSummary   `json:"sessions"`
}

// events is GET /v1/events: a Server-Sent Events stream of the store's
// change log. Each event's id is its change id; a client that reconnects
// with Last-Event-ID gets exactly the changes after that one, with no gap
// and no repeat, or a new snapshot when the log no longer reaches back.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stopOnShutdown := context.AfterFunc(s.streams, cancel)
	defer stopOnShutdown()

	after, snap, err := s.streamStart(ctx, r.Header.Get("Last-Event-ID"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	stream, err := openEventStream(w, after, snap)
	if err != nil {
		return
	}
	s.sendChanges(ctx, stream, after)
}

// streamStart says where a stream begins: after the change the client's
// Last-Event-ID names, or, when it sent none or that one cannot be
// resumed from, after the newest change, with the snapshot to send first.
func (s *Server) streamStart(ctx context.Context, lastEventID string) (after int64, snap *snapshot, err error) {
	resumeFrom, resuming, err := parseLastEventID(lastEventID)
	if err != nil {
		return 0, nil, err
	}
	reset := ""
	if resuming {
		if reset, err = s.resumable(ctx, resumeFrom); err != nil {
			return 0, nil, err
		}
		if reset == "" {
			return resumeFrom, nil, nil
		}
	}
	// The log position first, then the state: a change between the two
	// is both in the snapshot and sent after it, never lost.
	if after, err = s.store.LastChangeID(ctx); err != nil {
		return 0, nil, err
	}
	if snap, err = s.snapshot(ctx, after); err != nil {
		return 0, nil, err
	}
	if reset != "" {
		snap.Reason, snap.Note = "reset", reset
	}
	return after, snap, nil
}

// openEventStream answers with an event stream and sends its opening:
// the reconnection delay, then the snapshot if there is one. The error
// is the client's: it did not take them.
func openEventStream(w http.ResponseWriter, after int64, snap *snapshot) (*eventWriter, error) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // proxies must not hold events back
	w.WriteHeader(http.StatusOK)
	stream := &eventWriter{rc: http.NewResponseController(w), out: bufio.NewWriterSize(w, 32<<10)}
	fmt.Fprintf(stream.out, "retry: %d\n\n", retryMillis)
	if snap != nil {
		stream.event(after, "snapshot", snap)
	}
	if err := stream.flush(); err != nil {
		return nil, err
	}
	return stream, nil
}

// sendChanges sends every change after the given one as it comes, and a
// heartbeat when none has come for a while, until the client leaves, the
// server shuts down, or the bus closes.
func (s *Server) sendChanges(ctx context.Context, stream *eventWriter, after int64) {
	cursor := s.rt.Events().From(after)
	// Events that are ready at once go out together: the stream is
	// flushed when the cursor has nothing more to give right now.
	ready, notReady := context.WithCancel(ctx)
	notReady()
	unflushed := false
	for {
		var change sa.Change
		var err error
		if unflushed {
			if change, err = cursor.Next(ready); err != nil {
				if err := stream.flush(); err != nil {
					return
				}
				unflushed = false
				continue
			}
		} else {
			wait, stopWait := context.WithTimeout(ctx, s.opts.Heartbeat)
			change, err = cursor.Next(wait)
			stopWait()
		}
		switch {
		case err == nil:
			stream.frame(s.frames.frame(change))
			unflushed = true
		case ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
			stream.event(-1, "heartbeat", map[string]any{"time": time.Now().UTC(), "last_event_id": cursor.After()})
			if err := stream.flush(); err != nil {
				return
			}
		default:
			return // the client left, the server is shutting down, or the bus closed
		}
	}
}

// parseLastEventID reads the Last-Event-ID header: a change id.
func parseLastEventID(raw string) (id int64, ok bool, err error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return 0, false, nil
	}
	id, err = strconv.ParseInt(raw, 10, 64)
	if err != nil || id < 0 {
		return 0, false, badField("Last-Event-ID", "must be the id of an event this stream sent (a whole number), not %q", raw)
	}
	return id, true, nil
}

// resumable says why a stream cannot resume after change id ("" when it
// can): the log was pruned past it, or it is newer than the log (another
// data directory, or a store that was reset).
func (s *Server) resumable(ctx context.Context, id int64) (string, error) {
	last, err := s.store.LastChangeID(ctx)
	if err != nil {
		return "", err
	}
	switch {
	case id > last:
		return fmt.Sprintf("event %d is newer than the newest change (%d): this server's store does not hold it", id, last), nil
	case id == last:
		return "", nil
	}
	// The log is pruned from its oldest end: it still reaches back when
	// change id itself (or, for 0, the very first change) is kept.
	first, err := s.store.Changes(ctx, max(id-1, 0), 1)
	if err != nil {
		return "", err
	}
	if len(first) == 0 || first[0].ID > max(id, 1) {
		return fmt.Sprintf("the change log no longer reaches back to event %d: changes were missed, so this is a fresh snapshot", id), nil
	}
	return "", nil
}

// snapshot reads where things stand: the active tasks and the newest
// others, the task counts, and the newest sessions.
func (s *Server) snapshot(ctx context.Context, after int64) (*snapshot, error) {
	active, err := s.store.ListTasks(ctx, sa.TaskFilter{Active: true, IncludeCleared: true})
	if err != nil {
		return nil, err
	}
	recent, err := s.store.ListTasks(ctx, sa.TaskFilter{Limit: snapshotTasks, IncludeCleared: true})
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(active))
	for _, t := range active {
		seen[t.ID] = true
	}
	for _, t := range recent {
		if !seen[t.ID] {
			active = append(active, t)
		}
	}
	stats, err := s.store.TaskStats(ctx, sa.TaskFilter{IncludeCleared: true})
	if err != nil {
		return nil, err
	}
	sessions, err := s.store.ListSessions(ctx, sa.SessionFilter{Limit: snapshotSessions})
	if err != nil {
		return nil, err
	}
	if sessions == nil {
		sessions = []sa.SessionSummary{}
	}
	return &snapshot{Reason: "connect", LastEventID: after, Tasks: s.withQuestions(ctx, viewTasks(active)), Counts: byStatus(stats.ByStatus), Sessions: sessions}, nil
}

// frameCache keeps recent changes as encoded events: every stream sends
// the same bytes, so a change is encoded once, not once per client.
type frameCache struct {
	mu   sync.Mutex
	byID map[int64][]byte
}

// frameCacheSize bounds the cache; when full it starts again empty.
const frameCacheSize = 8192

func (c *frameCache) frame(ch sa.Change) []byte {
	c.mu.Lock()
	f, ok := c.byID[ch.ID]
	c.mu.Unlock()
	if ok {
		return f
	}
	var buf bytes.Buffer
	w := &eventWriter{out: bufio.NewWriter(&buf)}
	w.event(ch.ID, string(ch.Kind), ch)
	if w.err != nil || w.out.Flush() != nil {
		return nil // a change that does not encode (never: it came from JSON) is left out
	}
	f = buf.Bytes()
	c.mu.Lock()
	if c.byID == nil || len(c.byID) >= frameCacheSize {
		c.byID = make(map[int64][]byte, frameCacheSize)
	}
	c.byID[ch.ID] = f
	c.mu.Unlock()
	return f
}

// eventWriter writes Server-Sent Events and flushes them out, dropping a
// client that does not take them within streamWriteTimeout.
type eventWriter struct {
	rc  *http.ResponseController
	out *bufio.Writer
	err error
}

// event writes one event; a negative id writes none (the client keeps
// its last).
// The data is one line of JSON: encoding/json never writes a newline
// inside a value.
func (e *eventWriter) event(id int64, name string, data any) {
	raw, err := json.Marshal(data)
	if err != nil {
		e.err = err
		return
	}
	if id >= 0 {
		fmt.Fprintf(e.out, "id: %d\n", id)
	}
	fmt.Fprintf(e.out, "event: %s\ndata: %s\n\n", name, raw)
}

// frame writes an encoded event.
func (e *eventWriter) frame(f []byte) {
	_, _ = e.out.Write(f) // an error shows at the next flush
}

func (e *eventWriter) flush() error {
	if e.err != nil {
		return e.err
	}
	_ = e.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	if err := e.out.Flush(); err != nil {
		return err
	}
	return e.rc.Flush()
}
