package tokens

import (
	"unicode"
	"unicode/utf8"
)

// Text is split into pieces before their bytes are merged. tiktoken
// defines the split by a pattern (o200kPattern, cl100kPattern) that needs
// a backtracking regular-expression engine, whose matching took most of
// the time of counting; the functions below find the same pieces by
// hand, in one pass, and the tests check them against the patterns.
//
// Each returns the end of the piece that starts at i, i < len(s), in a
// text of valid UTF-8. Every rune starts some piece, so the pieces cover
// the text.

// class is what the patterns ask of a rune.
type class uint8

const (
	letter class = 1 << iota // \p{L}
	number                   // \p{N}
	space                    // \s: unicode.IsSpace, as the engine defines it
	// The two letter classes of o200k: a word is [upperish]*[lowerish]+
	// or [upperish]+[lowerish]*. Modifier letters, other letters and
	// marks are in both.
	upperish // \p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}
	lowerish // \p{Ll}\p{Lm}\p{Lo}\p{M}
)

func classOf(r rune) class {
	switch {
	case 'a' <= r && r <= 'z':
		return letter | lowerish
	case 'A' <= r && r <= 'Z':
		return letter | upperish
	case '0' <= r && r <= '9':
		return number
	case r == ' ' || '\t' <= r && r <= '\r':
		return space
	case r < utf8.RuneSelf:
		return 0
	}
	var c class
	switch {
	case unicode.IsLetter(r):
		c = letter
		switch {
		case unicode.Is(unicode.Lu, r), unicode.Is(unicode.Lt, r):
			c |= upperish
		case unicode.Is(unicode.Ll, r):
			c |= lowerish
		default: // Lm, Lo
			c |= upperish | lowerish
		}
	case unicode.Is(unicode.M, r):
		c = upperish | lowerish
	case unicode.IsNumber(r):
		c = number
	case unicode.IsSpace(r):
		c = space
	}
	return c
}

// at returns the rune at i and its class and size.
func at(s string, i int) (rune, class, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), classOf(rune(c)), 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return r, classOf(r), n
}

// run returns the end of the runes from i that have one of the classes.
func run(s string, i int, of class) int {
	for i < len(s) {
		_, c, n := at(s, i)
		if c&of == 0 {
			break
		}
		i += n
	}
	return i
}

// runWithout returns the end of the runes from i that have none of the
// classes.
func runWithout(s string, i int, of class) int {
	for i < len(s) {
		_, c, n := at(s, i)
		if c&of != 0 {
			break
		}
		i += n
	}
	return i
}

// isNewline is [\r\n].
func isNewline(r rune) bool { return r == '\r' || r == '\n' }

// o200kPiece is o200kPattern's next match.
func o200kPiece(s string, i int) int {
	r, c, n := at(s, i)
	// A word of letters and marks, with one leading rune that is not a
	// newline, letter or digit: [^\r\n\p{L}\p{N}]?[upperish]*[lowerish]+('s...)?
	// first, then [^\r\n\p{L}\p{N}]?[upperish]+[lowerish]*('s...)?.
	// The optional rune is tried taken, then not.
	first := i // where the word starts with the optional rune taken
	if c&(letter|number) == 0 && !isNewline(r) {
		first = i + n
	}
	for _, start := range [2]int{first, i} {
		if end := o200kLowerWord(s, start); end > start {
			return end
		}
	}
	for _, start := range [2]int{first, i} {
		if end := run(s, start, upperish); end > start {
			return contraction(s, run(s, end, lowerish))
		}
	}
	return notWord(s, i, c, "\r\n/")
}

// o200kLowerWord matches [upperish]*[lowerish]+('s...)? at start, or
// returns start. The greedy upperish run gives back a rune at a time
// until a lowerish rune follows.
func o200kLowerWord(s string, start int) int {
	for pos := run(s, start, upperish); ; {
		if pos < len(s) {
			if _, c, _ := at(s, pos); c&lowerish != 0 {
				return contraction(s, run(s, pos, lowerish))
			}
		}
		if pos == start {
			return start
		}
		_, n := utf8.DecodeLastRuneInString(s[start:pos])
		pos -= n
	}
}

