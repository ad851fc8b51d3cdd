package superagents

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
)

// LineageReader is what BuildHistory needs from a store. A store passes one
// bound to a single read transaction, so the history is a consistent
// snapshot. Deleted sessions must still be readable through it.
type LineageReader interface {
	// Link returns a session's parent ("" for a root) and fork point, or an
	// error wrapping ErrNotFound when there is no such session row.
	Link(ctx context.Context, sessionID string) (parentID string, forkMessageID int64, err error)
	// LastClear returns the id of the session's latest own clear message
	// whose id is at most upto, or 0 when there is none.
	LastClear(ctx context.Context, sessionID string, upto int64) (int64, error)
	// CountMessages returns how many of the session's own messages have
	// ids in (after, upto].
	CountMessages(ctx context.Context, sessionID string, after, upto int64) (int, error)
	// AppendMessages appends the session's own messages whose ids are in
	// (after, upto], in id order, to dst and returns the extended slice:
	// the first limit of them, or all if limit is 0.
	AppendMessages(ctx context.Context, dst []Message, sessionID string, after, upto int64, limit int) ([]Message, error)
}

// Unbounded is the upper bound of the session whose history is read: all
// of its own messages count. Parents are always bounded by their child's
// fork point, which may be 0 ("the parent had nothing yet").
const Unbounded int64 = math.MaxInt64

// Segment is the part of one session's own messages that an effective
// history includes: the messages with ids in (After, Upto].
type Segment struct {
	SessionID string
	After     int64
	Upto      int64
}

// PlanHistory returns the segments that make up the effective history of
// a session, oldest first. It walks from the session to its parent,
// grandparent and so on, each ancestor bounded by its child's fork point,
// and stops at the latest clear inside a bound or at the root.
//
// A parent cycle or a missing parent is reported as ErrCorrupt; the walk
// never loops.
func PlanHistory(ctx context.Context, r LineageReader, sessionID string) ([]Segment, error) {
	var segments []Segment
	seen := make(map[string]bool)
	id, upto := sessionID, Unbounded
	for {
		if seen[id] {
			return nil, fmt.Errorf("%w: session %s is its own ancestor (a parent cycle)", ErrCorrupt, id)
		}
		seen[id] = true
		parent, forkPoint, err := r.Link(ctx, id)
		if err != nil {
			if errors.Is(err, ErrNotFound) && id != sessionID {
				child := segments[len(segments)-1].SessionID
				return nil, fmt.Errorf("%w: parent %s of session %s is missing", ErrCorrupt, id, child)
			}
			return nil, fmt.Errorf("read session %s: %w", id, err)
		}
		clearID, err := r.LastClear(ctx, id, upto)
		if err != nil {
			return nil, fmt.Errorf("find clear in session %s: %w", id, err)
		}
		segments = append(segments, Segment{SessionID: id, After: clearID, Upto: upto})
		if clearID > 0 || parent == "" {
			break
		}
		id, upto = parent, forkPoint
	}
	slices.Reverse(segments)
	return segments, nil
}

// BuildHistory returns the effective history of a session: the segments of
// PlanHistory replayed forward, origin first. It is the only code that
// builds a history, so a live session and the same session read back after
// a restart are identical.
func BuildHistory(ctx context.Context, r LineageReader, sessionID string) ([]Message, error) {
	segments, err := PlanHistory(ctx, r, sessionID)
	if err != nil {
		return nil, err
	}
	// The segments are counted first, so that the history is allocated
	// once at its size and each segment read straight into it: long chains
	// are neither re-copied as the history grows nor read into a slice of
	// their own first.
	total := 0
	for _, seg := range segments {
		if seg.After >= seg.Upto {
			continue
		}
		n, err := r.CountMessages(ctx, seg.SessionID, seg.After, seg.Upto)
		if err != nil {
			return nil, fmt.Errorf("count messages of session %s: %w", seg.SessionID, err)
		}
		total += n
	}
	history := make([]Message, 0, total)
	for _, seg := range segments {
		if seg.After >= seg.Upto {
			continue
		}
		if history, err = r.AppendMessages(ctx, history, seg.SessionID, seg.After, seg.Upto, 0); err != nil {
			return nil, fmt.Errorf("read messages of session %s: %w", seg.SessionID, err)
		}
	}
	return history, nil
}

// StreamHistory hands the history BuildHistory returns to fn as it is
// read, in chunks of at most size messages, oldest first, so that a long
// history can be written out while the rest is read. Each chunk is a
// slice of its own, which fn may keep. An error of fn stops the reading
// and is returned.
func StreamHistory(ctx context.Context, r LineageReader, sessionID string, size int, fn func([]Message) error) error {
	if size <= 0 {
		return fmt.Errorf("%w: history chunks of %d messages", ErrInvalid, size)
	}
	segments, err := PlanHistory(ctx, r, sessionID)
	if err != nil {
		return err
	}
	for _, seg := range segments {
		for after := seg.After; after < seg.Upto; {
			chunk, err := r.AppendMessages(ctx, make([]Message, 0, size), seg.SessionID, after, seg.Upto, size)
			if err != nil {
				return fmt.Errorf("read messages of session %s: %w", seg.SessionID, err)
			}
			if len(chunk) == 0 {
				break
			}
			if err := fn(chunk); err != nil {
				return err
			}
			if len(chunk) < size {
				break
			}
			after = chunk[len(chunk)-1].ID
		}
	}
	return nil
}

// MessageMatch selects messages by kind or role: a message matches when
// its kind is one of Kinds or its role one of Roles. The zero value
// matches nothing.
type MessageMatch struct {
	Kinds []Kind
	Roles []Role
}

// Matches reports whether m matches.
func (mm MessageMatch) Matches(m Message) bool {
	return slices.Contains(mm.Kinds, m.Kind) || slices.Contains(mm.Roles, m.Role)
}

// LatestReader is a LineageReader that can also find the newest matching
// message of one session's own messages, without reading the others.
type LatestReader interface {
	LineageReader
	// Latest returns the newest of the session's own messages with an id
	// in (after, upto] that matches, and false when none does. match is
	// never the zero value.
	Latest(ctx context.Context, sessionID string, after, upto int64, match MessageMatch) (Message, bool, error)
}

// LatestInHistory returns the newest message of a session's effective
// history that matches: the last match in BuildHistory's result, found
// from the newest segment back, so that a long history is not read to
// learn what its end holds.
func LatestInHistory(ctx context.Context, r LatestReader, sessionID string, match MessageMatch) (Message, bool, error) {
	segments, err := PlanHistory(ctx, r, sessionID)
	if err != nil || len(match.Kinds)+len(match.Roles) == 0 {
		return Message{}, false, err
	}
	for _, seg := range slices.Backward(segments) {
		if seg.After >= seg.Upto {
			continue
		}
		m, ok, err := r.Latest(ctx, seg.SessionID, seg.After, seg.Upto, match)
		if err != nil {
			return Message{}, false, fmt.Errorf("read messages of session %s: %w", seg.SessionID, err)
		}
		if ok {
			return m, true, nil
		}
	}
	return Message{}, false, nil
}
