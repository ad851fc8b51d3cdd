package superagents

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// FoldCase maps every character of s to one representative of the
// characters that are the same letter in another case (Unicode simple
// case folding: A and a, Ü and ü, Σ σ and ς, K k and the Kelvin sign),
// so that two texts that differ only in case fold to the same string.
// The representative is the orbit's smallest code point: upper case for
// ASCII letters. Invalid UTF-8 becomes U+FFFD. Task search matches the
// folded description against the folded search text, in every store.
func FoldCase(s string) string {
	ascii, lower := true, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
		if 'a' <= c && c <= 'z' {
			lower = true
		}
	}
	if ascii {
		if !lower {
			return s
		}
		return strings.ToUpper(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		b.WriteRune(FoldRune(r))
	}
	return b.String()
}

// FoldRune is the smallest code point of r's case-folding orbit.
func FoldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' {
			r -= 'a' - 'A'
		}
		return r
	}
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least
}
