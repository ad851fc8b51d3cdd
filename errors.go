package superagents

import (
	"errors"
	"fmt"
	"strings"
)

// Errors callers test for with errors.Is.
var (
	// ErrNotFound: no session, message or task with that id (deleted
	// sessions are not found either).
	ErrNotFound = errors.New("not found")
	// ErrInvalid: the input itself is wrong (a bad role, empty text, a
	// malformed id...). Interfaces report it as a usage error.
	ErrInvalid = errors.New("invalid input")
	// ErrCorrupt: the stored data breaks an invariant (a parent cycle, a
	// missing parent). Nothing the caller can fix by retrying.
	ErrCorrupt = errors.New("corrupt store")
	// ErrConflict: the request is well-formed but the current state refuses
	// it (a task that cannot make that transition, for example).
	ErrConflict = errors.New("conflict")
	// ErrUnknownAgent: a session or request names an agent no profile
	// defines.
	ErrUnknownAgent = errors.New("unknown agent")
	// ErrLimit: a configured limit refuses the request (spawn depth).
	ErrLimit = errors.New("limit reached")
	// ErrExpired: the task's session was deleted, or the task cleared, so
	// it cannot go on.
	ErrExpired = errors.New("task session expired")
	// ErrClosed: the task manager is shutting down.
	ErrClosed = errors.New("task manager closed")
)

// AmbiguousIDError is returned when an id prefix matches more than one
// record. It lists the candidates so a person can pick; it never picks.
type AmbiguousIDError struct {
	Prefix     string
	Candidates []string
	// More is set when there were more candidates than listed.
	More bool
}

func (e *AmbiguousIDError) Error() string {
	list := strings.Join(e.Candidates, ", ")
	if e.More {
		list += ", ..."
	}
	return fmt.Sprintf("id prefix %q is ambiguous: it matches %s; give more characters", e.Prefix, list)
}

// Is makes errors.Is(err, ErrInvalid) true for an ambiguous prefix: the
// caller has to give a longer one.
func (e *AmbiguousIDError) Is(target error) bool { return target == ErrInvalid }

// NotFoundf is an ErrNotFound that reads as its own sentence ("no task
// with id zzzz"), without ErrNotFound's words appended.
func NotFoundf(format string, args ...any) error {
	return notFoundError(fmt.Sprintf(format, args...))
}

type notFoundError string

func (e notFoundError) Error() string        { return string(e) }
func (e notFoundError) Is(target error) bool { return target == ErrNotFound }

// FieldError is a request field that is wrong, with the reason (a
// sentence that names it): every way in words it the same, and those that
// can (the HTTP API) name the field too.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return e.Reason }

// Is makes errors.Is(err, ErrInvalid) true.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }
