package superagents

import (
	"crypto/rand"
	"fmt"
)

// Session (and task) ids are random strings of idAlphabet. They are shown
// shortened to their first ShortIDLength characters followed by "...", and
// any unique prefix of at least MinPrefixLength characters finds them.
const (
	idAlphabet      = "0123456789abcdefghijklmnopqrstuvwxyz"
	idLength        = 16 // 36^16 ≈ 2^82: collisions are not a concern
	ShortIDLength   = 6
	MinPrefixLength = 4
)

// NewID returns a new random id.
func NewID() string {
	// Rejection sampling keeps every character equally likely: 252 is the
	// largest multiple of 36 that fits in a byte.
	out := make([]byte, 0, idLength)
	var buf [idLength * 2]byte
	for len(out) < idLength {
		_, _ = rand.Read(buf[:]) // crypto/rand.Read never fails (Go 1.24+)
		for _, b := range buf {
			if b < 252 && len(out) < idLength {
				out = append(out, idAlphabet[b%36])
			}
		}
	}
	return string(out)
}

// ShortID returns the display form of an id: its first six characters and
// "...".
func ShortID(id string) string {
	if len(id) <= ShortIDLength {
		return id
	}
	return id[:ShortIDLength] + "..."
}

// CheckIDPrefix validates what a user typed to name a session or task: at
// least MinPrefixLength characters of the id alphabet. A trailing "..." (as
// ids are displayed) is accepted and ignored. It returns the bare prefix.
func CheckIDPrefix(ref string) (string, error) {
	prefix := ref
	if n := len(prefix); n > 3 && prefix[n-3:] == "..." {
		prefix = prefix[:n-3]
	}
	if prefix == "" {
		return "", fmt.Errorf("%w: empty id", ErrInvalid)
	}
	for i := 0; i < len(prefix); i++ {
		c := prefix[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z') {
			return "", fmt.Errorf("%w: id %q may contain only lowercase letters and digits", ErrInvalid, ref)
		}
	}
	if len(prefix) < MinPrefixLength {
		return "", fmt.Errorf("%w: id prefix %q is too short: give at least %d characters", ErrInvalid, ref, MinPrefixLength)
	}
	if len(prefix) > idLength {
		return "", fmt.Errorf("%w: id %q is longer than any id", ErrInvalid, ref)
	}
	return prefix, nil
}

// PrefixUpperBound returns the smallest string greater than every string
// that starts with prefix, for index range scans: prefix <= id < bound.
// Ids use only [0-9a-z], so appending '~' (after 'z' in ASCII) is enough.
func PrefixUpperBound(prefix string) string { return prefix + "~" }
