package storekit

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	sa "github.com/superagents/superagents"
)

// Storable reports whether a key (an id, a status) is text every store
// can hold and look up: valid UTF-8 without NUL (PostgreSQL's TEXT takes
// nothing else). Keys given by callers are checked with it on every
// store, so that a key one store refuses is refused by all.
func Storable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// CheckPage refuses a negative offset or limit of a listing.
func CheckPage(what string, offset, limit int) error {
	if offset < 0 || limit < 0 {
		return fmt.Errorf("%w: list %s: offset and limit cannot be negative", sa.ErrInvalid, what)
	}
	return nil
}

// ChangesLimit is how many changes a read of the log returns at most: the
// caller's limit, or 1000 when it names none.
func ChangesLimit(limit int) int {
	if limit <= 0 {
		return 1000
	}
	return limit
}

// CheckRunner refuses a runner without an id a store can hold.
func CheckRunner(r sa.Runner) error {
	if r.ID == "" || !Storable(r.ID) {
		return fmt.Errorf("%w: a runner needs an id (printable text)", sa.ErrInvalid)
	}
	return nil
}

// NewSession is the row of a root session about to be created.
func NewSession(id string, ns sa.NewSession, now time.Time) sa.Session {
	return sa.Session{ID: id, Agent: ns.Agent, Model: ns.Model, Title: ns.Title, Origin: ns.Origin, CreatedAt: now}
}

// Found turns the error of a scan of a row that may be missing into
// whether it was there; noRows is the driver's error for no row.
func Found(err, noRows error) (bool, error) {
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, noRows):
		return false, nil
	}
	return false, err
}

// ReadError is the error of reading one row of what (a session, a task)
// by id: nil, ErrNotFound when there is no such row, or the read's
// failure; noRows is the driver's error for no row.
func ReadError(err, noRows error, what, id string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, noRows):
		return fmt.Errorf("%s %s: %w", what, id, sa.ErrNotFound)
	}
	return fmt.Errorf("read %s %s: %w", what, id, err)
}
