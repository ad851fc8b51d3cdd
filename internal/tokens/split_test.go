package tokens

import (
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

var compiled sync.Map // pattern → *regexp2.Regexp

// patternPieces splits text with the pattern itself, by the regular
// expression engine tiktoken's Go port uses.
func patternPieces(t testing.TB, pattern, text string) []string {
	t.Helper()
	v, ok := compiled.Load(pattern)
	if !ok {
		c, err := regexp2.Compile(pattern, regexp2.None)
		if err != nil {
			t.Fatal(err)
		}
		v, _ = compiled.LoadOrStore(pattern, c)
	}
	re := v.(*regexp2.Regexp)
	runes := []rune(text)
	var pieces []string
	m, err := re.FindRunesMatch(runes)
	for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
		pieces = append(pieces, string(runes[m.Index:m.Index+m.Length]))
	}
	if err != nil {
		t.Fatal(err)
	}
	return pieces
}

func handPieces(piece func(string, int) int, text string) []string {
	var pieces []string
	for i := 0; i < len(text); {
		end := piece(text, i)
		pieces = append(pieces, text[i:end])
		i = end
	}
	return pieces
}

var splitters = []struct {
	encoding, pattern string
	piece             func(string, int) int
}{
	{O200KBase, o200kPattern, o200kPiece},
	{CL100KBase, cl100kPattern, cl100kPiece},
}

func checkSplit(t *testing.T, text string) {
	t.Helper()
	if !utf8.ValidString(text) {
		text = string([]rune(text)) // as count does
	}
	for _, sp := range splitters {
		want := patternPieces(t, sp.pattern, text)
		if got := handPieces(sp.piece, text); !slices.Equal(got, want) {
			t.Errorf("%s: pieces of %q:\n got %q\nwant %q", sp.encoding, text, got, want)
		}
	}
}

// The hand-written splits find the patterns' matches, piece by piece.
func TestSplitMatchesPattern(t *testing.T) {
	for _, text := range slices.Concat(referenceTexts, realTexts(t)) {
		checkSplit(t, text)
	}
}

// Random texts from runes of every class the patterns tell apart.
func TestSplitMatchesPatternOnRandomText(t *testing.T) {
	pool := []rune("aZ09 \t\n\r\v\f'sStTrReEvVmMlLdD/.,;!?_-()\"" +
		"ǅǈ" + // Lt
		"ʰˆـ" + // Lm
		"中あא" + // Lo
		"\u0301\u0308\u093f" + // Mn, Mc
		"ⅫⅪ½²٣" + // Nl, No, Nd
		"\u0085\u00a0\u1680\u2003\u2028\u2029\u202f\u3000\u200b\ufeff" + // spaces, and two that are not
		"éßÉſK😀\ufffd")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(24) {
			b.WriteRune(pool[rng.IntN(len(pool))])
		}
		checkSplit(t, b.String())
		if t.Failed() {
			return
		}
	}
}

func FuzzSplitMatchesPattern(f *testing.F) {
	for _, text := range referenceTexts {
		f.Add(text)
	}
	f.Fuzz(checkSplit)
}

// Long pieces are merged through a heap: the same merges, in the same
// order, as the look through all pairs that short ones get.
func TestLongPiecesMergeAlike(t *testing.T) {
	c, err := NewCounter(O200KBase)
	if err != nil {
		t.Fatal(err)
	}
	ranks := c.encoder.ranks
	rng := rand.New(rand.NewPCG(3, 4))
	for _, alphabet := range []string{"a", "ab", "abc", "aeiou", "thequickbrownfox", "日本語", "é"} {
		runes := []rune(alphabet)
		for range 20 {
			var b strings.Builder
			for range 1 + rng.IntN(1500) {
				b.WriteRune(runes[rng.IntN(len(runes))])
			}
			piece := b.String()
			if got, want := mergedCountLong(piece, ranks), mergedCount(piece, ranks); got != want {
				t.Fatalf("%d bytes of %q: %d parts through the heap, %d through the look", len(piece), alphabet, got, want)
			}
		}
	}
}