// cl100kPiece is cl100kPattern's next match.
func cl100kPiece(s string, i int) int {
	if end := contraction(s, i); end > i {
		return end
	}
	r, c, n := at(s, i)
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if c&(letter|number) == 0 && !isNewline(r) && i+n < len(s) {
		if _, next, _ := at(s, i+n); next&letter != 0 {
			return run(s, i+n, letter)
		}
	}
	if c&letter != 0 {
		return run(s, i, letter)
	}
	return notWord(s, i, c, "\r\n")
}

// notWord matches the alternatives both patterns end with, at i, whose
// rune has class c: \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[trailing]*|\s*[\r\n]+|\s+(?!\S)|\s+.
func notWord(s string, i int, c class, trailing string) int {
	if c&number != 0 {
		return digits(s, i)
	}
	if end := punctuation(s, i, trailing); end > i {
		return end
	}
	return whitespace(s, i)
}

// contraction matches (?i:'s|'t|'re|'ve|'m|'ll|'d) at i, or returns i.
// The engine compares case-insensitively by unicode.ToLower.
func contraction(s string, i int) int {
	if i >= len(s) || s[i] != '\'' {
		return i
	}
	lower := func(j int) (rune, int) {
		if j >= len(s) {
			return 0, 0
		}
		r, n := utf8.DecodeRuneInString(s[j:])
		return unicode.ToLower(r), n
	}
	first, n1 := lower(i + 1)
	var want rune // the second letter, if there is one
	switch first {
	case 's', 't', 'm', 'd':
		return i + 1 + n1
	case 'r', 'v':
		want = 'e'
	case 'l':
		want = 'l'
	default:
		return i
	}
	if second, n2 := lower(i + 1 + n1); second == want {
		return i + 1 + n1 + n2
	}
	return i
}

// digits matches \p{N}{1,3} at i, whose rune is a number.
func digits(s string, i int) int {
	end := i
	for range 3 {
		if end >= len(s) {
			break
		}
		_, c, n := at(s, end)
		if c&number == 0 {
			break
		}
		end += n
	}
	return end
}

// punctuation matches ' ?[^\s\p{L}\p{N}]+[trailing]*' at i, or returns
// i.
func punctuation(s string, i int, trailing string) int {
	symbols := func(start int) int {
		end := runWithout(s, start, space|letter|number)
		if end == start {
			return start
		}
		for end < len(s) && indexByte(trailing, s[end]) {
			end++
		}
		return end
	}
	if s[i] == ' ' {
		if end := symbols(i + 1); end > i+1 {
			return end
		}
	}
	return symbols(i)
}

func indexByte(set string, b byte) bool {
	for i := range len(set) {
		if set[i] == b {
			return true
		}
	}
	return false
}

// whitespace matches \s*[\r\n]+|\s+(?!\S)|\s+ at i, whose rune is
// white space: up to the last newline of the run of white space if it
// holds one; else the whole run at the end of the text; else all of the
// run but its last rune, which goes with what follows, if that leaves
// any; else the one rune.
func whitespace(s string, i int) int {
	end, lastNewline, last := i, -1, i
	for end < len(s) {
		r, c, n := at(s, end)
		if c&space == 0 {
			break
		}
		if isNewline(r) {
			lastNewline = end
		}
		last = end
		end += n
	}
	switch {
	case end == i:
		// Not white space: every other rune starts a match of the
		// alternatives before. Take it alone, so that a text never
		// stops the count.
		_, n := utf8.DecodeRuneInString(s[i:])
		return i + n
	case lastNewline >= 0:
		return lastNewline + 1
	case end == len(s) || last == i:
		return end
	default:
		return last
	}
}
