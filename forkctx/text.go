package forkctx

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Characters are Unicode code points throughout. An invalid byte counts as
// one character and is shown as U+FFFD, so counting and cutting agree and
// the output is always valid UTF-8.

// validUTF8 returns s with every invalid byte replaced by U+FFFD.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range s { // ranging yields U+FFFD for each invalid byte
		b.WriteRune(r)
	}
	return b.String()
}

// headEnd returns the byte offset just after the first n characters of s.
func headEnd(s string, n int) int {
	if n <= 0 {
		return 0
	}
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// tailStart returns the byte offset where the last n characters of s begin.
// Decoding backwards finds the same boundaries as decoding forwards, valid
// UTF-8 or not.
func tailStart(s string, n int) int {
	end := len(s)
	for ; n > 0 && end > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:end])
		end -= size
	}
	return end
}

// cutHead keeps the first keep characters of s, which has total characters,
// and says how long the original was.
func cutHead(s string, keep, total int) string {
	var b strings.Builder
	head := validUTF8(s[:headEnd(s, keep)])
	b.Grow(len(head) + 64)
	b.WriteString(head)
	b.WriteString("\n[... truncated: kept the first ")
	b.WriteString(strconv.Itoa(keep))
	b.WriteString(" of ")
	b.WriteString(strconv.Itoa(total))
	b.WriteString(" characters]")
	return b.String()
}

// headTailSeparator says how many characters of how many were cut between
// a head and a tail.
func headTailSeparator(cut, total int) string {
	return "\n[... " + strconv.Itoa(cut) + " of " + strconv.Itoa(total) + " characters cut ...]\n"
}

// cutHeadTail keeps keep characters of s (total characters long): the first
// ratio of them and the rest from the end, with a separator between.
func cutHeadTail(s string, keep, total int, ratio float64) string {
	headChars := int(float64(keep) * ratio)
	tailChars := keep - headChars
	he := headEnd(s, headChars)
	ts := max(tailStart(s, tailChars), he)
	head, tail := validUTF8(s[:he]), validUTF8(s[ts:])
	var b strings.Builder
	b.Grow(len(head) + len(tail) + 64)
	b.WriteString(head)
	b.WriteString(headTailSeparator(total-keep, total))
	b.WriteString(tail)
	return b.String()
}

// fitHeadTail cuts s (total characters long) to at most limit characters,
// separator included, keeping its head and tail. It is the last resort
// that makes a budget a hard cap.
func fitHeadTail(s string, total, limit int, ratio float64) string {
	if total <= limit {
		return validUTF8(s)
	}
	// The separator names numbers no longer than total, so this is an upper
	// bound of its length.
	sepChars := utf8.RuneCountInString(headTailSeparator(total, total))
	if limit <= sepChars {
		return validUTF8(s[:headEnd(s, limit)])
	}
	return cutHeadTail(s, limit-sepChars, total, ratio)
}

// previewRunes returns s cut to limit characters, with "..." when cut.
func previewRunes(s string, limit int) string {
	if len(s) <= limit { // bytes <= limit implies characters <= limit
		return validUTF8(s)
	}
	end := headEnd(s, limit)
	if end == len(s) {
		return validUTF8(s)
	}
	return validUTF8(s[:end]) + "..."
}

// charCount returns the number of characters in s, as
// utf8.RuneCountInString does, but about three times faster on valid UTF-8
// that is not plain ASCII: it counts the bytes that start a character,
// eight at a time. Tool output is large, so this matters.
func charCount(s string) int {
	if !utf8.ValidString(s) {
		return utf8.RuneCountInString(s)
	}
	continuation := 0
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64([]byte(s[i : i+8])) // no copy: the compiler loads in place
		// A continuation byte is 10xxxxxx: high bit set, next bit clear.
		continuation += bits.OnesCount64(w & 0x8080808080808080 &^ (w << 1))
	}
	for ; i < len(s); i++ {
		if s[i]&0xC0 == 0x80 {
			continuation++
		}
	}
	return len(s) - continuation
}

// patternSet finds whether a text contains any of several patterns in one
// pass (the Wu-Manber algorithm with two-byte blocks): a window as long as
// the shortest pattern slides along the text, and the last two bytes of the
// window say how far it can jump without skipping a match. On text where
// the patterns are rare it reads about one byte in three, where a search
// per pattern would read every byte once per pattern.
type patternSet struct {
	patterns []string
	// window is the length of the shortest pattern (at most 255); when it
	// is below 2 the set falls back to one search per pattern.
	window int
	// shift[b] is how far the window may move when it ends with the two
	// bytes b; 0 means a pattern's prefix may end here: verify.
	shift *[1 << 16]uint8
	// candidates[b] are the patterns whose prefix of window bytes ends
	// with b.
	candidates map[uint16][]string
}

func newPatternSet(patterns []string) patternSet {
	ps := patternSet{patterns: patterns}
	if len(patterns) == 0 {
		return ps
	}
	ps.window = 255
	for _, p := range patterns {
		ps.window = min(ps.window, len(p))
	}
	if ps.window < 2 {
		return ps
	}
	ps.shift = new([1 << 16]uint8)
	for i := range ps.shift {
		ps.shift[i] = uint8(ps.window - 1)
	}
	ps.candidates = make(map[uint16][]string)
	for _, p := range patterns {
		prefix := p[:ps.window]
		for end := 1; end < ps.window; end++ {
			b := uint16(prefix[end-1])<<8 | uint16(prefix[end])
			ps.shift[b] = min(ps.shift[b], uint8(ps.window-1-end))
		}
		last := uint16(prefix[ps.window-2])<<8 | uint16(prefix[ps.window-1])
		ps.candidates[last] = append(ps.candidates[last], p)
	}
	return ps
}

// match reports whether s contains one of the patterns.
func (ps *patternSet) match(s string) bool {
	if ps.shift == nil {
		for _, p := range ps.patterns {
			if strings.Contains(s, p) {
				return true
			}
		}
		return false
	}
	for end := ps.window - 1; end < len(s); {
		b := uint16(s[end-1])<<8 | uint16(s[end])
		if shift := ps.shift[b]; shift > 0 {
			end += int(shift)
			continue
		}
		start := end - ps.window + 1
		for _, p := range ps.candidates[b] {
			if strings.HasPrefix(s[start:], p) {
				return true
			}
		}
		end++
	}
	return false
}
