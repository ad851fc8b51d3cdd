package tokens

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	tiktoken "github.com/pkoukk/tiktoken-go"

	"github.com/superagents/superagents/internal/tokens/internal/vocab"
)

// The counts are compared with github.com/pkoukk/tiktoken-go, a port of
// OpenAI's tiktoken, given the same embedded vocabularies.

// referenceLoader hands the reference library the embedded vocabularies;
// it names each by the address of its tiktoken file.
type referenceLoader struct{}

func (referenceLoader) LoadTiktokenBpe(file string) (map[string]int, error) {
	data, err := vocabularies.ReadFile("vocab/" + strings.TrimSuffix(path.Base(file), ".tiktoken") + ".vocab")
	if err != nil {
		return nil, err
	}
	return vocab.Decode(data)
}

// The library keeps its loader in a package variable: set it once.
var setReferenceLoader = sync.OnceFunc(func() { tiktoken.SetBpeLoader(referenceLoader{}) })

func reference(t testing.TB, encoding string) *tiktoken.Tiktoken {
	t.Helper()
	setReferenceLoader()
	ref, err := tiktoken.GetEncoding(encoding)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// referenceTexts are texts whose pieces take every branch of both
// patterns: contractions in either case, letters of each case class and
// marks, digits in runs longer than three, punctuation with and without
// a leading space and trailing newlines or slashes, runs of spaces before
// words and at the end, scripts without spaces, emoji, invalid UTF-8 and
// special-token markers (counted as text).
var referenceTexts = []string{
	"",
	"hello world",
	"Hello, world!",
	"I'm sure they'll say it's what we'd've DONE'S and YOU'RE 'Ll",
	"HTTPServer parseJSON McDonald ǅemal ǈubljana Ǉ x̃y̆z",
	"1234567 12 3.14159 ٣٤٥٦ ⅫⅪ ²³",
	"a  b   c    \n\n  \t x\r\n\r\n   ",
	"path/to/file.go:12:3 // comment\n/* block */ <a href=\"/x\">",
	"func main() {\n\tfmt.Println(\"hello, world\")\n}\n",
	"日本語のテキストです。中文文本。한국어 텍스트",
	"emoji 😀👍🏽 family 👨‍👩‍👧 flags 🇩🇪",
	"bad \xff\xfe bytes \xc3 and \xe2\x82 end",
	"<|endoftext|> before <|endofprompt|> after",
	"    indented\n        more\n",
	"trailing spaces   ",
	"!!!???...,,, ---=== ___ @@@ ###",
	"Straße ÉCOLE naïve façade",
	strings.Repeat("a", 300) + " " + strings.Repeat("ab1", 100),
	"\u00a0non-breaking\u2003em space\u200bzero width",
}

// realTexts are this package's sources and the project's documentation.
func realTexts(t *testing.T) []string {
	var texts []string
	for _, pattern := range []string{"*.go", "../../README.md", "../../docs/*.md"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, string(data))
		}
	}
	return texts
}

func TestCountMatchesReference(t *testing.T) {
	texts := slices.Concat(referenceTexts, realTexts(t))
	for _, encoding := range Encodings() {
		t.Run(encoding, func(t *testing.T) {
			c, err := NewCounter(encoding)
			if err != nil {
				t.Fatal(err)
			}
			ref := reference(t, encoding)
			for _, text := range texts {
				if got, want := c.Count(text), len(ref.EncodeOrdinary(text)); got != want {
					t.Errorf("Count(%.60q) = %d, reference %d", text, got, want)
				}
			}
		})
	}
}

func FuzzCountMatchesReference(f *testing.F) {
	for _, text := range referenceTexts {
		f.Add(text)
	}
	counters := map[string]*Counter{}
	refs := map[string]*tiktoken.Tiktoken{}
	for _, encoding := range Encodings() {
		c, err := NewCounter(encoding)
		if err != nil {
			f.Fatal(err)
		}
		counters[encoding] = c
		refs[encoding] = reference(f, encoding)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, encoding := range Encodings() {
			if got, want := counters[encoding].Count(text), len(refs[encoding].EncodeOrdinary(text)); got != want {
				t.Fatalf("%s: Count(%q) = %d, reference %d", encoding, text, got, want)
			}
		}
	})
}

// Texts of long pieces (merged through the heap) count as the reference
// counts them.
func TestLongPiecesMatchReference(t *testing.T) {
	c, err := NewCounter(O200KBase)
	if err != nil {
		t.Fatal(err)
	}
	ref := reference(t, O200KBase)
	for _, text := range []string{
		strings.Repeat("a", 3000),
		strings.Repeat("ab", 1200) + " " + strings.Repeat("Zq", 900),
		strings.Repeat("Supercalifragilistic", 100),
		strings.Repeat("日本語", 400),
	} {
		if got, want := c.Count(text), len(ref.EncodeOrdinary(text)); got != want {
			t.Errorf("Count(%.40q…) = %d, reference %d", text, got, want)
		}
	}
}
