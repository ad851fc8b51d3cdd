package tools

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// headTail is an io.Writer that keeps the beginning and the end of what
// is written, in bounded memory however much that is, and renders it
// capped to a number of characters with the middle cut out.
type headTail struct {
	limit     int // characters kept: limit/2 of the head, the rest of the tail
	head      []byte
	headCap   int
	tail      []byte
	tailCap   int
	chars     int64 // characters written (UTF-8 lead bytes and ASCII)
	dropped   bool  // bytes between head and tail were discarded
	headChars int
}

func newHeadTail(limit int) *headTail {
	headChars := limit / 2
	return &headTail{
		limit:     limit,
		headChars: headChars,
		headCap:   headChars * utf8.UTFMax,
		tailCap:   (limit - headChars) * utf8.UTFMax,
	}
}

func (h *headTail) Write(p []byte) (int, error) {
	n := len(p)
	for _, b := range p {
		if !utf8.RuneStart(b) {
			continue
		}
		h.chars++
	}
	if room := h.headCap - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if len(p) >= h.tailCap {
		h.dropped = h.dropped || len(h.tail) > 0 || len(p) > h.tailCap
		h.tail = append(h.tail[:0], p[len(p)-h.tailCap:]...)
		return n, nil
	}
	h.tail = append(h.tail, p...)
	if len(h.tail) > 2*h.tailCap {
		// Trim now and then, not on every write: amortized O(1) per byte.
		h.tail = append(h.tail[:0], h.tail[len(h.tail)-h.tailCap:]...)
		h.dropped = true
	}
	return n, nil
}

// String returns everything written when it fits in the limit, and
// otherwise its head and tail around a note of how many characters were
// cut. The result is valid UTF-8.
func (h *headTail) String() string {
	if h.chars <= int64(h.limit) && !h.dropped {
		return strings.ToValidUTF8(string(h.head)+string(h.tail), "\uFFFD")
	}
	var head, tail string
	if h.dropped {
		head = firstChars(string(h.head), h.headChars)
		tail = lastChars(string(h.tail), h.limit-h.headChars)
	} else {
		all := string(h.head) + string(h.tail)
		head = firstChars(all, h.headChars)
		tail = lastChars(all[len(head):], h.limit-h.headChars)
	}
	cut := max(0, h.chars-int64(utf8.RuneCountInString(head))-int64(utf8.RuneCountInString(tail)))
	return fmt.Sprintf("%s\n[... %d characters cut from the middle of the output ...]\n%s",
		strings.ToValidUTF8(head, "\uFFFD"), cut, strings.ToValidUTF8(tail, "\uFFFD"))
}

// firstChars returns the longest prefix of s with at most n characters.
func firstChars(s string, n int) string {
	i := 0
	for count := 0; i < len(s) && count < n; count++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

// lastChars returns the longest suffix of s with at most n characters,
// starting at a character boundary.
func lastChars(s string, n int) string {
	i := len(s)
	for count := 0; i > 0 && count < n; count++ {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
